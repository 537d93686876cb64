"""The answer of a mean matrix, its alternatives and the best response (also the GLR statistic).

For the answer ``a`` of ``mu`` the closure of ``Alt(mu)`` is the union of three kinds
of closed sets (our derivation for this model; derivation notes, "Alternatives"):
(A) a pair of ``a`` at or below the threshold, (B) an arm ``b`` feasible with mean
at least ``a``'s ("overtake", solved through one multiplier on the mean
constraint), (C) for an infeasible ``mu``, an arm made feasible. The best
response ``min_{lambda in cl Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij)`` is the
smallest of their costs; with sample counts as ``w`` and empirical means it is the
GLR statistic, so the kernels are compiled and callable every round from a stopping
rule (:mod:`gbai.algorithms.lma_glr`). Every divergence of
:mod:`gbai.limits.divergences` goes through the same kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from ..paper.model import MEAN_TOLERANCE, Instance
from .divergences import (
    BERNOULLI,
    GAUSSIAN,
    KINF,
    divergence_code,
    lower_point,
    pair_divergence,
    pair_laws,
    upper_point,
)
from .reward_laws import law_mean, law_variance

__all__ = [
    "KIND_BECOME_FEASIBLE", "KIND_BEST_INFEASIBLE", "KIND_NAMES", "KIND_OVERTAKE", "KIND_TIE", "BestResponse",
    "alternative_lambda", "alternative_values", "alternative_values_kernel", "alternatives_kernel", "answer_kernel",
    "best_response", "best_response_kernel", "best_response_laws_kernel", "overtake", "overtake_value_kernel",
    "solve_multiplier",
]

#: Kind codes of the alternatives (the kernels return the code, the API the name).
KIND_BEST_INFEASIBLE = 0  # (A)
KIND_OVERTAKE = 1  # (B)
KIND_BECOME_FEASIBLE = 2  # (C)
KIND_TIE = 3
KIND_NAMES = ("best-infeasible", "overtake", "become-feasible", "tie")

_ROOT_MAX_ITER = 200
_BRACKET_MAX_ITER = 200
#: The laws of the parametric codes: a compile-time constant, whose reference count costs nothing.
_NO_LAWS = np.zeros((3, 0, 0, 0))


@njit(cache=True)
def answer_kernel(means: np.ndarray, threshold: float) -> tuple[int, int]:
    """``(a, tie)``: the answer (-1 if infeasible) and a tied arm (-1 if none).

    As :class:`gbai.paper.model.Instance`: arm means within MEAN_TOLERANCE of the largest
    feasible mean are tied, and the answer is the lowest such index.
    """
    n, m = means.shape
    feasible = np.ones(n, dtype=np.bool_)
    arm_mean = np.zeros(n)
    best_mean = -math.inf
    for i in range(n):
        total = 0.0
        for j in range(m):
            if means[i, j] < threshold:
                feasible[i] = False
            total += means[i, j]
        arm_mean[i] = total / m
        if feasible[i] and arm_mean[i] > best_mean:
            best_mean = arm_mean[i]
    if best_mean == -math.inf:
        return -1, -1
    a = -1
    tie = -1
    for i in range(n):
        if feasible[i] and arm_mean[i] >= best_mean - MEAN_TOLERANCE:
            if a < 0:
                a = i
            elif tie < 0:
                tie = i
    return a, tie


@njit(cache=True)
def _law_variance(mu, code, laws, i, j):
    """The variance of the reward law of pair ``(i, j)``: ``mu (1 - mu)`` for Bernoulli."""
    if code == BERNOULLI:
        return mu * (1.0 - mu)
    return law_variance(laws, i, j, law_mean(laws, i, j))


@njit(cache=True)
def _to_threshold(means, threshold, weights, i, j, code, laws):
    """``w_ij d(mu_ij, th)``, the cost of moving pair ``(i, j)`` to the threshold; 0 for a zero weight."""
    if weights[i, j] == 0.0:
        return 0.0
    return weights[i, j] * pair_divergence(means[i, j], threshold, 1.0 - threshold, code, laws, i, j)


@njit(cache=True)
def _pair_cost(mu, value, value_c, w, code, laws, i, j):
    """``w d(mu, value)`` for pair ``(i, j)``, 0 for a zero weight."""
    if w == 0.0:
        return 0.0
    return w * pair_divergence(mu, value, value_c, code, laws, i, j)


#: What moves in :func:`solve_multiplier`: both rows; only the zero-weight pairs; only the answer's row.
BOTH_ROWS, FREE_PAIRS, ANSWER_ROW = 0, 1, 2


@njit(cache=True, inline="always")  # the multiplier iteration's innermost call
def _gap(means, weights, a, b, laws, threshold, eta, code, mode, target, x, y):
    """Fill ``x = x(eta)`` (and ``y = y(eta)``); return ``g(eta) = sum y - sum x`` and ``g'(eta)``.

    ``FREE_PAIRS``: only the zero-weight pairs move, as if they had weight 1.
    ``ANSWER_ROW``: ``sum y`` is ``target`` and ``y`` is left alone.
    """
    g = target if mode == ANSWER_ROW else 0.0
    dg = 0.0
    for j in range(means.shape[1]):
        if mode == FREE_PAIRS and weights[a, j] > 0.0:
            xj, dxj = means[a, j], 0.0
        else:
            weight = 1.0 if mode == FREE_PAIRS else weights[a, j]
            xj, _, dxj = lower_point(means[a, j], weight, eta, code, laws, a, j)
        x[j] = xj
        if mode == ANSWER_ROW:
            g -= xj
            dg -= dxj
            continue
        if mode == FREE_PAIRS and weights[b, j] > 0.0:
            yj, dyj = max(threshold, means[b, j]), 0.0
        else:
            weight = 1.0 if mode == FREE_PAIRS else weights[b, j]
            yj, _, dyj = upper_point(means[b, j], weight, eta, threshold, code, laws, b, j)
        y[j] = yj
        g += yj - xj
        dg += dyj - dxj
    return g, dg


@njit(cache=True)
def solve_multiplier(means: np.ndarray, weights: np.ndarray, a: int, b: int, laws: np.ndarray, threshold: float,
                     code: int, mode: int, target: float, tolerance: float, hi: float, guess: float, x: np.ndarray,
                     y: np.ndarray) -> float:
    """The multiplier ``eta > 0`` of the mean constraint: the root of the increasing ``g`` of :func:`_gap`.

    Needs ``g(0+) < 0``; fills ``x`` (and ``y``) at the returned ``eta``, where
    ``g >= 0`` (the alternative satisfies the mean constraint). ``hi`` is doubled
    until ``g(hi) >= 0``; then Newton from ``guess``, safeguarded by bisection
    (geometric on a wide bracket) when a step leaves the bracket or does not halve,
    until ``0 <= g <= tolerance`` or ``eta`` is resolved to 1e-15 relative; then
    ``eta`` moves right by a few ulps if ``g < 0``. A positive ``tolerance`` stops
    iterations whose points are only accurate to rounding (``K_inf``, nested roots).
    """
    lo = 0.0
    g_hi, _ = _gap(means, weights, a, b, laws, threshold, hi, code, mode, target, x, y)
    for _ in range(_BRACKET_MAX_ITER):
        if g_hi >= 0.0:
            break
        lo = hi
        hi *= 2.0
        g_hi, _ = _gap(means, weights, a, b, laws, threshold, hi, code, mode, target, x, y)
    eta = guess if lo < guess < hi else 0.5 * (lo + hi)
    previous_step = hi - lo
    g = 0.0
    dg = 0.0
    fresh = False  # x, y, g hold the values at the current eta
    for _ in range(_ROOT_MAX_ITER):
        g, dg = _gap(means, weights, a, b, laws, threshold, eta, code, mode, target, x, y)
        fresh = True
        if 0.0 <= g <= tolerance:
            break
        if g < 0.0:
            lo = eta
        else:
            hi = eta
        if hi - lo <= 1e-15 * hi:
            break
        if dg > 0.0 and abs(g) <= 1e-15 * eta * dg:
            break  # the Newton step is below the resolution of eta
        candidate = eta - g / dg if dg > 0.0 else -1.0
        step = abs(candidate - eta)
        if not (lo < candidate < hi) or step > 0.5 * previous_step:
            if lo > 0.0 and hi > 16.0 * lo:
                candidate = math.sqrt(lo * hi)
            else:
                candidate = 0.5 * (lo + hi)
            step = abs(candidate - eta)
        previous_step = step
        eta = candidate
        fresh = False
        if step <= 1e-15 * eta:
            break
    if not fresh:
        g, dg = _gap(means, weights, a, b, laws, threshold, eta, code, mode, target, x, y)
    if g < 0.0:
        # Doubling steps right until g >= 0; g(hi) >= 0 bounds them to 64.
        bump = max(-g / dg if dg > 0.0 else 0.0, 1e-16 * eta)
        for _ in range(64):
            trial = min(eta + bump, hi)
            g, dg = _gap(means, weights, a, b, laws, threshold, trial, code, mode, target, x, y)
            if g >= 0.0 or trial == hi:
                eta = trial
                break
            bump *= 2.0
    return eta


@njit(cache=True)
def overtake(means: np.ndarray, threshold: float, weights: np.ndarray, a: int, b: int, code: int, laws: np.ndarray,
             x: np.ndarray, y: np.ndarray) -> float:
    """Cost of alternative (B), arm ``b`` feasible with mean at least arm ``a``'s; fills ``x``, ``y``.

    ``x``, ``y`` receive the new attribute means of ``a`` and ``b``. The multiplier
    ``eta`` of the mean constraint is 0 when moving ``b``'s pairs up to the threshold,
    or the zero-weight pairs for free, closes the gap (the limit of positive weights
    ``eps -> 0`` picks the minimiser); otherwise it is the root of ``g``
    (derivation notes, "Overtake"). The cost is primal for the parametric
    divergences and the dual value at the final ``eta`` for ``K_inf``, a lower
    bound whatever the accuracy of its inner roots.
    """
    m = means.shape[1]
    # eta = 0: only the attributes of b below the threshold move, to th.
    base_cost = 0.0
    deficit = 0.0
    n_free = 0
    capacity = 0.0
    for j in range(m):
        x[j] = means[a, j]
        mu_b = means[b, j]
        if mu_b < threshold:
            base_cost += _to_threshold(means, threshold, weights, b, j, code, laws)
            y[j] = threshold
        else:
            y[j] = mu_b
        deficit += x[j] - y[j]
        if weights[a, j] == 0.0:
            n_free += 1
            capacity += math.inf if code == GAUSSIAN else x[j]
        if weights[b, j] == 0.0:
            n_free += 1
            capacity += math.inf if code == GAUSSIAN else 1.0 - y[j]
    if deficit <= 0.0:
        return base_cost
    # K_inf points carry rounding of the order of 1e-15 of the sums; the closed forms
    # of the other divergences are exact to a few ulps, and only g = 0 stops early.
    tolerance = 1e-15 * (x.sum() + y.sum()) if code == KINF else 0.0
    if capacity > deficit:
        # Still eta = 0: the zero-weight pairs share the gap as if they had weight 1.
        if code == GAUSSIAN:
            hi = 4.0 * deficit / n_free
        else:
            hi = 2.0 * n_free / (capacity - deficit)
        solve_multiplier(means, weights, a, b, laws, threshold, code, FREE_PAIRS, 0.0, tolerance, hi, -1.0, x, y)
        return base_cost
    if capacity == deficit:
        for j in range(m):
            if weights[a, j] == 0.0:
                x[j] = 0.0
            if weights[b, j] == 0.0:
                y[j] = 1.0
        return base_cost
    # eta > 0. Bracket: g(eta) >= M - 2 W / eta (Bernoulli); start: the local quadratic
    # model, x_j ~ mu_aj - eta v_aj / w_aj and y_j ~ mu_bj + eta v_bj / w_bj.
    slope = 0.0
    if code == GAUSSIAN:
        inv_sum = 0.0
        for j in range(m):
            inv_sum += 1.0 / (4.0 * weights[a, j])
            if means[b, j] >= threshold:
                slope += 1.0 / (4.0 * weights[b, j])
        slope += inv_sum
        hi = deficit / inv_sum
    else:
        total_w = 0.0
        for j in range(m):
            total_w += weights[a, j] + weights[b, j]
            if weights[a, j] > 0.0:
                slope += _law_variance(means[a, j], code, laws, a, j) / weights[a, j]
            if means[b, j] >= threshold and weights[b, j] > 0.0:
                slope += _law_variance(means[b, j], code, laws, b, j) / weights[b, j]
        hi = 2.0 * total_w / m
    guess = deficit / slope if slope > 0.0 else -1.0
    eta = solve_multiplier(means, weights, a, b, laws, threshold, code, BOTH_ROWS, 0.0, tolerance, hi, guess, x, y)
    # The cost at the final eta, from the points and their complements.
    cost = 0.0
    gap = 0.0
    for j in range(m):
        xj, xj_c, _ = lower_point(means[a, j], weights[a, j], eta, code, laws, a, j)
        yj, yj_c, _ = upper_point(means[b, j], weights[b, j], eta, threshold, code, laws, b, j)
        x[j] = xj
        y[j] = yj
        cost += _pair_cost(means[a, j], xj, xj_c, weights[a, j], code, laws, a, j)
        cost += _pair_cost(means[b, j], yj, yj_c, weights[b, j], code, laws, b, j)
        gap += yj - xj
    if code == KINF:
        return max(cost - eta * gap, 0.0)
    return cost


@njit(cache=True)
def _become_feasible(means, threshold, weights, b, code, laws):
    """Cost of alternative (C): every attribute of arm ``b`` below the threshold raised to it."""
    cost = 0.0
    for j in range(means.shape[1]):
        if means[b, j] < threshold:
            cost += _to_threshold(means, threshold, weights, b, j, code, laws)
    return cost


@njit(cache=True)
def _is_tied_with(means, threshold, a, b):
    """Arm ``b`` is feasible and its mean is within MEAN_TOLERANCE of arm ``a``'s (or above)."""
    m = means.shape[1]
    total_a = 0.0
    total_b = 0.0
    for j in range(m):
        if means[b, j] < threshold:
            return False
        total_a += means[a, j]
        total_b += means[b, j]
    return total_b / m >= total_a / m - MEAN_TOLERANCE


