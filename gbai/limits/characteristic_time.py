"""The characteristic time ``T*(mu)`` and its optimal proportions ``w*``, with a certificate.

Garivier & Kaufmann (2016, Theorem 1): every delta-correct algorithm has
``E[tau] >= T*(mu) kl(delta, 1 - delta)`` with
``1/T* = max_{w in simplex} min_{lambda in cl Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij)``
over the N M arm-attribute pairs; the inner minimum is the best response of
:mod:`gbai.limits.alternatives`. A feasible instance is solved with the answer's
row outside and one small problem per other arm (KKT conditions), and certified by
weak duality: ``value <= 1/T* <= value_upper``. An infeasible instance has a closed
form (derivation notes, "Structured solver", "Certificate", "Infeasible instances").
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit

from ..paper.model import Instance, check_delta
from .alternatives import ANSWER_ROW, alternatives_kernel, answer_kernel, solve_multiplier
from .divergences import (
    BERNOULLI,
    GAUSSIAN,
    divergence_code,
    kl_bernoulli_scalar,
    level_point,
    lower_point,
    pair_divergence,
    pair_laws,
)

__all__ = ["CharacteristicTime", "characteristic_time", "check_instance", "lower_bound_tstar", "matching_divergence"]

_ROOT_MAX_ITER = 200


@dataclass(frozen=True, eq=False)
class CharacteristicTime:
    """``T*(mu)`` and the optimal proportions (Garivier & Kaufmann 2016).

    ``value`` is ``1/T*``, the max-min value achieved by ``w_star`` (a certified lower
    bound on the true max-min); ``value_upper`` a certified upper bound and
    ``gap = (value_upper - value) / value``: ``T_star = 1/value`` is never below the
    true ``T*`` and exceeds it by a relative amount of at most ``gap``.
    ``iterations`` counts the outer iterations (0 for the closed forms); ``method``
    is ``"closed-form"``, ``"structured"`` or ``"degenerate"`` (``T* = inf``);
    ``divergence`` is ``"bernoulli"``, ``"gaussian"`` or ``"kinf"``.
    """

    T_star: float
    w_star: np.ndarray
    value: float
    gap: float
    iterations: int
    value_upper: float = math.nan
    method: str = ""
    divergence: str = "bernoulli"


def check_instance(instance: object) -> Instance:
    """``instance`` itself if it is a :class:`gbai.Instance`, else a ValueError."""
    if not isinstance(instance, Instance):
        raise ValueError(f"expected a gbai.Instance, got {type(instance).__name__}")
    return instance


@njit(cache=True)
def _answer_side(code, means, weights, laws, a, target, eta_guess, x_out, d_out):
    """``eta`` with ``sum_j x_j(eta) <= target`` for the answer's row ``a``; fills ``x`` and ``d(mu_a, x)``.

    Returns ``(eta, sum_j w_aj d(mu_aj, x_j))``.
    """
    hi = 2.0 * eta_guess if eta_guess > 0.0 else 1.0
    eta = solve_multiplier(means, weights, a, a, laws, 0.0, code, ANSWER_ROW, target, 1e-15 * target, hi, eta_guess,
                           x_out, x_out)
    cost = 0.0
    for j in range(means.shape[1]):
        x, x_c, _ = lower_point(means[a, j], weights[a, j], eta, code, laws, a, j)
        x_out[j] = x
        d_out[j] = pair_divergence(means[a, j], x, x_c, code, laws, a, j)
        cost += weights[a, j] * d_out[j]
    return eta, cost


@njit(cache=True)
def _level_points(code, mu_b, laws, b, c, c0, j0, threshold, y_out, s_out):
    """Fill ``y_j`` at divergence level ``c`` (``y_j0 = th`` when ``c <= c0``) and ``1/d'``; return their sums."""
    m = mu_b.shape[0]
    total = 0.0
    omega = 0.0
    for j in range(m):
        if code != GAUSSIAN and mu_b[j] >= 1.0:
            # A point mass at 1 cannot move up, and needs no weight to stay.
            y_out[j] = 1.0
            s_out[j] = 0.0
            total += 1.0
            continue
        if code == BERNOULLI and mu_b[j] == 0.0:
            # A point mass at 0: level_point's Newton start would sit on the mean, where
            # d' is 0/0. In closed form d(0, y) = -ln(1 - y), so y = 1 - e^-c, d' = e^c.
            level = c0 if j == j0 and c <= c0 else c
            y_out[j] = threshold if j == j0 and c <= c0 else -math.expm1(-level)
            s_out[j] = math.exp(-level)
            total += y_out[j]
            omega += s_out[j]
            continue
        if j == j0 and c <= c0:
            # At th, with the derivative there: the least weight that holds it at th.
            _, slope = level_point(mu_b[j], c0, code, laws, b, j)
            y = threshold
        else:
            y, slope = level_point(mu_b[j], c, code, laws, b, j)
        y_out[j] = y
        # A level so small that y rounds onto the mean has slope 0: a huge weight.
        s_out[j] = 1.0 / max(slope, 1e-300)
        total += y
        omega += s_out[j]
    return total, omega


