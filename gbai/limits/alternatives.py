"""The answer of a mean matrix and its alternatives: best response and GLR statistic.

The alternatives
----------------
Let ``a`` be the answer of ``mu`` (0-based arm index, or INFEASIBLE). The answer of
``lambda`` differs from ``a`` exactly when one of the following holds, so the
closure of ``Alt(mu)`` is the union of the closed sets below and the best response
is the smallest of their costs (a derivation of ours for this model; the paper does
not use it):

* (A) ``kind="best-infeasible"``, for each attribute ``j`` of the best arm ``a``:
  ``lambda_aj <= th``. Only that pair moves, to ``th``: cost ``w_aj d(mu_aj, th)``.
* (B) ``kind="overtake"``, for each arm ``b != a``: arm ``b`` is feasible and its
  mean is at least that of ``a``. Only the rows ``a`` and ``b`` move::

      min  sum_j w_aj d(mu_aj, x_j) + sum_j w_bj d(mu_bj, y_j)
      s.t. y_j >= th (all j),  sum_j y_j >= sum_j x_j.

  It is convex. With a multiplier ``eta >= 0`` on the sum constraint, the
  minimisers are ``x_j(eta) = argmin_x w_aj d(mu_aj, x) + eta x`` (moves down) and
  ``y_j(eta) = max(th, argmin_y w_bj d(mu_bj, y) - eta y)`` (moves up). The
  function ``g(eta) = sum_j y_j(eta) - sum_j x_j(eta)`` increases; ``eta = 0`` when
  ``g(0) >= 0`` and otherwise ``eta`` is the root of ``g``, found by a safeguarded
  Newton iteration on a bracket (iteration cap 200). The constraint ``x_j >= th``
  is not imposed: a point with ``x_j < th`` is in (A)'s set anyway, so the union,
  hence the minimum, is unchanged.
* (C) ``kind="become-feasible"``, only when ``mu`` is infeasible, for each arm
  ``b``: ``lambda_bj >= th`` for all ``j``. Cost
  ``sum_{j: mu_bj < th} w_bj d(mu_bj, th)``.

When two feasible arms tie for the best mean (``Instance.has_unique_answer`` is
False) ``mu`` itself lies in the closure of ``Alt(mu)``: the best response is 0 and
``T* = inf`` (``kind="tie"``). Ties are detected with the model's
``MEAN_TOLERANCE`` on arm means, as in :mod:`gbai.model`.


The inner infimum of ``T*`` (the *best response*) is also the generalised
likelihood ratio (GLR) statistic when the weights are sample counts and the means
empirical, so the kernels here are compiled and callable every round from a
stopping rule (:mod:`gbai.algorithms.lma_glr`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..model import MEAN_TOLERANCE, Instance
from .divergences import divergence_code, divergence_scalar
from .reward_laws import law_arrays
from .overtake import overtake_cost
from .pairs import law_alternatives_kernel

__all__ = [
    "KIND_BECOME_FEASIBLE",
    "KIND_BEST_INFEASIBLE",
    "KIND_NAMES",
    "KIND_OVERTAKE",
    "KIND_TIE",
    "BestResponse",
    "alternative_values",
    "alternative_values_kernel",
    "alternatives_kernel",
    "answer_kernel",
    "best_response",
    "best_response_kernel",
]

#: Kind codes of the alternatives (the kernels return the code, the API the name).
KIND_BEST_INFEASIBLE = 0  # (A)
KIND_OVERTAKE = 1  # (B)
KIND_BECOME_FEASIBLE = 2  # (C)
KIND_TIE = 3
KIND_NAMES = ("best-infeasible", "overtake", "become-feasible", "tie")


@njit(cache=True)
def answer_kernel(means, threshold):
    """Return ``(a, tie)``: the answer (-1 if infeasible) and a tied arm (-1 if none).

    Mirrors :class:`gbai.model.Instance`: arm means within MEAN_TOLERANCE of the
    largest feasible mean are tied, and the answer is the lowest such index.
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
def _become_feasible(means, threshold, weights, b, code):
    """Cost of alternative (C): raise every attribute of arm ``b`` below th to th."""
    m = means.shape[1]
    cost = 0.0
    for j in range(m):
        if means[b, j] < threshold and weights[b, j] > 0.0:
            cost += weights[b, j] * divergence_scalar(means[b, j], threshold, code)
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
def best_response_kernel(means, threshold, weights, code):
    """Best response ``min_{lambda in cl Alt(mu)} sum w d(mu, lambda)`` and a minimiser.

    Returns ``(value, lam, kind_code, arm_b, attr_j)``: ``arm_b`` is the arm made
    better (B), made feasible (C) or tied (tie), -1 for (A); ``attr_j`` is the
    attribute of the answer pushed to the threshold in (A), -1 otherwise.
    """
    n, m = means.shape
    lam = means.copy()
    a, tie = answer_kernel(means, threshold)
    if tie >= 0:
        return 0.0, lam, KIND_TIE, tie, -1
    best = math.inf
    best_kind = -1
    best_b = -1
    best_j = -1
    if a < 0:
        for b in range(n):
            cost = _become_feasible(means, threshold, weights, b, code)
            if cost < best:
                best = cost
                best_kind = KIND_BECOME_FEASIBLE
                best_b = b
        for j in range(m):
            if means[best_b, j] < threshold:
                lam[best_b, j] = threshold
        return best, lam, best_kind, best_b, -1
    for j in range(m):
        cost = 0.0
        if weights[a, j] > 0.0:
            cost = weights[a, j] * divergence_scalar(means[a, j], threshold, code)
        if cost < best:
            best = cost
            best_kind = KIND_BEST_INFEASIBLE
            best_j = j
    x = np.empty(m)
    y = np.empty(m)
    best_x = np.empty(m)
    best_y = np.empty(m)
    for b in range(n):
        if b == a:
            continue
        cost = overtake_cost(means, threshold, weights, a, b, code, x, y)
        if cost < best:
            best = cost
            best_kind = KIND_OVERTAKE
            best_b = b
            best_j = -1
            best_x[:] = x
            best_y[:] = y
    if best_kind == KIND_BEST_INFEASIBLE:
        lam[a, best_j] = threshold
        return best, lam, best_kind, -1, best_j
    lam[a, :] = best_x
    lam[best_b, :] = best_y
    return best, lam, best_kind, best_b, -1


