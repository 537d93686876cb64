"""Information-theoretic lower bounds for constrained best-arm identification.

Two kinds of lower bound on the expected sample complexity are provided.

1. The *characteristic time* ``T*(mu)`` of Garivier & Kaufmann (2016, "Optimal best
   arm identification with fixed confidence", Theorem 1): every delta-correct
   algorithm satisfies ``E[tau] >= T*(mu) kl(delta, 1 - delta)`` with

       1 / T*(mu) = max_{w in simplex} inf_{lambda in Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij),

   where the simplex has one entry per arm-attribute pair (a sample is one draw of
   one pair, reading note 1) and ``Alt(mu)`` is the set of mean matrices whose
   answer differs from that of ``mu``. The inner infimum, the *best response*, is
   also the generalised likelihood ratio (GLR) statistic when ``w`` holds sample
   counts and ``mu`` empirical means, so it is implemented as a numba kernel that a
   compiled stopping rule can call every round.

2. The constant of Theorem 1 of the paper (Section III, proved in the appendix
   "PROOF OF LOWER BOUND"): ``E[tau] >= ln(1/(2.4 delta)) C(nu, mu_TH) H_id``.

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

Divergences: ``"bernoulli"`` (default) is the Bernoulli KL divergence, the model
of the paper's appendix. It is also valid for any rewards in [0, 1]: a
distribution on [0, 1] with mean ``p`` has, for every ``q`` in (0, 1), a
distribution on [0, 1] with mean ``q`` at KL divergence at most ``kl(p, q)`` from it,
so the Bernoulli ``T*`` is at most that of the model of all [0, 1]-valued rewards.
Alternatives then stay in [0, 1].
``"gaussian"`` is the KL divergence of Gaussians with variance 1/4,
``d(p, q) = 2 (p - q)^2``; Gaussian means range over the whole real line, so the
alternatives are not confined to [0, 1] in that case.

Zero weights: a pair with ``w_ij = 0`` moves for free (its cost ``0 * d`` is 0
even when ``d`` is infinite). In (B) such a pair of arm ``a`` may drop to 0 and
such a pair of arm ``b`` may rise to 1 (Bernoulli; without limit for Gaussian).
When these free moves alone close the gap, the minimiser is not unique and the one
returned is the limit of the unique minimisers for weights ``eps -> 0`` on those
pairs (see :func:`_overtake`); otherwise they sit at 0 / 1.

Arm and attribute indices are 0-based, as everywhere in the package.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit, vectorize
from scipy.optimize import linprog, minimize

from .model import MEAN_TOLERANCE, Instance, check_delta

__all__ = [
    "DIVERGENCES",
    "KIND_NAMES",
    "BestResponse",
    "CharacteristicTime",
    "alternative_values",
    "benchmark_lower_bounds",
    "best_response",
    "characteristic_time",
    "hardness_report",
    "kl_bernoulli",
    "kl_bernoulli_scalar",
    "kl_gaussian",
    "kl_gaussian_scalar",
    "lower_bound_tstar",
    "theorem1_bound",
    "theorem1_constants",
]

#: Divergence names and the integer codes the kernels take.
DIVERGENCES = {"bernoulli": 0, "gaussian": 1}
_BERNOULLI = 0
_GAUSSIAN = 1

#: Kind codes of the alternatives (the kernels return the code, the API the name).
KIND_BEST_INFEASIBLE = 0  # (A)
KIND_OVERTAKE = 1  # (B)
KIND_BECOME_FEASIBLE = 2  # (C)
KIND_TIE = 3
KIND_NAMES = ("best-infeasible", "overtake", "become-feasible", "tie")

_ROOT_MAX_ITER = 200
#: Points of the segment from the incumbent (0) to the cutting-plane point (1) at
#: which each cutting-plane iteration evaluates the best responses.
_SEGMENT = (1.0, 0.5, 0.25, 0.1)
_BRACKET_MAX_ITER = 200


# =====================================================================================
# Divergences
# =====================================================================================
@njit(cache=True)
def _phi(t):
    """``t ln t - t + 1`` for ``t >= 0`` (0 at t = 1, 1 at t = 0), accurate near t = 1."""
    if t == 0.0:
        return 1.0
    u = t - 1.0
    if abs(u) < 1e-2:
        # Taylor series sum_{k>=2} (-1)^k u^k / (k (k-1)); the first omitted term is
        # u^9/72, below 1e-14 of the sum u^2/2 for |u| < 1e-2.
        u2 = u * u
        return u2 * (
            0.5
            - u / 6.0
            + u2 / 12.0
            - u2 * u / 20.0
            + u2 * u2 / 30.0
            - u2 * u2 * u / 42.0
            + u2 * u2 * u2 / 56.0
        )
    if abs(u) < 0.5:
        return t * math.log1p(u) - u
    return t * math.log(t) - u


@njit(cache=True)
def _kl_bernoulli_complements(p, p_c, q, q_c):
    """Bernoulli KL ``d(p, q)`` given ``p_c = 1 - p`` and ``q_c = 1 - q`` separately.

    Passing the complements lets a caller that knows ``1 - q`` more accurately than
    ``1.0 - q`` (e.g. ``q = 1 - 1e-30``) get a finite, accurate value. For
    ``0 < q < 1`` it is ``q phi(p/q) + (1-q) phi((1-p)/(1-q))`` with
    ``phi(t) = t ln t - t + 1 >= 0``: both terms are non-negative, so there is no
    cancellation when ``p`` is close to ``q``. It is ``+inf`` when ``q`` is 0 or 1
    and ``p != q``; ``0 ln 0 = 0``.
    """
    if p == q:
        return 0.0
    if q <= 0.0:
        return 0.0 if p <= 0.0 else math.inf
    if q_c <= 0.0:
        return 0.0 if p_c <= 0.0 else math.inf
    return q * _phi(p / q) + q_c * _phi(p_c / q_c)


@njit(cache=True)
def _kl_bernoulli_scalar(p, q):
    """Bernoulli KL ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`` for p, q in [0, 1]."""
    return _kl_bernoulli_complements(p, 1.0 - p, q, 1.0 - q)


@njit(cache=True)
def _kl_gaussian_scalar(p, q):
    """KL divergence of Gaussians with variance 1/4: ``(p - q)^2 / (2 * 1/4)``."""
    diff = p - q
    return 2.0 * diff * diff


@njit(cache=True)
def _divergence(p, q, code):
    if code == _BERNOULLI:
        return _kl_bernoulli_scalar(p, q)
    return _kl_gaussian_scalar(p, q)


#: Compiled scalar divergences, callable from other numba kernels (no validation).
kl_bernoulli_scalar = _kl_bernoulli_scalar
kl_gaussian_scalar = _kl_gaussian_scalar


@vectorize(["float64(float64, float64)"], cache=True)
def _kl_bernoulli_ufunc(p, q):
    return _kl_bernoulli_scalar(p, q)


@vectorize(["float64(float64, float64)"], cache=True)
def _kl_gaussian_ufunc(p, q):
    return _kl_gaussian_scalar(p, q)


def _as_probabilities(value, name):
    array = np.asarray(value, dtype=np.float64)
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN")
    if ((array < 0.0) | (array > 1.0)).any():
        raise ValueError(f"{name} must lie in [0, 1] for the Bernoulli divergence")
    return array


def kl_bernoulli(p, q):
    """Bernoulli KL divergence ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``.

    Broadcasts like a numpy ufunc and returns a float for scalar input. Conventions:
    ``0 ln 0 = 0``; the value is ``+inf`` when ``q`` is 0 or 1 and ``p != q``.
    Arguments outside [0, 1] or NaN raise ValueError (nothing is clipped).
    """
    p_arr = _as_probabilities(p, "p")
    q_arr = _as_probabilities(q, "q")
    result = _kl_bernoulli_ufunc(p_arr, q_arr)
    return float(result) if np.ndim(result) == 0 else result


def kl_gaussian(p, q):
    """KL divergence of two Gaussians of variance 1/4: ``d(p, q) = 2 (p - q)^2``.

    Broadcasts like a numpy ufunc; NaN raises ValueError. Any real means are allowed.
    """
    p_arr = np.asarray(p, dtype=np.float64)
    q_arr = np.asarray(q, dtype=np.float64)
    if np.isnan(p_arr).any() or np.isnan(q_arr).any():
        raise ValueError("kl_gaussian: arguments contain NaN")
    result = _kl_gaussian_ufunc(p_arr, q_arr)
    return float(result) if np.ndim(result) == 0 else result


# =====================================================================================
# Kernels: answer and the three families of alternatives
# =====================================================================================
@njit(cache=True)
def _answer_kernel(means, threshold):
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
def _bernoulli_lower_root(mu, mu_c, w, eta):
    """``x = argmin_{x <= mu} w d(mu, x) + eta x`` for ``w, eta > 0``: ``(x, 1 - x, dx/deta)``.

    ``x`` is the smaller root of ``eta x^2 - (w + eta) x + w mu = 0``, evaluated in
    the rationalised form ``2 w mu / ((w + eta) + s)`` with
    ``s^2 = (w - eta)^2 + 4 eta w (1 - mu)`` (a sum of non-negative terms). ``1 - x``
    is the larger root of the reflected equation ``eta t^2 + (w - eta) t - w (1 - mu)
    = 0``, written for either sign of ``w - eta`` so that nothing cancels. Both are
    accurate to a few ulps relative to themselves, so the divergence stays finite
    and accurate even when ``x`` is within an ulp of 0 or 1.
    """
    diff = w - eta
    s = math.sqrt(diff * diff + 4.0 * eta * w * mu_c)
    x = 2.0 * w * mu / ((w + eta) + s)
    if diff > 0.0:
        x_c = 2.0 * w * mu_c / (diff + s)
    elif diff < 0.0:
        x_c = (s - diff) / (2.0 * eta)
    else:
        x_c = math.sqrt(mu_c)  # w = eta: the root sqrt(w^2 mu_c)/eta
    if x >= mu:
        return mu, mu_c, 0.0
    if x > 0.0 and x_c > 0.0:
        second = mu_c / (x_c * x_c)
        if mu > 0.0:
            second += mu / (x * x)
        return x, x_c, -1.0 / (w * second)
    return x, x_c, 0.0


@njit(cache=True)
def _lower_point(mu, w, eta, code):
    """``x(eta) = argmin_x w d(mu, x) + eta x`` (x <= mu): ``(x, 1 - x, dx/deta)``, eta > 0.

    A zero-weight pair drops to 0 for free (Bernoulli).
    """
    if code == _BERNOULLI:
        if w == 0.0:
            return 0.0, 1.0, 0.0
        return _bernoulli_lower_root(mu, 1.0 - mu, w, eta)
    # Gaussian (w > 0 here: zero weights are settled at eta = 0, see _overtake).
    x = mu - eta / (4.0 * w)
    return x, 1.0 - x, -1.0 / (4.0 * w)


@njit(cache=True)
def _upper_point(mu, w, eta, threshold, code):
    """``y(eta) = max(th, argmin_y w d(mu, y) - eta y)`` (y >= mu): ``(y, 1 - y, dy/deta)``.

    Bernoulli: by the symmetry ``d(mu, y) = d(1 - mu, 1 - y)``, ``1 - y`` is the
    lower root for ``1 - mu``. A zero-weight pair rises to 1 for free.
    """
    if code == _BERNOULLI:
        if w == 0.0:
            y, y_c, dy = 1.0, 0.0, 0.0
        else:
            y_c, y, dy_c = _bernoulli_lower_root(1.0 - mu, mu, w, eta)
            dy = -dy_c
    else:
        y = mu + eta / (4.0 * w)
        y_c = 1.0 - y
        dy = 1.0 / (4.0 * w)
    if y < threshold:
        return threshold, 1.0 - threshold, 0.0
    return y, y_c, dy


@njit(cache=True)
def _pair_cost(mu, value, value_c, w, code):
    """``w d(mu, value)`` with ``value_c = 1 - value``; 0 for a zero weight."""
    if w == 0.0:
        return 0.0
    if code == _BERNOULLI:
        return w * _kl_bernoulli_complements(mu, 1.0 - mu, value, value_c)
    return w * _kl_gaussian_scalar(mu, value)


@njit(cache=True)
def _overtake_g(means, threshold, weights, a, b, eta, code, free_mode, x, y):
    """Fill ``x = x(eta)``, ``y = y(eta)``; return ``g(eta) = sum y - sum x`` and ``g'``.

    With ``free_mode`` the pairs of positive weight stay where they are at
    ``eta = 0`` and only the zero-weight pairs move, as if they had weight 1 (see
    :func:`_overtake`).
    """
    m = means.shape[1]
    g = 0.0
    dg = 0.0
    for j in range(m):
        w_a = weights[a, j]
        w_b = weights[b, j]
        if free_mode:
            if w_a > 0.0:
                xj, dxj = means[a, j], 0.0
            else:
                xj, _, dxj = _lower_point(means[a, j], 1.0, eta, code)
            if w_b > 0.0:
                yj, dyj = max(threshold, means[b, j]), 0.0
            else:
                yj, _, dyj = _upper_point(means[b, j], 1.0, eta, threshold, code)
        else:
            xj, _, dxj = _lower_point(means[a, j], w_a, eta, code)
            yj, _, dyj = _upper_point(means[b, j], w_b, eta, threshold, code)
        x[j] = xj
        y[j] = yj
        g += yj - xj
        dg += dyj - dxj
    return g, dg


@njit(cache=True)
def _solve_eta(means, threshold, weights, a, b, code, free_mode, hi, guess, x, y):
    """Root of the increasing ``g`` on ``(0, inf)`` given ``g(0+) < 0``; fills ``x, y``.

    ``hi`` is a first guess of a point with ``g(hi) >= 0``; it is doubled until that
    holds (at most 200 times). ``guess`` is a starting point (used when inside the
    bracket). Then a safeguarded Newton iteration (bisection, or
    geometric bisection on a wide bracket, whenever Newton leaves the bracket or
    does not halve the step) runs until the bracket or the step is below 1e-15
    relative, at most 200 iterations. Finally ``eta`` is moved right by a few ulps
    if needed so that ``g(eta) >= 0``: the alternative returned satisfies the sum
    constraint. Returns ``eta``.
    """
    lo = 0.0
    g_hi, _ = _overtake_g(means, threshold, weights, a, b, hi, code, free_mode, x, y)
    for _ in range(_BRACKET_MAX_ITER):
        if g_hi >= 0.0:
            break
        lo = hi
        hi *= 2.0
        g_hi, _ = _overtake_g(means, threshold, weights, a, b, hi, code, free_mode, x, y)
    eta = guess if lo < guess < hi else 0.5 * (lo + hi)
    previous_step = hi - lo
    g = 0.0
    dg = 0.0
    fresh = False  # x, y, g hold the values at the current eta
    for _ in range(_ROOT_MAX_ITER):
        g, dg = _overtake_g(means, threshold, weights, a, b, eta, code, free_mode, x, y)
        fresh = True
        if g == 0.0:
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
        g, dg = _overtake_g(means, threshold, weights, a, b, eta, code, free_mode, x, y)
    if g < 0.0:
        # Newton may converge from the left (g < 0 by a few ulps): step right by
        # doubling increments until g >= 0; g(hi) >= 0, so at most 64 steps.
        bump = max(-g / dg if dg > 0.0 else 0.0, 1e-16 * eta)
        for _ in range(64):
            trial = min(eta + bump, hi)
            g, dg = _overtake_g(means, threshold, weights, a, b, trial, code, free_mode, x, y)
            if g >= 0.0 or trial == hi:
                eta = trial
                break
            bump *= 2.0
    return eta


@njit(cache=True)
def _overtake(means, threshold, weights, a, b, code, x, y):
    """Cost of alternative (B): arm ``b`` feasible with mean >= arm ``a``'s.

    Fills ``x`` (the new attribute means of ``a``) and ``y`` (of ``b``) and returns
    the minimal cost. See the module docstring for the derivation.

    Zero-weight pairs: if moving them alone can close the gap left at ``eta = 0``
    (their *capacity*: down to 0 for a pair of ``a``, up to 1 for a pair of ``b``,
    unlimited for Gaussian), the cost is that of ``eta = 0``. The minimiser is then
    not unique; we return the limit, as ``eps -> 0``, of the unique minimiser when
    the zero weights are replaced by ``eps``: the free pairs share the gap as if they
    had weight 1 (the same root finding, on those pairs only). This keeps their
    divergences finite, which the certificate of :func:`characteristic_time` needs.
    """
    m = means.shape[1]
    # ---- eta = 0: only the attributes of b below the threshold move (to th).
    base_cost = 0.0
    deficit = 0.0
    n_free = 0
    capacity = 0.0
    for j in range(m):
        x[j] = means[a, j]
        mu_b = means[b, j]
        if mu_b < threshold:
            if weights[b, j] > 0.0:
                base_cost += weights[b, j] * _divergence(mu_b, threshold, code)
            y[j] = threshold
        else:
            y[j] = mu_b
        deficit += x[j] - y[j]
        if weights[a, j] == 0.0:
            n_free += 1
            capacity += math.inf if code == _GAUSSIAN else x[j]
        if weights[b, j] == 0.0:
            n_free += 1
            capacity += math.inf if code == _GAUSSIAN else 1.0 - y[j]
    if deficit <= 0.0:
        return base_cost
    # ---- Still eta = 0 if the zero-weight pairs, which move for free, cover the deficit.
    if capacity > deficit:
        if code == _BERNOULLI:
            # x <= 2/eta on a free pair of a and y >= 1 - 2/eta on one of b.
            hi = 2.0 * n_free / (capacity - deficit)
        else:
            hi = 4.0 * deficit / n_free
        _solve_eta(means, threshold, weights, a, b, code, True, hi, -1.0, x, y)
        return base_cost
    if capacity == deficit:
        # Only the extreme point works: every free pair at its bound.
        for j in range(m):
            if weights[a, j] == 0.0:
                x[j] = 0.0
            if weights[b, j] == 0.0:
                y[j] = 1.0
        return base_cost
    # ---- eta > 0: root of the increasing function g.
    # Bernoulli: 0 <= x_j <= 2 w_aj / eta and y_j >= 1 - 2 w_bj / eta, so
    # g(eta) >= M - 2 W / eta >= 0 for eta >= 2 W / M (W = total weight of a and b).
    # Gaussian (all weights > 0 here): g(eta) >= -deficit + eta sum_j 1/(4 w_aj).
    # Starting point: the local (Gaussian) approximation x_j ~ mu_aj - eta v_aj / w_aj,
    # y_j ~ mu_bj + eta v_bj / w_bj (v = mu (1 - mu) for Bernoulli, 1/4 for Gaussian;
    # pairs of b below th stay clamped) gives g(eta) ~ -deficit + eta * slope.
    slope = 0.0
    if code == _BERNOULLI:
        total_w = 0.0
        for j in range(m):
            total_w += weights[a, j] + weights[b, j]
            if weights[a, j] > 0.0:
                slope += means[a, j] * (1.0 - means[a, j]) / weights[a, j]
            if means[b, j] >= threshold and weights[b, j] > 0.0:
                slope += means[b, j] * (1.0 - means[b, j]) / weights[b, j]
        hi = 2.0 * total_w / m
    else:
        inv_sum = 0.0
        for j in range(m):
            inv_sum += 1.0 / (4.0 * weights[a, j])
            if means[b, j] >= threshold:
                slope += 1.0 / (4.0 * weights[b, j])
        slope += inv_sum
        hi = deficit / inv_sum
    guess = deficit / slope if slope > 0.0 else -1.0
    eta = _solve_eta(means, threshold, weights, a, b, code, False, hi, guess, x, y)
    # The cost at the final eta, from the roots and their complements (accurate
    # even when a point of tiny weight lies within an ulp of 0 or 1).
    cost = 0.0
    for j in range(m):
        xj, xj_c, _ = _lower_point(means[a, j], weights[a, j], eta, code)
        yj, yj_c, _ = _upper_point(means[b, j], weights[b, j], eta, threshold, code)
        x[j] = xj
        y[j] = yj
        cost += _pair_cost(means[a, j], xj, xj_c, weights[a, j], code)
        cost += _pair_cost(means[b, j], yj, yj_c, weights[b, j], code)
    return cost


@njit(cache=True)
def _become_feasible(means, threshold, weights, b, code):
    """Cost of alternative (C): raise every attribute of arm ``b`` below th to th."""
    m = means.shape[1]
    cost = 0.0
    for j in range(m):
        if means[b, j] < threshold and weights[b, j] > 0.0:
            cost += weights[b, j] * _divergence(means[b, j], threshold, code)
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
def _best_response_kernel(means, threshold, weights, code):
    """Best response ``min_{lambda in cl Alt(mu)} sum w d(mu, lambda)`` and a minimiser.

    Returns ``(value, lam, kind_code, arm_b, attr_j)``: ``arm_b`` is the arm made
    better (B), made feasible (C) or tied (tie), -1 for (A); ``attr_j`` is the
    attribute of the answer pushed to the threshold in (A), -1 otherwise.
    """
    n, m = means.shape
    lam = means.copy()
    a, tie = _answer_kernel(means, threshold)
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
            cost = weights[a, j] * _divergence(means[a, j], threshold, code)
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
        cost = _overtake(means, threshold, weights, a, b, code, x, y)
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
def _alternatives_kernel(means, threshold, weights, code, want_lambdas):
    """The cost of every alternative separately (for per-alternative stopping rules).

    Returns ``(kinds, arms, attrs, values, lams)``. Feasible ``mu`` (answer ``a``): the
    first M entries are (A) for ``j = 0..M-1`` (``arms = a``), then (B) for every
    ``b != a`` in increasing order (``arms = b``, ``attrs = -1``). Infeasible ``mu``:
    (C) for every arm ``b``. A (B) entry for an arm tied with ``a`` has value 0.
    ``lams`` has shape (K, N, M) when ``want_lambdas`` and (0, N, M) otherwise.
    """
    n, m = means.shape
    a, _ = _answer_kernel(means, threshold)
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
            cost = weights[a, j] * _divergence(means[a, j], threshold, code)
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
            values[k] = _overtake(means, threshold, weights, a, b, code, x, y)
        if want_lambdas:
            lams[k] = means
            lams[k, a, :] = x
            lams[k, b, :] = y
        k += 1
    return kinds, arms, attrs, values, lams


@njit(cache=True)
def _alternative_values_kernel(means, threshold, weights, code):
    """``(kinds, arms, attrs, values)`` of every alternative, without the lambdas."""
    kinds, arms, attrs, values, _ = _alternatives_kernel(means, threshold, weights, code, False)
    return kinds, arms, attrs, values


@njit(cache=True)
def _divergence_columns(means, lams, code):
    """``D[k, i, j] = d(mu_ij, lams[k, i, j])``: by Danskin's theorem, the gradient in ``w``."""
    count, n, m = lams.shape
    out = np.zeros((count, n, m))
    for k in range(count):
        for i in range(n):
            for j in range(m):
                if lams[k, i, j] != means[i, j]:
                    out[k, i, j] = _divergence(means[i, j], lams[k, i, j], code)
    return out


