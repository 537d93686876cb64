"""A certified solver of ``T*`` that scales: the answer's row outside, one small problem per arm.

Write the characteristic time in its homogeneous form (Garivier & Kaufmann 2016,
Theorem 1; the alternatives of :mod:`~gbai.limits.alternatives`)::

    T* = min sum_ij w_ij   s.t.  f_k(w) >= 1 for every alternative k,

where ``f_k(w) = min_{lambda in Alt_k} sum_ij w_ij d(mu_ij, lambda_ij)``. For a feasible
instance with answer ``a`` the alternatives are (A) ``w_aj d(mu_aj, th) >= 1``, one
per attribute, and (B) one per other arm ``b``, which involves only the rows ``a``
and ``b``. So, with the answer's row ``w_a`` fixed, the problem splits into one
problem per arm,

    g_b(w_a) = min sum_j w_bj  s.t.  f_b(w_a, w_b) >= 1,

and ``T* = min over w_aj >= 1/d(mu_aj, th) of  Phi(w_a) = sum_j w_aj + sum_b g_b(w_a)``,
a convex problem in M variables (``g_b`` is the partial minimum of a linear function
over a convex set). Our derivation, for this model:

* **The arm problem** (KKT conditions). At the optimum every pair of ``b`` is moved
  to the same divergence level ``c``: ``d(mu_bj, y_j) = c`` with ``y_j > max(mu_bj, th)``,
  its weight is ``w_bj = eta / d'(mu_bj, y_j)`` (``eta``: multiplier of the sum
  constraint of (B)), the answer's pairs sit at ``x_j(eta)`` with
  ``sum_j x_j = sum_j y_j``, and ``F(c) = sum_j w_aj d(mu_aj, x_j) + c eta sum_j 1/d'(mu_bj, y_j)``
  equals 1. For each ``c``, ``eta(c)`` is a one-dimensional root and ``F``
  decreases in ``c``, so ``c`` is a one-dimensional root too (Illinois regula falsi
  in ``log(c - c_0)``; Newton in ``eta``). An attribute of ``b`` below the threshold
  cannot go below level ``c_0 = max_{j: mu_bj < th} d(mu_bj, th)``; if ``F(c_0) < 1``
  the pair attaining ``c_0`` stays at ``th`` and takes the missing weight
  ``(1 - F(c_0)) / c_0``. For a feasible ``b``, ``F(0+)`` is the cost of moving the
  answer down to ``b``'s mean sum; when it is at most 1, ``g_b = inf``.
* **Its gradient** (envelope theorem): ``dg_b/dw_aj = -d(mu_aj, x_j) / c``.
* **The outer problem**: projected BFGS on ``log w_a`` with a backtracking line search
  that treats ``Phi = inf`` as a failed step; at most ``max_iter`` iterations.

**Certificate.** The lower bound on ``1/T*`` is ``min_k f_k(w) / sum w`` at the full
weight matrix, evaluated independently by the exact alternative kernels. The upper
bound is weak duality with the multipliers ``nu_b = 1/c_b`` and
``nu_Aj = max(0, dPhi/dw_aj) / d(mu_aj, th)``: ``1/T* <= max_ij sum_k nu_k D^k_ij /
sum_k nu_k`` for alternatives ``lambda^k`` in the closure of ``Alt(mu)`` and
``D^k_ij = d(mu_ij, lambda^k_ij)`` (the ``lambda^b`` built here satisfy
``sum y >= sum x`` and ``y >= th``). Both bounds are recomputed from scratch, so
the reported gap holds whatever the accuracy of the inner roots. At the optimum
all column sums are 1 and the two bounds meet.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .divergences import GAUSSIAN
from .pairs import pair_divergence, pair_level_up, pair_lower

__all__ = ["solve_structured"]

_ROOT_MAX_ITER = 200


@njit(cache=True)
def _a_side(code, mu_a, xa, xca, pa, w_a, target, eta_guess, x_out, d_out):
    """``eta`` with ``sum_j x_j(eta) <= target`` (as close as floats allow); fills x, d.

    ``sum_j x_j(eta)`` decreases from ``sum mu_a`` (eta = 0) to 0: Newton safeguarded
    by a doubling bracket and bisection. Returns ``(eta, sum_j w_aj d(mu_aj, x_j))``.
    """
    m = mu_a.shape[0]

    def evaluate(eta):
        total = 0.0
        slope = 0.0
        for j in range(m):
            x, d, dx = pair_lower(code, mu_a[j], xa[j], xca[j], pa[j], w_a[j], eta)
            x_out[j] = x
            d_out[j] = d
            total += x
            slope += dx
        return total - target, slope

    lo = 0.0
    hi = eta_guess if eta_guess > 0.0 else 1.0
    h_hi, _ = evaluate(hi)
    for _ in range(_ROOT_MAX_ITER):
        if h_hi <= 0.0:
            break
        lo = hi
        hi *= 2.0
        h_hi, _ = evaluate(hi)
    eta = eta_guess if lo < eta_guess < hi else 0.5 * (lo + hi)
    h = 1.0
    for _ in range(_ROOT_MAX_ITER):
        h, slope = evaluate(eta)
        if h > 0.0:
            lo = eta
        else:
            hi = eta
            if h > -1e-15 * target:
                break
        candidate = eta - h / slope if slope < 0.0 else math.nan
        if not (lo < candidate < hi):
            candidate = math.sqrt(lo * hi) if lo > 0.0 and hi > 16.0 * lo else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * hi:
            break
        eta = candidate
    if h > 0.0:
        eta = hi
        evaluate(eta)
    cost = 0.0
    for j in range(m):
        cost += w_a[j] * d_out[j]
    return eta, cost


@njit(cache=True)
def _level_point(code, mu_b, xb, xcb, pb, c, c0, j0, threshold, y_out, s_out):
    """Fill ``y_j`` at level ``c`` (``y_j0 = th`` when ``c == c0``) and ``1/d'``; return sums."""
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
        if j == j0 and c <= c0:
            # At th, with the derivative there (the least weight that holds it at th).
            _, slope = pair_level_up(code, mu_b[j], xb[j], xcb[j], pb[j], c0)
            y = threshold
        else:
            y, slope = pair_level_up(code, mu_b[j], xb[j], xcb[j], pb[j], c)
        y_out[j] = y
        # A level so small that y rounds onto the mean has slope 0: a huge weight.
        s_out[j] = 1.0 / max(slope, 1e-300)
        total += y
        omega += s_out[j]
    return total, omega