@njit(cache=True)
def alternatives_kernel(means, threshold, weights, code, want_lambdas):
    """The cost of every alternative separately (for per-alternative stopping rules).

    Returns ``(kinds, arms, attrs, values, lams)``. Feasible ``mu`` (answer ``a``): the
    first M entries are (A) for ``j = 0..M-1`` (``arms = a``), then (B) for every
    ``b != a`` in increasing order (``arms = b``, ``attrs = -1``). Infeasible ``mu``:
    (C) for every arm ``b``. A (B) entry for an arm tied with ``a`` has value 0.
    ``lams`` has shape (K, N, M) when ``want_lambdas`` and (0, N, M) otherwise.
    """
    n, m = means.shape
    a, _ = answer_kernel(means, threshold)
    count = n if a < 0 else m + n - 1
    kinds = np.empty(count, dtype=np.int64)
    arms = np.empty(count, dtype=np.int64)
    attrs = np.full(count, -1, dtype=np.int64)
    values = np.empty(count)
    lams = np.empty((count if want_lambdas else 0, n, m))
    if a < 0:
        for b in range(n):
            kinds[b] = KIND_BECOME_FEASIBLE
            arms[b] = b
            values[b] = _become_feasible(means, threshold, weights, b, code)
            if want_lambdas:
                lams[b] = means
                for j in range(m):
                    if means[b, j] < threshold:
                        lams[b, b, j] = threshold
        return kinds, arms, attrs, values, lams
    for j in range(m):
        kinds[j] = KIND_BEST_INFEASIBLE
        arms[j] = a
        attrs[j] = j
        cost = 0.0
        if weights[a, j] > 0.0:
            cost = weights[a, j] * divergence_scalar(means[a, j], threshold, code)
        values[j] = cost
        if want_lambdas:
            lams[j] = means
            lams[j, a, j] = threshold
    x = np.empty(m)
    y = np.empty(m)
    k = m
    for b in range(n):
        if b == a:
            continue
        kinds[k] = KIND_OVERTAKE
        arms[k] = b
        if _is_tied_with(means, threshold, a, b):
            values[k] = 0.0
            x[:] = means[a]
            y[:] = means[b]
        else:
            values[k] = overtake_cost(means, threshold, weights, a, b, code, x, y)
        if want_lambdas:
            lams[k] = means
            lams[k, a, :] = x
            lams[k, b, :] = y
        k += 1
    return kinds, arms, attrs, values, lams


@njit(cache=True)
def alternative_values_kernel(means, threshold, weights, code):
    """``(kinds, arms, attrs, values)`` of every alternative, without the lambdas."""
    kinds, arms, attrs, values, _ = alternatives_kernel(means, threshold, weights, code, False)
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
        raise ValueError(
            f"weights must have the shape of the means {means_arr.shape}, got {w.shape}"
        )
    if np.isnan(w).any():
        i, j = np.argwhere(np.isnan(w))[0]
        raise ValueError(f"weights contains NaN at arm {i}, attribute {j}")
    if (w < 0.0).any():
        i, j = np.argwhere(w < 0.0)[0]
        raise ValueError(f"weights must be non-negative; arm {i}, attribute {j} has {w[i, j]!r}")
    if np.isinf(w).any():
        i, j = np.argwhere(np.isinf(w))[0]
        raise ValueError(f"weights must be finite; arm {i}, attribute {j} is infinite")
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