# =====================================================================================
# Public best response
# =====================================================================================
def _divergence_code(divergence) -> int:
    if not isinstance(divergence, str) or divergence.lower() not in DIVERGENCES:
        raise ValueError(
            f"unknown divergence {divergence!r}; choose from {sorted(DIVERGENCES)}"
        )
    return DIVERGENCES[divergence.lower()]


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


def best_response(means, threshold, weights, divergence: str = "bernoulli") -> BestResponse:
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
        ``"bernoulli"`` (default) or ``"gaussian"`` (variance 1/4).

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
    code = _divergence_code(divergence)
    means_arr, th, w = _check_problem(means, threshold, weights)
    value, lam, kind, arm_b, attr_j = _best_response_kernel(means_arr, th, w, code)
    a, _ = _answer_kernel(means_arr, th)
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


def alternative_values(means, threshold, weights, divergence: str = "bernoulli") -> dict:
    """The cost of every alternative separately, as columns of equal length.

    Returns a dict of 1-D arrays, ready for ``pandas.DataFrame``: ``kind`` (names from
    :data:`KIND_NAMES`), ``arm`` (the answer's arm ``a`` for (A), the arm ``b`` for
    (B) and (C)), ``attribute`` (``j`` for (A), -1 otherwise) and ``value``. The
    rows are: for a feasible ``mu``, (A) for each attribute of the answer then (B)
    for each other arm in index order (a (B) row for an arm tied with the answer has
    value 0); for an infeasible ``mu``, (C) for each arm. The minimum of ``value``
    is :func:`best_response`'s value except for a tie, where the latter is 0.
    """
    code = _divergence_code(divergence)
    means_arr, th, w = _check_problem(means, threshold, weights)
    kinds, arms, attrs, values = _alternative_values_kernel(means_arr, th, w, code)
    return {
        "kind": np.array([KIND_NAMES[k] for k in kinds]),
        "arm": arms,
        "attribute": attrs,
        "value": values,
    }