@njit(cache=True)
def alternatives_kernel(means: np.ndarray, threshold: float, weights: np.ndarray, code: int,
                        laws: np.ndarray) -> tuple:
    """Every alternative's cost: ``(kinds, arms, attrs, values, rows_a, rows_b)``.

    Feasible ``mu`` (answer ``a``): (A) for ``j = 0..M-1`` (``arms = a``,
    ``attrs = j``), then (B) for every ``b != a`` in index order (``arms = b``; value
    0 for an arm tied with ``a``). Infeasible ``mu``: (C) for every arm ``b``.
    ``rows_a[k]``, ``rows_b[k]`` are the new rows of ``a`` and ``b`` of a (B) entry
    (see :func:`alternative_lambda`).
    """
    return _alternatives(means, threshold, weights, code, laws, answer_kernel(means, threshold)[0])


@njit(cache=True)
def _alternatives(means, threshold, weights, code, laws, a):
    """:func:`alternatives_kernel` given the answer ``a`` of ``means``."""
    n, m = means.shape
    count = n if a < 0 else m + n - 1
    kinds = np.empty(count, dtype=np.int64)
    arms = np.empty(count, dtype=np.int64)
    attrs = np.full(count, -1, dtype=np.int64)
    values = np.empty(count)
    rows_a = np.empty((count, m))
    rows_b = np.empty((count, m))
    if a < 0:
        for b in range(n):
            kinds[b] = KIND_BECOME_FEASIBLE
            arms[b] = b
            values[b] = _become_feasible(means, threshold, weights, b, code, laws)
        return kinds, arms, attrs, values, rows_a, rows_b
    for j in range(m):
        kinds[j] = KIND_BEST_INFEASIBLE
        arms[j] = a
        attrs[j] = j
        values[j] = _to_threshold(means, threshold, weights, a, j, code, laws)
    k = m
    for b in range(n):
        if b == a:
            continue
        kinds[k] = KIND_OVERTAKE
        arms[k] = b
        values[k] = _overtake_entry(means, threshold, weights, a, b, code, laws, rows_a[k], rows_b[k])
        k += 1
    return kinds, arms, attrs, values, rows_a, rows_b