@njit(cache=True)
def _arm_problem(code, means, weights, laws, a, b, threshold, c_guess, eta_guess, x_out, d_out, y_out, wb_out):
    """``(g_b, c, eta)``: the least weight of arm ``b`` that makes its overtake cost 1, at ``w_a = weights[a]``.

    Every pair of ``b`` sits at the same divergence level ``c``, found as the root of
    the decreasing ``F(c) = 1`` in ``log(c - c0)`` by Illinois regula falsi
    (derivation notes, "Structured solver"); ``g = inf`` outside the domain.
    """
    mu_a = means[a]
    mu_b = means[b]
    m = mu_b.shape[0]
    sum_a = 0.0
    for j in range(m):
        sum_a += mu_a[j]
    c0 = 0.0
    j0 = -1
    for j in range(m):
        if mu_b[j] < threshold:
            level = pair_divergence(mu_b[j], threshold, 1.0 - threshold, code, laws, b, j)
            if level > c0:
                c0, j0 = level, j
    s_tmp = np.empty(m)
    if c0 == math.inf:
        # An attribute that is a point mass below th never reaches it: this
        # alternative is impossible whatever the weights, and b needs no weight.
        for j in range(m):
            x_out[j] = mu_a[j]
            d_out[j] = 0.0
            y_out[j] = mu_b[j]
            wb_out[j] = 0.0
        return 0.0, math.inf, 0.0

    def F(c, eta_start):
        total, omega = _level_points(code, mu_b, laws, b, c, c0, j0, threshold, y_out, s_tmp)
        if total >= sum_a:
            for j in range(m):
                x_out[j] = mu_a[j]
                d_out[j] = 0.0
            return 0.0, 0.0, omega
        eta, cost = _answer_side(code, means, weights, laws, a, total, eta_start, x_out, d_out)
        return cost + c * eta * omega, eta, omega

    if c0 > 0.0:
        f0, eta0, omega0 = F(c0, eta_guess)
        if f0 <= 1.0:
            # The pair at level c0 stays at th and takes the missing weight.
            extra = (1.0 - f0) / c0
            for j in range(m):
                wb_out[j] = eta0 * s_tmp[j]
            wb_out[j0] += extra
            return eta0 * omega0 + extra, c0, eta0
    else:
        # F(0+): the answer moved down to the challenger's mean sum, b staying put.
        total = 0.0
        for j in range(m):
            total += max(mu_b[j], threshold)
        if total >= sum_a:
            return math.inf, 0.0, 0.0
        _, limit = _answer_side(code, means, weights, laws, a, total, eta_guess, x_out, d_out)
        if limit <= 1.0:
            return math.inf, 0.0, 0.0
    u = math.log(c_guess - c0) if c_guess > c0 else math.log(max(c0, 1e-3))
    eta = eta_guess
    f, eta, omega = F(c0 + math.exp(u), eta)
    u_lo, f_lo, u_hi, f_hi = -math.inf, math.inf, math.inf, -math.inf
    if f >= 1.0:
        u_lo, f_lo = u, f
    else:
        u_hi, f_hi = u, f
    step = 1.0
    for _ in range(_ROOT_MAX_ITER):
        if math.isfinite(u_lo) and math.isfinite(u_hi):
            break
        # The floor keeps c - c0 = e^u a normal float (F(c0+) >= 1 is known here).
        u = u + step if f >= 1.0 else max(u - step, -700.0)
        step *= 2.0
        f, eta, omega = F(c0 + math.exp(u), eta)
        if f >= 1.0:
            u_lo, f_lo = u, f
        else:
            u_hi, f_hi = u, f
    side = 0
    for _ in range(_ROOT_MAX_ITER):
        if abs(f - 1.0) <= 1e-14 or u_hi - u_lo <= 1e-15 * max(1.0, abs(u_lo)):
            break
        u = (u_lo * (f_hi - 1.0) - u_hi * (f_lo - 1.0)) / (f_hi - f_lo)
        if not (u_lo < u < u_hi):
            u = 0.5 * (u_lo + u_hi)
        f, eta, omega = F(c0 + math.exp(u), eta)
        if f >= 1.0:
            u_lo, f_lo = u, f
            if side == -1:
                f_hi = 1.0 + 0.5 * (f_hi - 1.0)
            side = -1
        else:
            u_hi, f_hi = u, f
            if side == 1:
                f_lo = 1.0 + 0.5 * (f_lo - 1.0)
            side = 1
    c = c0 + math.exp(u)
    for j in range(m):
        wb_out[j] = eta * s_tmp[j]
    return eta * omega, c, eta