# =====================================================================================
# Characteristic time
# =====================================================================================
@dataclass(frozen=True, eq=False)
class CharacteristicTime:
    """``T*(mu)`` and the optimal proportions (Garivier & Kaufmann 2016).

    ``value`` is ``1/T*``, the max-min value achieved by ``w_star`` (a certified lower
    bound on the true max-min); ``value_upper`` is a certified upper bound (weak
    duality, see :func:`characteristic_time`) and ``gap = (value_upper - value) /
    value``. Hence ``T_star = 1/value`` is never below the true ``T*`` and exceeds
    it by a relative amount of at most ``gap``. ``iterations`` counts optimiser plus
    cutting-plane iterations (0 for the closed forms). ``method`` names how it was
    obtained: ``"closed-form"``, ``"slsqp+lp"`` or ``"degenerate"`` (``T* = inf``).
    """

    T_star: float
    w_star: np.ndarray
    value: float
    gap: float
    iterations: int
    value_upper: float = math.nan
    method: str = ""
    divergence: str = "bernoulli"


def _check_instance(instance) -> Instance:
    if not isinstance(instance, Instance):
        raise ValueError(f"expected a gbai.Instance, got {type(instance).__name__}")
    return instance


class _Oracle:
    """Evaluates every alternative at a flat weight vector, with a one-entry cache."""

    def __init__(self, means, threshold, code):
        self.means = means
        self.threshold = threshold
        self.code = code
        self.shape = means.shape
        self._key = None
        self._values = None
        self._columns = None
        self.calls = 0

    def __call__(self, w_flat):
        key = w_flat.tobytes()
        if key != self._key:
            w = np.ascontiguousarray(w_flat.reshape(self.shape))
            _, _, _, values, lams = _alternatives_kernel(self.means, self.threshold, w, self.code, True)
            columns = _divergence_columns(self.means, lams, self.code).reshape(len(values), -1)
            self._key, self._values, self._columns = key, values, columns
            self.calls += 1
        return self._values, self._columns