def _law_best_response(means, th, w, laws):
    """:func:`best_response` with ``K_inf`` divergences (the kernel of :mod:`.pairs`)."""
    a, tie = answer_kernel(means, th)
    if tie >= 0:
        return BestResponse(0.0, means.copy(), KIND_NAMES[KIND_TIE], (int(a), int(tie)), None)
    kinds, arms, attrs, values, lams = law_alternatives_kernel(means, th, w, *law_arrays(means, laws), a)
    k = int(np.argmin(values))
    kind = int(kinds[k])
    if kind == KIND_BEST_INFEASIBLE:
        return BestResponse(float(values[k]), lams[k], KIND_NAMES[kind], (int(a),), int(attrs[k]))
    if kind == KIND_BECOME_FEASIBLE:
        return BestResponse(float(values[k]), lams[k], KIND_NAMES[kind], (int(arms[k]),), None)
    return BestResponse(float(values[k]), lams[k], KIND_NAMES[kind], (int(a), int(arms[k])), None)


def best_response(
    means, threshold, weights, divergence: str = "bernoulli", *, laws="beta"
) -> BestResponse:
    """The best response (most confusing alternative) at ``weights``.

    Parameters
    ----------
    means:
        N x M attribute means in [0, 1] (true or empirical).
    threshold:
        Feasibility threshold in (0, 1).
    weights:
        Non-negative N x M weights. They need not sum to 1: with sample counts and
        empirical means the value is the GLR statistic of the empirical answer.
    divergence:
        ``"bernoulli"`` (default), ``"gaussian"`` (variance 1/4) or ``"kinf"``
        (``K_inf`` of each pair's reward law, :mod:`~gbai.limits.reward_laws`).
    laws:
        Only for ``"kinf"``: ``"beta"`` (default, the simulated ``Beta(1, 1/mu - 1)``),
        ``"bernoulli"`` or an N x M grid of :class:`~gbai.limits.reward_laws.RewardLaw`.

    Returns
    -------
    BestResponse
        The value is 0 when two feasible arms tie for the best mean (the closure
        of ``Alt(mu)`` then contains ``mu``) or when a pair of the best arm sits at
        the threshold.

    Raises
    ------
    ValueError
        For malformed means, threshold or weights, or an unknown divergence.
    """
    if is_kinf(divergence):
        return _law_best_response(*_check_problem(means, threshold, weights), laws)
    code = divergence_code(divergence)
    means_arr, th, w = _check_problem(means, threshold, weights)
    value, lam, kind, arm_b, attr_j = best_response_kernel(means_arr, th, w, code)
    a, _ = answer_kernel(means_arr, th)
    kind = int(kind)
    if kind == KIND_BEST_INFEASIBLE:
        arms: tuple = (int(a),)
        attribute = int(attr_j)
    elif kind == KIND_BECOME_FEASIBLE:
        arms = (int(arm_b),)
        attribute = None
    else:
        arms = (int(a), int(arm_b))
        attribute = None
    return BestResponse(float(value), lam, KIND_NAMES[kind], arms, attribute)


def is_kinf(divergence) -> bool:
    """True for the name of the ``K_inf`` divergence (``"kinf"``, any case)."""
    return isinstance(divergence, str) and divergence.lower() == "kinf"


def alternative_values(
    means, threshold, weights, divergence: str = "bernoulli", *, laws="beta"
) -> dict:
    """The cost of every alternative separately, as columns of equal length.

    Returns a dict of 1-D arrays, ready for ``pandas.DataFrame``: ``kind`` (names from
    :data:`KIND_NAMES`), ``arm`` (the answer's arm ``a`` for (A), the arm ``b`` for
    (B) and (C)), ``attribute`` (``j`` for (A), -1 otherwise) and ``value``. The
    rows are: for a feasible ``mu``, (A) for each attribute of the answer then (B)
    for each other arm in index order (a (B) row for an arm tied with the answer has
    value 0); for an infeasible ``mu``, (C) for each arm. The minimum of ``value``
    is :func:`best_response`'s value except for a tie, where the latter is 0.
    ``divergence`` and ``laws`` are as in :func:`best_response`.
    """
    means_arr, th, w = _check_problem(means, threshold, weights)
    if is_kinf(divergence):
        a, _ = answer_kernel(means_arr, th)
        kinds, arms, attrs, values, _ = law_alternatives_kernel(means_arr, th, w, *law_arrays(means_arr, laws), a)
    else:
        kinds, arms, attrs, values = alternative_values_kernel(means_arr, th, w, divergence_code(divergence))
    return {
        "kind": np.array([KIND_NAMES[k] for k in kinds]),
        "arm": arms,
        "attribute": attrs,
        "value": values,
    }