@njit(cache=True)
def _outer_objective(code, means, laws, threshold, a, w_a, c_warm, eta_warm, X, D, Y, WB, C, E):
    """``Phi(w_a) = sum_j w_aj + sum_b g_b(w_a)`` and its gradient; fills the arm solutions."""
    n, m = means.shape
    value = 0.0
    grad = np.ones(m)
    weights = np.zeros((n, m))
    weights[a] = w_a
    for j in range(m):
        value += w_a[j]
    for b in range(n):
        if b == a:
            continue
        g, c, eta = _arm_problem(
            code, means, weights, laws, a, b, threshold, c_warm[b], eta_warm[b], X[b], D[b], Y[b], WB[b],
        )
        if not math.isfinite(g):
            return math.inf, grad
        C[b] = c
        E[b] = eta
        value += g
        for j in range(m):
            grad[j] -= D[b, j] / c  # envelope theorem: dg_b/dw_aj = -d(mu_aj, x_j) / c
    return value, grad


@njit(cache=True)
def _column_sums(code, means, laws, a, Y, D, C, alpha, nu_attr):
    """Largest ``sum_k nu_k d(mu_ij, lambda^k_ij)`` over the pairs, and ``sum_k nu_k``."""
    n, m = means.shape
    best = 0.0
    total = 0.0
    row_a = np.zeros(m)
    for j in range(m):
        row_a[j] = nu_attr[j] * alpha[j]
        total += nu_attr[j]
    for b in range(n):
        if b == a:
            continue
        total += 1.0 / C[b]
        for j in range(m):
            row_a[j] += D[b, j] / C[b]
            d = pair_divergence(means[b, j], Y[b, j], 1.0 - Y[b, j], code, laws, b, j)
            best = max(best, d / C[b])
    for j in range(m):
        best = max(best, row_a[j])
    return best, total