@njit(cache=True)
def _arm_problem(code, mu_a, xa, xca, pa, w_a, mu_b, xb, xcb, pb, threshold, c_guess, eta_guess,
                 x_out, d_out, y_out, wb_out):
    """Solve ``g_b(w_a)``; returns ``(g, c, eta)`` (``g = inf`` outside the domain)."""
    m = mu_b.shape[0]
    sum_a = 0.0
    for j in range(m):
        sum_a += mu_a[j]
    c0 = 0.0
    j0 = -1
    for j in range(m):
        if mu_b[j] < threshold:
            level = pair_divergence(code, mu_b[j], xb[j], xcb[j], pb[j], threshold)
            if level > c0:
                c0, j0 = level, j
    s_tmp = np.empty(m)
    if c0 == math.inf:
        # An attribute at 0 (a point mass) never reaches th: this alternative is
        # impossible whatever the weights, and b needs no weight.
        for j in range(m):
            x_out[j] = mu_a[j]
            d_out[j] = 0.0
            y_out[j] = mu_b[j]
            wb_out[j] = 0.0
        return 0.0, math.inf, 0.0

    def F(c, eta_start):
        total, omega = _level_point(code, mu_b, xb, xcb, pb, c, c0, j0, threshold, y_out, s_tmp)
        if total >= sum_a:
            for j in range(m):
                x_out[j] = mu_a[j]
                d_out[j] = 0.0
            return 0.0, 0.0, omega
        eta, cost = _a_side(code, mu_a, xa, xca, pa, w_a, total, eta_start, x_out, d_out)
        return cost + c * eta * omega, eta, omega

    if c0 > 0.0:
        f0, eta0, omega0 = F(c0, eta_guess)
        if f0 <= 1.0:
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
        _, limit = _a_side(code, mu_a, xa, xca, pa, w_a, total, eta_guess, x_out, d_out)
        if limit <= 1.0:
            return math.inf, 0.0, 0.0
    # Root of F(c0 + e^u) = 1 in u; F decreases.
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
def _phi(code, means, xs, xcs, ps, threshold, a, w_a, c_warm, eta_warm, X, D, Y, WB, C, E):
    """``Phi(w_a)`` and its gradient; fills the per-arm solutions (rows of X, D, Y, WB)."""
    n, m = means.shape
    value = 0.0
    grad = np.ones(m)
    for j in range(m):
        value += w_a[j]
    for b in range(n):
        if b == a:
            continue
        g, c, eta = _arm_problem(
            code, means[a], xs[a], xcs[a], ps[a], w_a, means[b], xs[b], xcs[b], ps[b], threshold,
            c_warm[b], eta_warm[b], X[b], D[b], Y[b], WB[b],
        )
        if not math.isfinite(g):
            return math.inf, grad
        C[b] = c
        E[b] = eta
        value += g
        for j in range(m):
            grad[j] -= D[b, j] / c
    return value, grad