@njit(cache=True)
def _overtake_entry(means, threshold, weights, a, b, code, laws, row_a, row_b):
    """The (B) entry of arm ``b`` against the answer ``a`` (0 for a tie with it); its rows in ``row_a``, ``row_b``."""
    if _is_tied_with(means, threshold, a, b):
        row_a[:] = means[a]
        row_b[:] = means[b]
        return 0.0
    return overtake(means, threshold, weights, a, b, code, laws, row_a, row_b)


@njit(cache=True)
def overtake_value_kernel(means: np.ndarray, threshold: float, weights: np.ndarray, a: int, b: int,
                          code: int) -> float:
    """The (B) value of :func:`alternative_values_kernel` for arm ``b`` against the answer ``a``, computed alone."""
    m = means.shape[1]
    return _overtake_entry(means, threshold, weights, a, b, code, _NO_LAWS, np.empty(m), np.empty(m))


@njit(cache=True)
def alternative_lambda(means: np.ndarray, threshold: float, a: int, kind: int, arm: int, attr: int,
                       row_a: np.ndarray, row_b: np.ndarray) -> np.ndarray:
    """The alternative ``lambda`` of one entry of :func:`alternatives_kernel`; ``a`` is the answer of ``means``."""
    lam = means.copy()
    if kind == KIND_BEST_INFEASIBLE:
        lam[arm, attr] = threshold
    elif kind == KIND_OVERTAKE:
        lam[a, :] = row_a
        lam[arm, :] = row_b
    elif kind == KIND_BECOME_FEASIBLE:
        for j in range(means.shape[1]):
            if means[arm, j] < threshold:
                lam[arm, j] = threshold
    return lam