def _lp_certificate(columns, scale):
    """``min_q max_p sum_k q_k D_kp``: returns (upper bound, q, dual w) or None.

    The upper bound is recomputed from the clipped, renormalised ``q``, so it is a
    valid bound whatever the LP solver's tolerances (weak duality).
    """
    finite = np.isfinite(columns).all(axis=1)
    D = columns[finite] / scale
    count, pairs = D.shape
    if count == 0:
        return None
    c = np.zeros(count + 1)
    c[-1] = 1.0
    a_ub = np.hstack([D.T, -np.ones((pairs, 1))])
    a_eq = np.zeros((1, count + 1))
    a_eq[0, :count] = 1.0
    bounds = [(0.0, None)] * count + [(None, None)]
    # Tight tolerances: near-ties give optimal mixtures with weights ~1e-8 on
    # columns whose entries are ~1e8 times the value (HiGHS defaults: 1e-7).
    for options in (
        {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
        {},
    ):
        res = linprog(
            c,
            A_ub=a_ub,
            b_ub=np.zeros(pairs),
            A_eq=a_eq,
            b_eq=[1.0],
            bounds=bounds,
            method="highs",
            options=options,
        )
        if res.status == 0:
            break
    else:
        return None
    q = np.clip(res.x[:count], 0.0, None)
    q /= q.sum()
    upper = float((columns[finite].T @ q).max())
    w = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
    w = np.clip(w, 0.0, None)
    w = w / w.sum() if w.sum() > 0 else np.full(pairs, 1.0 / pairs)
    return upper, q, w


def _initial_weights(means, threshold, code):
    """A heuristic start for the optimiser.

    Arm totals are inversely proportional to the cost of the arm's cheapest
    alternative at uniform weights (each alternative's cost is roughly proportional
    to the weight of the arm it moves: ``a`` for (A), ``b`` for (B) and (C)), which
    roughly equalises the alternatives as the optimum does; the answer gets at least
    the largest share, since it enters every (B). Within an infeasible arm the
    weight goes to the attributes below the threshold (in proportion to
    ``1 / d(mu_bj, th)``), where the optimum usually puts all of it: the other
    attributes of such an arm can then move for free.
    """
    n, m = means.shape
    uniform = np.full((n, m), 1.0 / (n * m))
    _, arms, _, values = _alternative_values_kernel(means, threshold, uniform, code)
    cheapest = np.full(n, np.inf)
    for arm, value in zip(arms, values):
        cheapest[arm] = min(cheapest[arm], value)
    usable = np.isfinite(cheapest) & (cheapest > 0.0)
    if not usable.any():
        return uniform
    totals = np.zeros(n)
    totals[usable] = 1.0 / cheapest[usable]
    totals[~usable] = totals[usable].min()
    a, _ = _answer_kernel(means, threshold)
    if a >= 0:
        totals[a] = totals.max()
    totals /= totals.sum()
    w = np.empty((n, m))
    for i in range(n):
        below = means[i] < threshold
        if below.any() and i != a:
            share = np.zeros(m)
            for j in np.flatnonzero(below):
                share[j] = 1.0 / _divergence(means[i, j], threshold, code)
        else:
            share = np.ones(m)
        w[i] = totals[i] * share / share.sum()
    return w


class _StopOptimiser(StopIteration):
    pass


_WEIGHT_FLOOR = 1e-12


class _MaxMinSolver:
    """Certified numerical solution of ``max_{w in simplex} min_k f_k(w)``.

    ``f_k`` is the cost of alternative ``k`` (concave and positively homogeneous in
    ``w``; its gradient is ``D^k = d(mu, lambda^k(w))`` by Danskin's theorem). The
    solver keeps

    * an incumbent ``w`` and its value ``L = min_k f_k(w)``, a lower bound;
    * every distinct column ``D^k`` met, and the certified upper bound
      ``U = max_p sum_k q_k D^k_p`` for the mixture ``q`` solving the LP
      ``min_q max_p sum_k q_k D^k_p`` (weak duality: for fixed alternatives the
      objective is linear in ``w`` and its maximum over the simplex is its largest
      coordinate).

    Stages (each stops as soon as ``(U - L) / L <= tol``):

    1. SLSQP on the epigraph problem ``max z s.t. z <= f_k(w), sum w = 1``,
       certified every 5 iterations; it is abandoned when 30 iterations do not halve
       the gap. It stalls when some optimal weights are exactly 0 (this happens: an
       infeasible arm whose other attributes have weight 0 can move them for free).
    2. Active-set polish: SLSQP again with the weights that are negligible in the
       incumbent (below 1e-8 of the largest) fixed at 0; the problem is then smooth
       and converges fast.
    3. Kelley's cutting planes: the LP's dual solution gives a new point; the best
       responses on the segment from the incumbent to it add columns. A polish is
       retried every 10 iterations; the loop stops after ``max_iter`` iterations or
       when 50 iterations improved the gap by less than 1%.
    """

    def __init__(self, means, threshold, code, tol, max_iter):
        self.means = means
        self.threshold = threshold
        self.code = code
        self.tol = tol
        self.max_iter = max_iter
        self.shape = means.shape
        self.pairs = means.size
        self.oracle = _Oracle(means, threshold, code)
        self.columns: dict[bytes, np.ndarray] = {}
        self.upper = math.inf
        self.certificate = None
        self.history: list[float] = []
        self.iterations = 0
        w0 = _initial_weights(means, threshold, code).ravel()
        if not float(self.oracle(w0)[0].min()) > 0.0:
            w0 = np.full(self.pairs, 1.0 / self.pairs)
        self.w = w0
        self.value = float(self.oracle(w0)[0].min())
        self.scale = self.value  # the objective is divided by it (values near 1)
        self.consider(w0)

    # ------------------------------------------------------------ bookkeeping
    def consider(self, w):
        """Evaluate a point of the simplex, keep its new columns, update the incumbent.

        Weights are floored at 1e-12 (and renormalised) so that no pair moves to 0
        or 1 for free, which would make its column infinite and useless.
        """
        w = np.maximum(w, _WEIGHT_FLOOR)
        w /= w.sum()
        values, columns = self.oracle(w)
        for column in columns:
            self.columns.setdefault(column.tobytes(), column)
        value = float(values.min())
        if value > self.value:
            self.w, self.value = w.copy(), value

    def certify(self) -> bool:
        """Refresh the upper bound; True when the relative gap is at most ``tol``."""
        self.certificate = _lp_certificate(np.array(list(self.columns.values())), self.scale)
        if self.certificate is not None:
            self.upper = min(self.upper, self.certificate[0])
        gap = (self.upper - self.value) / self.value
        self.history.append(gap)
        return gap <= self.tol

    # ------------------------------------------------------------------ SLSQP
    def slsqp(self, start, keep, maxiter, watch):
        """SLSQP on the weights ``keep`` (the others fixed at 0), from ``start``.

        The variables are the weights divided by their starting values (floored at
        1e-3 of the largest): SLSQP's first Hessian guess is the identity, and in
        these units its first steps are relative changes of the weights, instead of
        absolute changes of order 1 that throw the small weights to the bounds.
        """
        count = int(keep.sum())
        scale = self.scale
        oracle = self.oracle
        start = start[keep] / start[keep].sum()
        unit = np.maximum(start, 1e-3 * start.max())

        def full(v):
            w = np.zeros(self.pairs)
            w[keep] = np.clip(v[:-1] * unit, _WEIGHT_FLOOR, None)
            return w

        def cons(v):
            values, _ = oracle(full(v))
            return values / scale - v[-1]

        def cons_jac(v):
            _, columns = oracle(full(v))
            jac = np.empty((columns.shape[0], count + 1))
            jac[:, :-1] = columns[:, keep] * (unit / scale)
            jac[:, -1] = -1.0
            return jac

        def on_iteration(v):
            self.iterations += 1
            if not watch or self.iterations % 5 or not np.isfinite(v).all():
                return
            self.consider(full(v))
            if self.certify():
                raise _StopOptimiser
            if len(self.history) > 6 and self.history[-1] > 0.5 * self.history[-7]:
                raise _StopOptimiser  # stalled: no halving of the gap in 30 iterations

        u0 = start / unit
        z0 = 0.999 * float(oracle(full(np.append(u0, 0.0)))[0].min()) / scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = minimize(
                    lambda v: -v[-1],
                    np.append(u0, z0),
                    jac=lambda v: np.append(np.zeros(count), -1.0),
                    method="SLSQP",
                    bounds=[(_WEIGHT_FLOOR / c, 1.0 / c) for c in unit] + [(0.0, None)],
                    constraints=[
                        {"type": "ineq", "fun": cons, "jac": cons_jac},
                        {
                            "type": "eq",
                            "fun": lambda v: v[:-1] @ unit - 1.0,
                            "jac": lambda v: np.append(unit, 0.0),
                        },
                    ],
                    callback=on_iteration,
                    options={"maxiter": maxiter, "ftol": 1e-14},
                )
                if np.isfinite(res.x).all():
                    self.consider(full(res.x))
            except _StopOptimiser:
                pass

    def polish(self) -> bool:
        keep = self.w >= 1e-8 * self.w.max()
        if keep.all():
            return False
        self.slsqp(self.w, keep, 100, watch=False)
        return self.certify()

    # ------------------------------------------------------------------ solve
    def solve(self):
        self.slsqp(self.w, np.ones(self.pairs, dtype=bool), 300, watch=True)
        if self.certify() or self.polish():
            return self
        for kelley in range(1, self.max_iter + 1):
            self.iterations += 1
            if self.certificate is None:
                break
            w_lp = self.certificate[2]
            incumbent = self.w.copy()
            for t in _SEGMENT:
                self.consider(t * w_lp + (1.0 - t) * incumbent)
            if self.certify():
                break
            if kelley % 10 == 0 and self.polish():
                break
            if kelley >= 50 and self.history[-1] > 0.99 * self.history[-51]:
                break  # stagnation (extreme near-ties, where the LP runs out of digits)
        return self


def _optimise(means, threshold, code, tol, max_iter):
    """Returns ``(w, value, upper, iterations)`` from :class:`_MaxMinSolver`."""
    solver = _MaxMinSolver(means, threshold, code, tol, max_iter).solve()
    return solver.w.reshape(solver.shape), solver.value, solver.upper, solver.iterations


def characteristic_time(
    instance: Instance,
    divergence: str = "bernoulli",
    *,
    method: str = "auto",
    tol: float = 1e-5,
    max_iter: int = 500,
) -> CharacteristicTime:
    """The characteristic time ``T*(mu)`` and optimal proportions ``w*``.

    ``1/T* = max_{w in simplex} min_{lambda in cl Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij)``
    over the N M arm-attribute pairs (Garivier & Kaufmann 2016).

    * Tie for the best feasible arm, or a pair of the best arm exactly at the
      threshold: ``T* = inf`` (value 0 for every ``w``; ``w_star`` is uniform).
    * Infeasible instance (closed form, ``method="auto"``): with
      ``D_b = d(min_j mu_bj, th)``, ``T* = sum_b 1/D_b`` and ``w*`` puts
      ``(1/D_b) / sum_c (1/D_c)`` on the smallest attribute of each arm ``b``.
      Proof: the alternatives are (C), one per arm, with cost
      ``f_b(w) = sum_{j: mu_bj < th} w_bj d(mu_bj, th)``. Given arm ``b``'s total
      weight ``W_b``, ``f_b <= W_b max_j d(mu_bj, th) = W_b D_b`` (``d(., th)``
      decreases on ``[0, th]``, so the largest divergence is at the smallest
      attribute), with equality when all of ``W_b`` sits on that attribute; weight
      elsewhere only lowers some ``f_b``. Then ``max min_b W_b D_b`` over
      ``sum_b W_b = 1`` equalises ``W_b D_b``, giving ``1/sum_b (1/D_b)``.
    * Feasible instance, or ``method="numeric"``: a certified numerical solution
      (:class:`_MaxMinSolver`). The lower bound is the achieved value
      ``min_k f_k(w_star)``. The upper bound is weak duality: for any mixture ``q``
      of alternatives ``lambda^k`` in the closure of ``Alt(mu)``,
      ``max_w min_k f_k(w) <= max_ij sum_k q_k d(mu_ij, lambda^k_ij)`` (for fixed
      alternatives the objective is linear in ``w``, and a linear function's
      maximum over the simplex is its largest coordinate); ``q`` solves the LP
      ``min_q max_ij ...`` (HiGHS) over the alternatives met along the way. The
      optimiser is SLSQP on ``max z s.t. z <= f_k(w)`` with Danskin gradients
      ``d(mu, lambda_k*(w))``, then, if needed, an SLSQP polish with the negligible
      weights fixed at 0 and Kelley cutting planes, until the relative gap
      ``(upper - value) / value`` is at most ``tol`` (default 1e-5) or
      ``max_iter`` cutting-plane iterations have run.

    Parameters
    ----------
    instance:
        A :class:`gbai.Instance`.
    divergence:
        ``"bernoulli"`` (default) or ``"gaussian"`` (variance 1/4).
    method:
        ``"auto"`` (closed forms where they exist) or ``"numeric"`` (always the
        optimiser; for checking the closed form).
    tol, max_iter:
        Target relative gap and cap on cutting-plane iterations. A
        :class:`RuntimeWarning` is issued when the certified gap stays above
        ``tol`` (this happens for near-ties with ``T*`` beyond about 1e10, where the
        LP becomes too ill-conditioned).

    Raises
    ------
    ValueError
        For a non-Instance argument, an unknown divergence or method, or a
        non-positive ``tol`` / ``max_iter``.
    """
    instance = _check_instance(instance)
    code = _divergence_code(divergence)
    if method not in ("auto", "numeric"):
        raise ValueError(f"method must be 'auto' or 'numeric', got {method!r}")
    if not (isinstance(tol, (int, float)) and 0.0 < tol < 1.0):
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    th = instance.threshold
    n, m = means.shape
    name = divergence.lower()
    a, tie = _answer_kernel(means, th)
    if a >= 0 and (tie >= 0 or means[a].min() <= th):
        return CharacteristicTime(
            math.inf, np.full((n, m), 1.0 / (n * m)), 0.0, 0.0, 0, 0.0, "degenerate", name
        )
    if a < 0 and method == "auto":
        w = np.zeros((n, m))
        inv = np.empty(n)
        for b in range(n):
            j = int(np.argmin(means[b]))
            inv[b] = 1.0 / _divergence(means[b, j], th, code)
        total = float(inv.sum())
        for b in range(n):
            w[b, int(np.argmin(means[b]))] = inv[b] / total
        return CharacteristicTime(total, w, 1.0 / total, 0.0, 0, 1.0 / total, "closed-form", name)
    w, value, upper, iterations = _optimise(means, th, code, tol, int(max_iter))
    gap = (upper - value) / value
    if not gap <= tol:
        warnings.warn(
            f"characteristic_time({instance!r}): the certified relative gap {gap:.3g} "
            f"exceeds tol = {tol:g}",
            RuntimeWarning,
            stacklevel=2,
        )
    return CharacteristicTime(1.0 / value, w, value, gap, iterations, upper, "slsqp+lp", name)


def lower_bound_tstar(instance: Instance, delta: float, divergence: str = "bernoulli") -> float:
    """``T*(mu) kl(delta, 1 - delta)``: Garivier & Kaufmann's bound on ``E[tau]``.

    ``kl`` is always the Bernoulli KL divergence between ``delta`` and ``1 - delta``
    (it comes from the data-processing inequality on the event "answer is right").
    """
    delta = check_delta(delta)
    result = characteristic_time(instance, divergence)
    return result.T_star * _kl_bernoulli_scalar(delta, 1.0 - delta)


# =====================================================================================
# Theorem 1 of the paper
# =====================================================================================
def theorem1_constants(instance: Instance) -> dict:
    """The constants ``c1, c2, c3`` and ``C(nu, mu_TH)`` of Theorem 1 (appendix).

    Read from the appendix "PROOF OF LOWER BOUND" (0-based arms; the appendix's
    "arm 1" is the best arm ``a``):

    * ``c1`` (case (i) and the infeasible risky arms of the general case). For arm
      ``k`` let ``S_k = {j : mu_kj < th}``, ``z_k = (sum_{j not in S_k} mu_kj +
      |S_k| th) / M`` and ``c_k = min(z_k, 1 - z_k)`` (the reverse-Pinsker constant
      of step (c)). The appendix leaves ``k`` free in ``c``; we take ``c = min_k c_k``
      over the arms concerned, which keeps every per-arm inequality valid, and
      likewise ``max_k |S_k|`` over the same arms: ``c1 = M^2 c / (2 max_k |S_k|^2)``.
      The arms concerned are all arms in case (i) and ``F^c ∩ R`` in the general
      case. ``c1`` is NaN when no arm is concerned.
    * ``c2`` (feasible instances). ``j' = argmin_j mu_aj``, ``z = mu_a - (mu_aj' -
      th)/M``, ``c = min(z, 1 - z)``; ``c2 = min(M^2 c / 2, min(mu_a, 1 - mu_a)/16)``.
      NaN for an infeasible instance.
    * ``c3 = min(mu_a, 1 - mu_a) / 8`` (feasible instances; it enters only when
      ``F^c ∩ S`` is non-empty). NaN for an infeasible instance.
    * ``C``: the minimum of the constants that enter: case (i) ``C = c1``; case (ii)
      (every arm feasible) ``C = c2``; general case ``C = min(c2, c1 if F^c ∩ R is
      non-empty, c3 if F^c ∩ S is non-empty)``.

    Returns a dict with ``case`` ("all infeasible (i)", "all feasible (ii)" or
    "general"), ``c1``, ``c2``, ``c3``, ``C``, ``entering`` (names of the constants
    in ``C``), ``c_attr`` and ``c_best`` (the two ``c``'s), ``best_arm`` and the arm
    sets ``infeasible_risky`` and ``infeasible_suboptimal``.
    """
    instance = _check_instance(instance)
    means = instance.means
    th = instance.threshold
    m = instance.n_attributes
    feasible = instance.feasible_mask
    risky = instance.risky_mask
    suboptimal = instance.suboptimal_mask
    infeasible_risky = tuple(int(i) for i in np.flatnonzero(~feasible & risky))
    infeasible_suboptimal = tuple(int(i) for i in np.flatnonzero(~feasible & suboptimal))

    def c1_over(arms):
        if not arms:
            return math.nan, math.nan
        cs = []
        sizes = []
        for k in arms:
            below = means[k] < th
            z = (means[k][~below].sum() + below.sum() * th) / m
            cs.append(min(z, 1.0 - z))
            sizes.append(int(below.sum()))
        c = min(cs)
        return m * m * c / (2.0 * max(sizes) ** 2), c

    if not instance.is_feasible:
        arms = tuple(range(instance.n_arms))
        c1, c_attr = c1_over(arms)
        return {
            "case": "all infeasible (i)",
            "c1": c1,
            "c2": math.nan,
            "c3": math.nan,
            "C": c1,
            "entering": ("c1",),
            "c_attr": c_attr,
            "c_best": math.nan,
            "best_arm": None,
            "infeasible_risky": arms,
            "infeasible_suboptimal": (),
        }
    a = instance.best_arm
    mu_a = float(instance.arm_means[a])
    j_prime = int(np.argmin(means[a]))
    z = mu_a - (means[a, j_prime] - th) / m
    c_best = min(z, 1.0 - z)
    c2 = min(m * m * c_best / 2.0, min(mu_a, 1.0 - mu_a) / 16.0)
    c3 = min(mu_a, 1.0 - mu_a) / 8.0
    c1, c_attr = c1_over(infeasible_risky)
    entering = ["c2"]
    if infeasible_risky:
        entering.insert(0, "c1")
    if infeasible_suboptimal:
        entering.append("c3")
    constants = {"c1": c1, "c2": c2, "c3": c3}
    case = "all feasible (ii)" if feasible.all() else "general"
    return {
        "case": case,
        "c1": c1,
        "c2": c2,
        "c3": c3,
        "C": min(constants[name] for name in entering),
        "entering": tuple(entering),
        "c_attr": c_attr,
        "c_best": c_best,
        "best_arm": a,
        "infeasible_risky": infeasible_risky,
        "infeasible_suboptimal": infeasible_suboptimal,
    }


def theorem1_bound(instance: Instance, delta: float) -> float:
    """Theorem 1 as stated: ``ln(1/(2.4 delta)) C(nu, mu_TH) H_id``.

    ``H_id`` is :meth:`Instance.hardness_index` (the paper's definition; it warns with
    :class:`gbai.HardnessWarning` when infinite). With an infinite ``H_id`` the
    result is ``+inf`` when ``C > 0`` and ``delta < 1/2.4``, NaN otherwise (``0 *
    inf``, or a vacuous sign). For ``delta >= 1/2.4`` the logarithm is <= 0 and the
    bound is vacuous; the stated (non-positive) product is returned.
    """
    delta = check_delta(delta)
    constants = theorem1_constants(instance)
    hardness = instance.hardness_index()
    log_factor = math.log(1.0 / (2.4 * delta))
    C = constants["C"]
    if math.isinf(hardness):
        return math.inf if (C > 0 and log_factor > 0) else math.nan
    return log_factor * C * hardness


def hardness_report(instance: Instance, delta: float) -> dict:
    """The lower-bound quantities of an instance, JSON-ready (used by ``gbai hardness``).

    Keys: ``T_star`` and ``w_star`` (Bernoulli divergence), ``T_star_gap`` (the
    certified relative gap), ``lower_bound_tstar`` (``T* kl(delta, 1 - delta)``),
    ``lower_bound_theorem1`` (Theorem 1 as stated), ``theorem1_C`` and
    ``theorem1_case``. Infinite or undefined numbers are reported as None.
    """
    delta = check_delta(delta)
    result = characteristic_time(instance)
    constants = theorem1_constants(instance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theorem1 = theorem1_bound(instance, delta)

    def number(value):
        return float(value) if value is not None and math.isfinite(value) else None

    return {
        "T_star": number(result.T_star),
        "w_star": result.w_star.tolist(),
        "T_star_gap": number(result.gap),
        "lower_bound_tstar": number(result.T_star * _kl_bernoulli_scalar(delta, 1.0 - delta)),
        "lower_bound_theorem1": number(theorem1),
        "theorem1_C": number(constants["C"]),
        "theorem1_case": constants["case"],
    }


# =====================================================================================
# Benchmark
# =====================================================================================
def benchmark_lower_bounds(repeat: int = 2000, verbose: bool = True) -> dict:
    """Time the best response (from Python and inside numba) and ``T*`` on the paper's instances.

    Prints a small report when ``verbose`` and returns the timings in seconds.
    """
    from .instances import EXPERIMENTS, paper_instance

    rng = np.random.default_rng(0)
    instance = paper_instance("exp1", 0.31)
    means = np.ascontiguousarray(instance.means)
    th = instance.threshold
    weights = rng.uniform(1.0, 100.0, size=means.shape)
    best_response(means, th, weights)  # compile
    _best_response_loop(means, th, weights, 0, 2)
    _alternatives_loop(means, th, weights, 0, 2)
    start = time.perf_counter()
    for _ in range(repeat):
        best_response(means, th, weights)
    python_call = (time.perf_counter() - start) / repeat
    loops = 20000
    start = time.perf_counter()
    _best_response_loop(means, th, weights, 0, loops)
    numba_call = (time.perf_counter() - start) / loops
    start = time.perf_counter()
    _alternatives_loop(means, th, weights, 0, loops)
    numba_all = (time.perf_counter() - start) / loops
    timings = {
        "best_response_python": python_call,
        "best_response_numba": numba_call,
        "alternative_values_numba": numba_all,
        "characteristic_time": {},
    }
    if verbose:
        print(f"best_response (5x5, from Python):      {python_call * 1e6:8.1f} us")
        print(f"best_response kernel (inside numba):    {numba_call * 1e6:8.2f} us")
        print(f"alternative_values kernel (numba):      {numba_all * 1e6:8.2f} us")
        print("characteristic_time on the paper's instances:")
        print(f"{'instance':28s} {'T*':>12s} {'T* kl(.1,.9)':>13s} {'gap':>9s} {'iters':>5s} {'time':>8s}")
    for name, experiment in EXPERIMENTS.items():
        sizes = experiment.sizes if experiment.sizes else (None,)
        grid = experiment.x_grid if experiment.x_grid else (None,)
        for size in sizes:
            for x in grid:
                inst = paper_instance(name, x, size)
                start = time.perf_counter()
                result = characteristic_time(inst)
                elapsed = time.perf_counter() - start
                timings["characteristic_time"][inst.label] = (elapsed, result)
                if verbose:
                    kl = _kl_bernoulli_scalar(0.1, 0.9)
                    print(
                        f"{inst.label:28s} {result.T_star:12.2f} {result.T_star * kl:13.2f} "
                        f"{result.gap:9.1e} {result.iterations:5d} {elapsed * 1e3:6.1f}ms"
                    )
    return timings


@njit(cache=True)
def _best_response_loop(means, threshold, weights, code, loops):
    total = 0.0
    for _ in range(loops):
        total += _best_response_kernel(means, threshold, weights, code)[0]
    return total


@njit(cache=True)
def _alternatives_loop(means, threshold, weights, code, loops):
    total = 0.0
    for _ in range(loops):
        total += _alternative_values_kernel(means, threshold, weights, code)[3][0]
    return total


if __name__ == "__main__":  # pragma: no cover
    benchmark_lower_bounds()
