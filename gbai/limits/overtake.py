"""Alternative (B), "arm ``b`` overtakes the answer ``a``": its cost and minimiser.

The derivation (a multiplier ``eta`` on the sum constraint, the increasing
function ``g``) is in :mod:`gbai.limits.alternatives`. This module holds the
compiled pieces: the pointwise minimisers ``x_j(eta)``, ``y_j(eta)``, the
safeguarded Newton iteration for the root of ``g`` and :func:`overtake_cost`.

even when ``d`` is infinite). In (B) such a pair of arm ``a`` may drop to 0 and
such a pair of arm ``b`` may rise to 1 (Bernoulli; without limit for Gaussian).
When these free moves alone close the gap, the minimiser is not unique and the one
returned is the limit of the unique minimisers for weights ``eps -> 0`` on those
pairs (see :func:`overtake_cost`); otherwise they sit at 0 / 1.

"""

from __future__ import annotations

import math

from numba import njit

from .divergences import BERNOULLI, GAUSSIAN, divergence_scalar, kl_bernoulli_complements, kl_gaussian_scalar

__all__ = ["overtake_cost"]

_ROOT_MAX_ITER = 200
_BRACKET_MAX_ITER = 200


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
    if code == BERNOULLI:
        if w == 0.0:
            return 0.0, 1.0, 0.0
        return _bernoulli_lower_root(mu, 1.0 - mu, w, eta)
    # Gaussian (w > 0 here: zero weights are settled at eta = 0, see overtake_cost).
    x = mu - eta / (4.0 * w)
    return x, 1.0 - x, -1.0 / (4.0 * w)


@njit(cache=True)
def _upper_point(mu, w, eta, threshold, code):
    """``y(eta) = max(th, argmin_y w d(mu, y) - eta y)`` (y >= mu): ``(y, 1 - y, dy/deta)``.

    Bernoulli: by the symmetry ``d(mu, y) = d(1 - mu, 1 - y)``, ``1 - y`` is the
    lower root for ``1 - mu``. A zero-weight pair rises to 1 for free.
    """
    if code == BERNOULLI:
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
    if code == BERNOULLI:
        return w * kl_bernoulli_complements(mu, 1.0 - mu, value, value_c)
    return w * kl_gaussian_scalar(mu, value)


@njit(cache=True)
def _overtake_g(means, threshold, weights, a, b, eta, code, free_mode, x, y):
    """Fill ``x = x(eta)``, ``y = y(eta)``; return ``g(eta) = sum y - sum x`` and ``g'``.

    With ``free_mode`` the pairs of positive weight stay where they are at
    ``eta = 0`` and only the zero-weight pairs move, as if they had weight 1 (see
    :func:`overtake_cost`).
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
def overtake_cost(means, threshold, weights, a, b, code, x, y):
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
                base_cost += weights[b, j] * divergence_scalar(mu_b, threshold, code)
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
    # ---- Still eta = 0 if the zero-weight pairs, which move for free, cover the deficit.
    if capacity > deficit:
        if code == BERNOULLI:
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
    if code == BERNOULLI:
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


#: Public name of the Bernoulli root, shared with :mod:`~gbai.limits.pairs`.
bernoulli_lower_root = _bernoulli_lower_root