@njit(cache=True)
def best_response_laws_kernel(means: np.ndarray, threshold: float, weights: np.ndarray, code: int,
                              laws: np.ndarray) -> tuple:
    """Best response ``min_{lambda in cl Alt(mu)} sum w d(mu, lambda)`` and a minimiser.

    Returns ``(value, lam, kind, arm_b, attr_j)``: ``arm_b`` is the arm made better
    (B), made feasible (C) or tied (tie), -1 for (A); ``attr_j`` is the attribute of
    the answer moved to the threshold in (A), -1 otherwise. The first cheapest
    alternative in the order of :func:`alternatives_kernel` wins.
    """
    a, tie = answer_kernel(means, threshold)
    if tie >= 0:
        return 0.0, means.copy(), KIND_TIE, tie, -1
    kinds, arms, attrs, values, rows_a, rows_b = _alternatives(means, threshold, weights, code, laws, a)
    best = 0
    for k in range(1, values.size):
        if values[k] < values[best]:
            best = k
    kind = kinds[best]
    lam = alternative_lambda(means, threshold, a, kind, arms[best], attrs[best], rows_a[best], rows_b[best])
    arm_b = -1 if kind == KIND_BEST_INFEASIBLE else arms[best]
    return values[best], lam, kind, arm_b, attrs[best]