# The solver's arithmetic avoids BLAS and NumPy's vectorised exp and log: their last
# bits depend on the processor, and T* must come out the same on every machine.
def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``sum_i a_i b_i``, correctly rounded (math.fsum)."""
    return math.fsum(x * y for x, y in zip(a.tolist(), b.tolist()))


def _matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    return np.array([_dot(row, vector) for row in matrix])


def _elementwise(function, values: np.ndarray) -> np.ndarray:
    return np.array([function(value) for value in values.tolist()])


def _structured(means, threshold, a, code, laws, tol, max_iter):
    """Minimise ``Phi`` over ``w_a >= 1/d(mu_a, th)`` and certify: ``(w, lower, upper, iterations)``.

    Projected BFGS on ``log w_a`` with a backtracking line search that treats
    ``Phi = inf`` as a failed step. The lower bound on ``1/T*`` is the exact best
    response at the full weights over their sum; the upper bound is weak duality with
    the KKT multipliers (derivation notes, "Certificate").
    """
    n, m = means.shape
    alpha = np.array([pair_divergence(means[a, j], threshold, 1.0 - threshold, code, laws, a, j) for j in range(m)])
    floor = 1.0 / alpha
    X = np.zeros((n, m))
    D = np.zeros((n, m))
    Y = np.zeros((n, m))
    WB = np.zeros((n, m))
    C = np.zeros(n)
    E = np.zeros(n)

    def phi(w_a):
        return _outer_objective(code, means, laws, threshold, a, w_a, C.copy(), E.copy(), X, D, Y, WB, C, E)

    # Start: the (A) floor, raised uniformly until every arm problem is solvable.
    w_a = np.maximum(floor, floor.max())
    value, grad = phi(w_a)
    for _ in range(200):
        if math.isfinite(value):
            break
        w_a = 2.0 * w_a
        value, grad = phi(w_a)
    best = (-math.inf, math.inf, None)
    log_w = _elementwise(math.log, w_a)
    log_floor = _elementwise(math.log, floor)
    H = np.eye(m)
    first = True
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (its last value, read after the loop, is the count)
        W = WB.copy()
        W[a] = w_a
        values = alternatives_kernel(means, threshold, np.ascontiguousarray(W), code, laws)[3]
        total = math.fsum(W.ravel().tolist())
        lower = float(values.min()) / total
        nu_attr = np.maximum(grad, 0.0) / alpha
        column_max, nu_total = _column_sums(code, means, laws, a, Y, D, C, alpha, nu_attr)
        upper = column_max / nu_total
        if lower > best[0]:
            best = (lower, best[1], W / total)
        best = (best[0], min(best[1], upper), best[2])
        if best[1] - best[0] <= tol * best[0]:
            break
        g_log = grad * w_a
        free = ~((log_w <= log_floor + 1e-15) & (g_log > 0.0))
        direction = np.zeros(m)
        if first:
            direction[free] = -g_log[free] / max(np.abs(g_log[free]).max(), 1e-300) * 0.5
        else:
            direction[free] = -_matvec(H[np.ix_(free, free)], g_log[free])
        t = 1.0
        accepted = False
        for _ in range(60):
            trial = np.maximum(log_w + t * direction, log_floor)
            w_trial = _elementwise(math.exp, trial)
            v_trial, g_trial = phi(w_trial)
            if math.isfinite(v_trial) and v_trial <= value + 1e-4 * _dot(g_log, trial - log_w):
                accepted = True
                break
            t *= 0.5
        if not accepted:
            phi(w_a)  # restore the arm solutions of the incumbent
            break
        s = trial - log_w
        yv = g_trial * w_trial - g_log
        sy = _dot(s, yv)
        if sy > 1e-300:
            if first:
                H = np.eye(m) * sy / _dot(yv, yv)
            rho = 1.0 / sy
            # (I - rho s y') H (I - rho y s') + rho s s', expanded so that no matrix product is needed.
            hy = _matvec(H, yv)
            H = H - rho * (np.outer(s, hy) + np.outer(hy, s)) + (rho * rho * _dot(yv, hy) + rho) * np.outer(s, s)
            first = False
        log_w, w_a, value, grad = trial, w_trial, v_trial, g_trial
    return best[2], best[0], best[1], iterations


def characteristic_time(instance: Instance, divergence: str = "bernoulli", *, method: str = "auto",
                        tol: float = 1e-5, max_iter: int = 500, laws: str | Sequence = "beta") -> CharacteristicTime:
    """The characteristic time ``T*(mu)`` and optimal proportions ``w*`` (Garivier & Kaufmann 2016).

    * A tie for the best feasible arm, or a pair of the best arm at the threshold:
      ``T* = inf`` (``w_star`` uniform, ``method="degenerate"``).
    * An infeasible instance: ``T* = sum_b 1/D_b`` with ``D_b`` the
      largest ``d(mu_bj, th)`` of arm ``b``, all of ``b``'s weight on that pair.
    * Otherwise the structured solver; about 10 ms on the paper's 5 x 5 instances
      (Bernoulli), seconds for ``K_inf`` (``python -m gbai.benchmark --scaling``).

    ``divergence`` is ``"bernoulli"``, ``"gaussian"`` (variance 1/4) or ``"kinf"``
    (``K_inf`` of each pair's law, the limit for algorithms delta-correct for every
    law on [0, 1]; Agrawal, Juneja & Glynn 2020), whose ``laws`` are ``"beta"`` (the
    simulated ``Beta(1, 1/mu - 1)``), ``"bernoulli"`` or an N x M grid of
    :class:`~gbai.limits.reward_laws.RewardLaw`. ``method`` is ``"auto"`` or ``"structured"``,
    both with the closed form where it exists. ``tol`` is the target certified relative gap and
    ``max_iter`` caps the outer iterations; a :class:`RuntimeWarning` reports a gap
    left above ``tol``. A ValueError reports a non-Instance argument, an unknown
    divergence or method, or a bad ``tol`` / ``max_iter``.
    """
    instance = check_instance(instance)
    code = divergence_code(divergence)
    if method not in ("auto", "structured"):
        raise ValueError(f"method must be 'auto' or 'structured', got {method!r}")
    if not (isinstance(tol, (int, float)) and 0.0 < tol < 1.0):
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    th = instance.threshold
    n, m = means.shape
    name = divergence.lower()
    laws = pair_laws(means, code, laws)
    a, tie = answer_kernel(means, th)
    if a >= 0 and (tie >= 0 or means[a].min() <= th):
        return CharacteristicTime(math.inf, np.full((n, m), 1.0 / (n * m)), 0.0, 0.0, 0, 0.0, "degenerate", name)
    if a < 0:
        w = np.zeros((n, m))
        inv = np.empty(n)
        worst = np.empty(n, dtype=np.int64)
        for b in range(n):
            below = np.flatnonzero(means[b] < th)
            levels = [pair_divergence(means[b, j], th, 1.0 - th, code, laws, b, j) for j in below]
            worst[b] = below[int(np.argmax(levels))]
            inv[b] = 1.0 / max(levels)
        total = math.fsum(inv.tolist())
        for b in range(n):
            w[b, worst[b]] = inv[b] / total
        return CharacteristicTime(total, w, 1.0 / total, 0.0, 0, 1.0 / total, "closed-form", name)
    w, value, upper, iterations = _structured(means, th, a, code, laws, tol, int(max_iter))
    gap = (upper - value) / value
    if not gap <= tol:
        warnings.warn(
            f"characteristic_time({instance!r}): the certified relative gap {gap:.3g} exceeds tol = {tol:g}",
            RuntimeWarning,
            stacklevel=2,
        )
    return CharacteristicTime(1.0 / value, w, value, gap, iterations, upper, "structured", name)


def lower_bound_tstar(instance: Instance, delta: float, divergence: str = "bernoulli", *,
                      laws: str | Sequence = "beta") -> float:
    """``T*(mu) kl(delta, 1 - delta)``: Garivier & Kaufmann's (2016) bound on ``E[tau]``.

    ``kl`` is the Bernoulli KL whatever the divergence (data processing on the event
    "the answer is right").
    """
    delta = check_delta(delta)
    result = characteristic_time(instance, divergence, laws=laws)
    return result.T_star * kl_bernoulli_scalar(delta, 1.0 - delta)


def matching_divergence(reward: str) -> str:
    """The divergence of the limit that matches a reward model of the simulator.

    The algorithms are delta-correct for every law on [0, 1], so the limit uses
    ``K_inf`` of the simulated laws (Agrawal, Juneja & Glynn 2020): ``"kinf"`` for
    ``reward="beta"``, ``"bernoulli"`` (``K_inf`` of Bernoulli laws) for ``"bernoulli"``.
    """
    if reward not in ("beta", "bernoulli"):
        raise ValueError(f"unknown reward model {reward!r}; choose from ['bernoulli', 'beta']")
    return "kinf" if reward == "beta" else "bernoulli"
