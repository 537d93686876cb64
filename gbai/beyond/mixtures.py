"""Krichevsky-Trofimov (KT) mixture statistics: e-values for rewards in [0, 1] (notebook 11, section 2).

For a pair with ``n`` rewards ``x_1..x_n`` in [0, 1] summing to ``s``, the Bernoulli
likelihood of a mean ``p`` is ``L(p) = p^s (1 - p)^(n - s)``. For any law on [0, 1]
with mean ``mu`` each factor ``p^x (1 - p)^(1 - x) / (mu^x (1 - mu)^(1 - x))`` is
convex in ``x``, so it lies below its chord and has expectation at most 1: the ratio
``L(p)/L(mu)`` is a nonnegative supermartingale, and so is any mixture of such
ratios over a prior fixed in advance. The KT mixture uses the prior
``Beta(1/2, 1/2)`` (Krichevsky & Trofimov 1981):

``KT(s, n) = int L(p) Beta(1/2, 1/2)(dp) = B(s + 1/2, n - s + 1/2) / B(1/2, 1/2)``,

and the *KT regret* ``R(s, n) = ln(max_p L(p) / KT(s, n))``, the price of not knowing
the mean, grows like ``(1/2) ln n``. A one-sided test of ``mu <= th`` restricts the prior
to ``(th, 1)`` (renormalised), which gains ``-ln P(p > th)`` nats when the data lie
well above ``th``. Every function takes the count ``n >= 1`` and the reward sum ``s``
as floats (Beta rewards give fractional sums) and works on the log scale.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["kt_regret", "log_beta_upper_tail", "log_kt_mixture", "log_max_likelihood", "one_sided_above",
           "one_sided_below"]

_LN_PI = math.log(math.pi)
#: Terms of the continued fraction of the incomplete beta function before it gives up (returns NaN).
_FRACTION_TERMS = 100_000


@njit(cache=True)
def log_kt_mixture(s: float, n: float) -> float:
    """``ln KT(s, n) = ln B(s + 1/2, n - s + 1/2) - ln pi`` (``B(1/2, 1/2) = pi``)."""
    return math.lgamma(s + 0.5) + math.lgamma(n - s + 0.5) - math.lgamma(n + 1.0) - _LN_PI


@njit(cache=True)
def log_max_likelihood(s: float, n: float) -> float:
    """``ln max_p p^s (1 - p)^(n - s) = s ln(s/n) + (n - s) ln(1 - s/n)`` (``0 ln 0 = 0``)."""
    value = 0.0
    if s > 0.0:
        value += s * math.log(s / n)
    if n - s > 0.0:
        value += (n - s) * math.log((n - s) / n)
    return value


@njit(cache=True)
def kt_regret(s: float, n: float) -> float:
    """``R(s, n) = ln(max_p L(p) / KT(s, n)) >= 0``; ``s`` is clipped to ``[0, n]`` against rounding."""
    s = min(max(s, 0.0), n)
    return log_max_likelihood(s, n) - log_kt_mixture(s, n)


@njit(cache=True)
def _log_fraction(a, b, x):
    """``-ln`` of ``1 + d_1/(1 + d_2/(1 + ...))``, the continued fraction of ``I_x(a, b)``; NaN if it does not settle.

    ``d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))`` and
    ``d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))`` (DLMF 8.17.22), evaluated by
    the modified Lentz method; it converges fast for ``x < (a + 1)/(a + b + 2)``.
    """
    tiny = 1e-300
    c = 1.0
    d = 0.0
    log_value = 0.0
    for k in range(1, _FRACTION_TERMS):
        m = k // 2
        if k % 2 == 1:
            term = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        else:
            term = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        d = 1.0 + term * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + term / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        factor = c * d
        log_value += math.log(abs(factor))
        if abs(factor - 1.0) < 1e-15:
            return -log_value
    return math.nan


@njit(cache=True)
def _log_incomplete_beta(a, b, x):
    """``ln I_x(a, b)`` for ``x < (a + 1)/(a + b + 2)``, where the continued fraction converges fast."""
    front = a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    return front - math.log(a) + _log_fraction(a, b, x)


@njit(cache=True)
def log_beta_upper_tail(a: float, b: float, x: float) -> float:
    """``ln P(p > x)`` for ``p ~ Beta(a, b)`` and ``0 < x < 1``; NaN if the continued fraction does not settle.

    ``P(p > x) = I_{1-x}(b, a)``: the fraction is evaluated directly when it converges
    fast there, else through the lower tail, ``ln(1 - I_x(a, b))``.
    """
    if 1.0 - x < (b + 1.0) / (a + b + 2.0):
        return _log_incomplete_beta(b, a, 1.0 - x)
    return math.log1p(-math.exp(_log_incomplete_beta(a, b, x)))


@njit(cache=True)
def one_sided_above(s: float, n: float, threshold: float) -> float:
    """ln e-value against ``mu <= threshold``: the KT mixture on ``(threshold, 1)`` over ``max_{p <= th} L(p)``.

    Equals ``-R(s, n) + n d(s/n, th) 1{s/n > th} + ln(P_post(p > th) / P_prior(p > th))``,
    with the posterior ``Beta(s + 1/2, n - s + 1/2)`` of the KT prior and
    ``P_prior(p > th) = (2/pi) arccos(sqrt(th))``. NaN (never a rejection) if the
    posterior tail cannot be evaluated.
    """
    s = min(max(s, 0.0), n)
    value = -kt_regret(s, n) + log_beta_upper_tail(s + 0.5, n - s + 0.5, threshold)
    value -= math.log(2.0 / math.pi * math.acos(math.sqrt(threshold)))
    if s > threshold * n:
        # The constrained fit sits at the threshold: add ln(L(s/n) / L(th)) = n d(s/n, th).
        value += log_max_likelihood(s, n) - s * math.log(threshold) - (n - s) * math.log1p(-threshold)
    return value


@njit(cache=True)
def one_sided_below(s: float, n: float, threshold: float) -> float:
    """ln e-value against ``mu >= threshold``: :func:`one_sided_above` of the mirrored rewards ``1 - x``."""
    s = min(max(s, 0.0), n)
    return one_sided_above(n - s, n, 1.0 - threshold)