@njit(cache=True)
def best_response_kernel(means: np.ndarray, threshold: float, weights: np.ndarray, code: int) -> tuple:
    """:func:`best_response_laws_kernel` for the parametric codes (no reward laws)."""
    return best_response_laws_kernel(means, threshold, weights, code, _NO_LAWS)


@njit(cache=True)
def alternative_values_kernel(means: np.ndarray, threshold: float, weights: np.ndarray, code: int) -> tuple:
    """``(kinds, arms, attrs, values)`` of :func:`alternatives_kernel` for the parametric codes."""
    kinds, arms, attrs, values, _, _ = alternatives_kernel(means, threshold, weights, code, _NO_LAWS)
    return kinds, arms, attrs, values


def _check_problem(means, threshold, weights):
    """Validate (means, threshold, weights); return float64 C-contiguous arrays and th."""
    instance = Instance(means, threshold)  # validates the means and the threshold
    means_arr = np.ascontiguousarray(instance.means, dtype=np.float64)
    try:
        w = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("weights must be a numeric N x M matrix") from None
    if w.shape != means_arr.shape:
        raise ValueError(f"weights must have the shape of the means {means_arr.shape}, got {w.shape}")
    checks = ((np.isnan(w), "contain NaN"), (w < 0.0, "must be non-negative"), (np.isinf(w), "must be finite"))
    for bad, problem in checks:
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(f"weights {problem}: arm {i}, attribute {j} has {w[i, j]!r}")
    return means_arr, instance.threshold, np.ascontiguousarray(w)


