"""One divergence interface for every pair: Bernoulli, Gaussian or ``K_inf`` of a law.

The scalable solver (:mod:`~gbai.limits.structured`) and the ``"kinf"``
alternatives need, for one arm-attribute pair with mean ``mu`` and divergence
``d(mu, .)`` (convex, 0 at ``mu``), four operations:

* :func:`pair_divergence` -- ``d(mu, q)``;
* :func:`pair_lower` -- ``x(eta) = argmin_{x <= mu} w d(mu, x) + eta x`` (the pair of
  the answer moving down in an overtake alternative) with ``d(mu, x)`` and ``dx/deta``;
* :func:`pair_upper` -- ``y(eta) = max(th, argmin_{y >= mu} w d(mu, y) - eta y)``
  (the challenger moving up) with ``d(mu, y)``;
* :func:`pair_level_up` -- the point ``y > mu`` with ``d(mu, y) = c`` and ``d'(mu, y)``.

``code`` selects the divergence (:data:`~gbai.limits.divergences.DIVERGENCES`
plus :data:`LAW` for ``K_inf``); ``xs, xcs, ps`` are the pair's law (support,
``1 - support``, probabilities, see :func:`~gbai.limits.reward_laws.law_arrays`),
empty arrays for the parametric divergences.

:func:`law_alternatives_kernel` evaluates every alternative of
:mod:`~gbai.limits.alternatives` -- (A), (B), (C), same order -- with ``K_inf``
divergences. The overtake (B) is solved in its dual: for the multiplier ``eta`` of
the sum constraint, ``g(eta) = sum_j y_j(eta) - sum_j x_j(eta)`` increases and its
root (Illinois regula falsi on a doubling bracket, at most 200 steps each) gives
the minimiser. The value returned is the *dual* value at the final ``eta``,
``sum_j [w_aj d(x_j) + eta x_j] + sum_j [w_bj d(y_j) - eta y_j] + eta * 0``, which
never exceeds the true minimum (weak duality), so a lower bound on ``1/T*`` built
from it stays valid.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .divergences import BERNOULLI, GAUSSIAN, kl_bernoulli_complements
from .reward_laws import kinf_kernel, kinf_level_up, kinf_point, law_mean
from .overtake import bernoulli_lower_root

__all__ = ["LAW", "law_alternatives_kernel", "pair_divergence", "pair_level_up", "pair_lower", "pair_upper"]

#: Kernel code of ``K_inf`` (after the codes of DIVERGENCES).
LAW = 2
_ROOT_MAX_ITER = 200


@njit(cache=True)
def pair_divergence(code, mu, xs, xcs, ps, q):
    if code == BERNOULLI:
        return kl_bernoulli_complements(mu, 1.0 - mu, q, 1.0 - q)
    if code == GAUSSIAN:
        return 2.0 * (mu - q) ** 2
    return kinf_kernel(xs, xcs, ps, q)[0]


@njit(cache=True)
def pair_lower(code, mu, xs, xcs, ps, w, eta):
    """``(x, d(mu, x), dx/deta)`` for ``x = argmin_{x <= mu} w d(mu, x) + eta x``; w, eta > 0."""
    if code == BERNOULLI:
        x, x_c, dx = bernoulli_lower_root(mu, 1.0 - mu, w, eta)
        return x, kl_bernoulli_complements(mu, 1.0 - mu, x, x_c), dx
    if code == GAUSSIAN:
        x = mu - eta / (4.0 * w)
        return x, 2.0 * (mu - x) ** 2, -1.0 / (4.0 * w)
    x, value = kinf_point(xs, xcs, ps, law_mean(xs, ps), -eta / w)
    curvature = kinf_kernel(xs, xcs, ps, x)[2]
    dx = -1.0 / (w * curvature) if curvature > 0.0 else 0.0
    return x, value, dx


@njit(cache=True)
def pair_upper(code, mu, xs, xcs, ps, w, eta, threshold):
    """``(y, d(mu, y))`` for ``y = max(th, argmin_{y >= mu} w d(mu, y) - eta y)``; w, eta > 0."""
    if code == BERNOULLI:
        y_c, y, _ = bernoulli_lower_root(1.0 - mu, mu, w, eta)
        if y < threshold:
            return threshold, kl_bernoulli_complements(mu, 1.0 - mu, threshold, 1.0 - threshold)
        return y, kl_bernoulli_complements(mu, 1.0 - mu, y, y_c)
    if code == GAUSSIAN:
        y = max(threshold, mu + eta / (4.0 * w))
        return y, 2.0 * (mu - y) ** 2
    y, value = kinf_point(xs, xcs, ps, law_mean(xs, ps), eta / w)
    if y < threshold:
        return threshold, kinf_kernel(xs, xcs, ps, threshold)[0]
    return y, value


@njit(cache=True)
def pair_level_up(code, mu, xs, xcs, ps, level):
    """``(y, d'(mu, y))`` for the point ``y > mu`` with ``d(mu, y) = level > 0``."""
    if code == GAUSSIAN:
        y = mu + math.sqrt(0.5 * level)
        return y, 4.0 * (y - mu)
    if code == LAW:
        return kinf_level_up(xs, xcs, ps, law_mean(xs, ps), level)
    # Bernoulli: Newton on the convex increasing kl(mu, .) on [mu, 1], bisection guard.
    lo = mu
    hi = 1.0
    y = min(mu + math.sqrt(2.0 * mu * (1.0 - mu) * level), 0.5 * (mu + 1.0))
    for _ in range(_ROOT_MAX_ITER):
        value = kl_bernoulli_complements(mu, 1.0 - mu, y, 1.0 - y)
        slope = (y - mu) / (y * (1.0 - y))
        if value < level:
            lo = y
        else:
            hi = y
        candidate = y - (value - level) / slope if slope > 0.0 else math.nan
        if not (lo < candidate < hi):
            candidate = 0.5 * (lo + hi)
        if abs(candidate - y) <= 1e-15 * y or hi - lo <= 1e-15:
            y = candidate
            break
        y = candidate
    return y, (y - mu) / (y * (1.0 - y))


# =====================================================================================
# K_inf alternatives (the (A), (B), (C) of gbai.limits.alternatives)
# =====================================================================================
@njit(cache=True)
def _law_overtake_g(means, threshold, weights, xs, xcs, ps, a, b, eta, x, y):
    m = means.shape[1]
    total = 0.0
    for j in range(m):
        if weights[a, j] == 0.0:
            x[j] = 0.0
        else:
            x[j] = pair_lower(LAW, means[a, j], xs[a, j], xcs[a, j], ps[a, j], weights[a, j], eta)[0]
        if weights[b, j] == 0.0:
            y[j] = 1.0
        else:
            y[j] = pair_upper(LAW, means[b, j], xs[b, j], xcs[b, j], ps[b, j], weights[b, j], eta, threshold)[0]
        total += y[j] - x[j]
    return total


@njit(cache=True)
def _law_overtake(means, threshold, weights, xs, xcs, ps, a, b, x, y):
    """Dual value of alternative (B) with ``K_inf``; fills the minimiser ``x``, ``y``."""
    m = means.shape[1]
    base = 0.0
    deficit = 0.0
    capacity = 0.0
    for j in range(m):
        x[j] = means[a, j]
        y[j] = max(threshold, means[b, j])
        if means[b, j] < threshold and weights[b, j] > 0.0:
            base += weights[b, j] * pair_divergence(LAW, means[b, j], xs[b, j], xcs[b, j], ps[b, j], threshold)
        deficit += x[j] - y[j]
        if weights[a, j] == 0.0:
            capacity += x[j]
        if weights[b, j] == 0.0:
            capacity += 1.0 - y[j]
    if deficit <= 0.0:
        return base
    if capacity >= deficit:
        # Zero-weight pairs close the gap for free: move each by the same share of
        # its room (one minimiser among many).
        share = deficit / capacity
        for j in range(m):
            if weights[a, j] == 0.0:
                x[j] -= share * x[j]
            if weights[b, j] == 0.0:
                y[j] += share * (1.0 - y[j])
        return base
    lo = 0.0
    g_lo = -deficit
    hi = 1.0
    g_hi = _law_overtake_g(means, threshold, weights, xs, xcs, ps, a, b, hi, x, y)
    for _ in range(_ROOT_MAX_ITER):
        if g_hi >= 0.0:
            break
        lo, g_lo = hi, g_hi
        hi *= 2.0
        g_hi = _law_overtake_g(means, threshold, weights, xs, xcs, ps, a, b, hi, x, y)
    side = 0
    for _ in range(_ROOT_MAX_ITER):
        eta = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        if not (lo < eta < hi):
            eta = 0.5 * (lo + hi)
        g = _law_overtake_g(means, threshold, weights, xs, xcs, ps, a, b, eta, x, y)
        if g >= 0.0:
            hi, g_hi = eta, g
            if side == 1:
                g_lo *= 0.5  # Illinois: keep the stale end from stalling the secant
            side = 1
        else:
            lo, g_lo = eta, g
            if side == -1:
                g_hi *= 0.5
            side = -1
        if hi - lo <= 1e-14 * hi or g_hi <= 1e-15:
            break
    eta = hi
    value = 0.0
    for j in range(m):
        if weights[a, j] == 0.0:
            x[j] = 0.0
        else:
            x[j], d, _ = pair_lower(LAW, means[a, j], xs[a, j], xcs[a, j], ps[a, j], weights[a, j], eta)
            value += weights[a, j] * d
        if weights[b, j] == 0.0:
            y[j] = 1.0
        else:
            y[j], d = pair_upper(LAW, means[b, j], xs[b, j], xcs[b, j], ps[b, j], weights[b, j], eta, threshold)
            value += weights[b, j] * d
        value += eta * (x[j] - y[j])
    return max(value, 0.0)


@njit(cache=True)
def law_alternatives_kernel(means, threshold, weights, xs, xcs, ps, answer):
    """``(kinds, arms, attrs, values, lams)`` as :func:`alternatives_kernel`, with ``K_inf``.

    ``answer`` is the answer of ``means`` (-1 if infeasible); ties are the caller's
    business (value 0). Kind codes: 0 (A), 1 (B), 2 (C).
    """
    n, m = means.shape
    a = answer
    count = n if a < 0 else m + n - 1
    kinds = np.empty(count, dtype=np.int64)
    arms = np.empty(count, dtype=np.int64)
    attrs = np.full(count, -1, dtype=np.int64)
    values = np.zeros(count)
    lams = np.empty((count, n, m))
    if a < 0:
        for b in range(n):
            kinds[b] = 2
            arms[b] = b
            lams[b] = means
            for j in range(m):
                if means[b, j] < threshold:
                    lams[b, b, j] = threshold
                    if weights[b, j] > 0.0:
                        values[b] += weights[b, j] * pair_divergence(
                            LAW, means[b, j], xs[b, j], xcs[b, j], ps[b, j], threshold
                        )
        return kinds, arms, attrs, values, lams
    for j in range(m):
        kinds[j] = 0
        arms[j] = a
        attrs[j] = j
        if weights[a, j] > 0.0:
            values[j] = weights[a, j] * pair_divergence(LAW, means[a, j], xs[a, j], xcs[a, j], ps[a, j], threshold)
        lams[j] = means
        lams[j, a, j] = threshold
    x = np.empty(m)
    y = np.empty(m)
    k = m
    for b in range(n):
        if b == a:
            continue
        kinds[k] = 1
        arms[k] = b
        values[k] = _law_overtake(means, threshold, weights, xs, xcs, ps, a, b, x, y)
        lams[k] = means
        lams[k, a, :] = x
        lams[k, b, :] = y
        k += 1
    return kinds, arms, attrs, values, lams