@njit(cache=True)
def _column_sums(code, means, xs, xcs, ps, a, Y, D, C, alpha, nu_attr):
    """Largest ``sum_k nu_k D^k_ij`` over the pairs, and ``sum_k nu_k``."""
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
            d = pair_divergence(code, means[b, j], xs[b, j], xcs[b, j], ps[b, j], Y[b, j])
            best = max(best, d / C[b])
    for j in range(m):
        best = max(best, row_a[j])
    return best, total


def solve_structured(means, threshold, a, code, laws, exact_values, tol, max_iter):
    """Minimise ``Phi`` and certify; returns ``(w, lower, upper, iterations)`` (bounds on 1/T*).

    ``laws`` is ``(xs, xcs, ps)`` (empty third axis for the parametric divergences);
    ``exact_values(W)`` returns every alternative's value at a weight matrix.
    """
    xs, xcs, ps = laws
    n, m = means.shape
    alpha = np.array([pair_divergence(code, means[a, j], xs[a, j], xcs[a, j], ps[a, j], threshold) for j in range(m)])
    floor = 1.0 / alpha
    X = np.zeros((n, m))
    D = np.zeros((n, m))
    Y = np.zeros((n, m))
    WB = np.zeros((n, m))
    C = np.zeros(n)
    E = np.zeros(n)

    def phi(w_a):
        return _phi(code, means, xs, xcs, ps, threshold, a, w_a, C.copy(), E.copy(), X, D, Y, WB, C, E)

    # Start: the A-floor, raised uniformly until every arm problem is solvable.
    w_a = np.maximum(floor, floor.max())
    value, grad = phi(w_a)
    for _ in range(200):
        if math.isfinite(value):
            break
        w_a = 2.0 * w_a
        value, grad = phi(w_a)
    best = (-math.inf, math.inf, None)
    log_w = np.log(w_a)
    log_floor = np.log(floor)
    H = np.eye(m)
    first = True
    iterations = 0
    for iterations in range(1, max_iter + 1):
        # ---- certificate at the current point
        W = WB.copy()
        W[a] = w_a
        lower = float(exact_values(W).min()) / float(W.sum())
        nu_attr = np.maximum(grad, 0.0) / alpha
        column_max, nu_total = _column_sums(code, means, xs, xcs, ps, a, Y, D, C, alpha, nu_attr)
        upper = column_max / nu_total
        if lower > best[0]:
            best = (lower, best[1], W / W.sum())
        best = (best[0], min(best[1], upper), best[2])
        if best[1] - best[0] <= tol * best[0]:
            break
        # ---- projected quasi-Newton step in log w
        g_log = grad * w_a
        free = ~((log_w <= log_floor + 1e-15) & (g_log > 0.0))
        direction = np.zeros(m)
        if first:
            direction[free] = -g_log[free] / max(np.abs(g_log[free]).max(), 1e-300) * 0.5
        else:
            direction[free] = -(H[np.ix_(free, free)] @ g_log[free])
        t = 1.0
        accepted = False
        for _ in range(60):
            trial = np.maximum(log_w + t * direction, log_floor)
            w_trial = np.exp(trial)
            v_trial, g_trial = phi(w_trial)
            if math.isfinite(v_trial) and v_trial <= value + 1e-4 * float(g_log @ (trial - log_w)):
                accepted = True
                break
            t *= 0.5
        if not accepted:
            phi(w_a)  # restore the arm solutions of the incumbent
            break
        s = trial - log_w
        yv = g_trial * w_trial - g_log
        sy = float(s @ yv)
        if sy > 1e-300:
            if first:
                H = np.eye(m) * sy / float(yv @ yv)
            rho = 1.0 / sy
            V = np.eye(m) - rho * np.outer(s, yv)
            H = V @ H @ V.T + rho * np.outer(s, s)
            first = False
        log_w, w_a, value, grad = trial, w_trial, v_trial, g_trial
    return best[2], best[0], best[1], iterations