@dataclass(frozen=True, eq=False)
class BestResponse:
    """The most confusing alternative at a weight matrix.

    ``value`` is ``min_{lambda in cl Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij)``,
    ``alternative`` a minimiser (N x M). ``kind`` is one of :data:`KIND_NAMES`:
    ``"best-infeasible"`` (A; ``arms = (a,)``, ``attribute = j``), ``"overtake"``
    (B; ``arms = (a, b)``), ``"become-feasible"`` (C; ``arms = (b,)``) or ``"tie"``
    (``arms = (a, b)``, two feasible arms tie for the best mean, ``value = 0``).
    """

    value: float
    alternative: np.ndarray
    kind: str
    arms: tuple
    attribute: int | None


def best_response(means: ArrayLike, threshold: float, weights: ArrayLike, divergence: str = "bernoulli", *,
                  laws: str | Sequence = "beta") -> BestResponse:
    """The best response (most confusing alternative) at ``weights`` (Garivier & Kaufmann 2016).

    ``means`` (N x M in [0, 1], true or empirical), ``threshold`` in (0, 1) and
    non-negative ``weights`` (sample counts give the GLR statistic of the empirical
    answer). ``divergence`` is ``"bernoulli"``, ``"gaussian"`` or ``"kinf"``; ``laws``
    (``"kinf"`` only) is ``"beta"``, ``"bernoulli"`` or an N x M grid of
    :class:`~gbai.limits.reward_laws.RewardLaw`. The value is 0 for a tie for the best
    feasible arm or a pair of the best arm at the threshold. Malformed input or an
    unknown divergence raises ValueError.
    """
    code = divergence_code(divergence)
    means_arr, th, w = _check_problem(means, threshold, weights)
    laws = pair_laws(means_arr, code, laws)
    value, lam, kind, arm_b, attr_j = best_response_laws_kernel(means_arr, th, w, code, laws)
    a, _ = answer_kernel(means_arr, th)
    kind = int(kind)
    if kind == KIND_BEST_INFEASIBLE:
        return BestResponse(float(value), lam, KIND_NAMES[kind], (int(a),), int(attr_j))
    if kind == KIND_BECOME_FEASIBLE:
        return BestResponse(float(value), lam, KIND_NAMES[kind], (int(arm_b),), None)
    return BestResponse(float(value), lam, KIND_NAMES[kind], (int(a), int(arm_b)), None)


def alternative_values(means: ArrayLike, threshold: float, weights: ArrayLike, divergence: str = "bernoulli", *,
                       laws: str | Sequence = "beta") -> dict:
    """The cost of every alternative separately, as columns of equal length.

    A dict of 1-D arrays ready for ``pandas.DataFrame``: ``kind`` (from
    :data:`KIND_NAMES`), ``arm`` (``a`` for (A), ``b`` for (B) and (C)), ``attribute``
    (``j`` for (A), -1 otherwise) and ``value``, in the order of
    :func:`alternatives_kernel`. The minimum of ``value`` is :func:`best_response`'s
    value except for a tie, where the latter is 0. Arguments as in :func:`best_response`.
    """
    code = divergence_code(divergence)
    means_arr, th, w = _check_problem(means, threshold, weights)
    kinds, arms, attrs, values, _, _ = alternatives_kernel(means_arr, th, w, code, pair_laws(means_arr, code, laws))
    return {"kind": np.array([KIND_NAMES[k] for k in kinds]), "arm": arms, "attribute": attrs, "value": values}
