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

*Bet mixtures* (the two-sample stop ``"bets"`` of the best-arm references,
:mod:`gbai.beyond.references`, and the book page on proven stops) replace the
prior over ``p`` by a uniform mixture over a grid of constant bets
(:func:`gbai.beyond.betting.bet_grid`): the capital of betting ``lambda (x - m)`` on
every reward, ``lambda = rho/m`` for ``rho`` in the grid, is a nonnegative
supermartingale when the mean is at most ``m``. ``ln(1 + lambda (x - m))`` is concave
in ``x``, so it lies above its chord and the capital is at least
``(1 + rho (1 - m)/m)^s (1 - rho)^(n - s)``, which needs only ``s`` and ``n`` and is
exact for Bernoulli rewards. The two-sample test "arm ``a`` above arm ``b``" is the
infimum, over every mean vector of the null, of the product of such capitals, so it
pays for its mixtures once per pair and uses every sample of both arms, however
unequal their counts (:func:`overtake_bets`).
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["bet_above", "kt_regret", "log_beta_upper_tail", "log_kt_mixture", "log_max_likelihood",
           "one_sided_above", "one_sided_below", "overtake_bets"]

_LN_PI = math.log(math.pi)
#: Terms of the continued fraction of the incomplete beta function before it gives up (returns NaN).
_FRACTION_TERMS = 100_000
#: Golden-section steps of the inner (mean) and outer (multiplier) searches of
#: :func:`overtake_bets`: brackets of 0.618^45 ~ 4e-10 and 0.618^40 ~ 4e-9 of their ranges.
_MEAN_STEPS = 45
_MULTIPLIER_STEPS = 40
_INVERSE_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


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


@njit(cache=True)
def bet_above(s: float, n: float, m: float, rho) -> float:
    """ln of the uniform mixture over ``rho`` of the capitals betting ``(rho/m)(x - m)``, from its chord bound.

    ``ln((1/G) sum_g (1 + rho_g (1 - m)/m)^s (1 - rho_g)^(n - s))`` for ``0 < m <= 1``:
    a lower bound of the capital of ``n`` rewards summing to ``s`` (module
    docstring), exact for Bernoulli rewards. Decreasing and convex in ``m``.
    """
    top = -math.inf
    total = 0.0
    for g in range(rho.size):
        value = s * math.log1p(rho[g] * (1.0 - m) / m) + (n - s) * math.log1p(-rho[g])
        if value > top:
            total = total * math.exp(top - value) + 1.0
            top = value
        else:
            total += math.exp(value - top)
    return top + math.log(total / rho.size)


@njit(cache=True)
def _lowest(s_a, n_a, multiplier, s_b, n_b, rho):
    """A lower bound of ``min over m in [0, 1]`` of ``bet_above(s_a, n_a, m) + multiplier m + bet_below(s_b, n_b, m)``.

    The last term is left out when ``n_b == 0``. The function is convex, so
    golden-section search keeps its minimiser in a bracket ``[lo, hi]``; as
    ``bet_above`` decreases and the other two terms increase in ``m``, their values
    at ``hi`` and ``lo`` respectively bound the function from below on the bracket,
    and outside it the function only grows. ``hi > 0`` and ``lo < 1``, so no capital
    is evaluated where its bets are unbounded.
    """
    lo, hi = 0.0, 1.0
    c = hi - _INVERSE_GOLDEN * (hi - lo)
    d = lo + _INVERSE_GOLDEN * (hi - lo)
    fc = bet_above(s_a, n_a, c, rho) + _rising(multiplier, s_b, n_b, c, rho)
    fd = bet_above(s_a, n_a, d, rho) + _rising(multiplier, s_b, n_b, d, rho)
    for _ in range(_MEAN_STEPS):
        if fc <= fd:
            hi, d, fd = d, c, fc
            c = hi - _INVERSE_GOLDEN * (hi - lo)
            fc = bet_above(s_a, n_a, c, rho) + _rising(multiplier, s_b, n_b, c, rho)
        else:
            lo, c, fc = c, d, fd
            d = lo + _INVERSE_GOLDEN * (hi - lo)
            fd = bet_above(s_a, n_a, d, rho) + _rising(multiplier, s_b, n_b, d, rho)
    return bet_above(s_a, n_a, hi, rho) + _rising(multiplier, s_b, n_b, lo, rho)


@njit(cache=True)
def _rising(multiplier, s_b, n_b, m, rho):
    """The increasing terms of :func:`_lowest`: ``multiplier m``, or ``bet_below(s_b, n_b, m)`` (mirrored)."""
    if n_b == 0:
        return multiplier * m
    return bet_above(n_b - s_b, n_b, 1.0 - m, rho)


@njit(cache=True)
def _dual_value(sums_a, counts_a, sums_b, counts_b, multiplier, rho):
    """The Lagrangian dual of :func:`overtake_bets` at ``multiplier`` (a lower bound of it for every value)."""
    value = 0.0
    for j in range(sums_a.size):
        value += _lowest(sums_a[j], counts_a[j], multiplier, 0.0, 0.0, rho)
        # min over m of (b below m) - multiplier m, mirrored: rewards 1 - x and mean 1 - m.
        value += _lowest(counts_b[j] - sums_b[j], counts_b[j], multiplier, 0.0, 0.0, rho) - multiplier
    return value


@njit(cache=True)
def overtake_bets(sums_a, counts_a, sums_b, counts_b, rho, screen: float) -> float:
    """ln e-value against "arm ``b``'s attribute average is at least arm ``a``'s", from bet mixtures.

    The infimum over mean vectors ``m`` with ``sum_j m_aj <= sum_j m_bj`` of
    ``sum_j bet_above(s_aj, n_aj, m_aj) + bet_below(s_bj, n_bj, m_bj)``: at the true
    means (a point of the null) the sum is the log of a product of nonnegative
    supermartingales, so the infimum never exceeds it. Computed as a lower bound,
    the Lagrangian dual ``max over nu >= 0`` of the separate minima over each mean
    (weak duality: every ``nu`` gives a lower bound; the terms are convex, so the
    maximum is the infimum), searched by golden section over ``ln(1 + nu)``.

    With several attributes it is weak when their counts are very unequal: raising
    a heavily sampled attribute's level above its empirical mean makes its one-sided
    capital very small, the lightly sampled ones pay little to restore the constraint,
    and the infimum falls far below zero (book page "Proven stops for plain best-arm
    identification", section 5). The best-arm references call it with one attribute.

    ``screen``: when the sum at a point of the null (each attribute's pooled mean for
    both arms, or the Gaussian projection of the empirical means) is at most
    ``screen``, that sum is returned instead, as the infimum cannot exceed it; the
    caller passes the smallest level it compares with.
    """
    m = sums_a.size
    upper = 0.0
    for j in range(m):
        pooled = (sums_a[j] + sums_b[j]) / (counts_a[j] + counts_b[j])
        pooled = min(max(pooled, 1e-12), 1.0 - 1e-12)
        upper += bet_above(sums_a[j], counts_a[j], pooled, rho)
        upper += bet_above(counts_b[j] - sums_b[j], counts_b[j], 1.0 - pooled, rho)
    if upper <= screen:
        return upper
    # A second point of the null, nearer the infimum when M > 1: the empirical means
    # moved together by the Gaussian projection onto sum_j m_aj = sum_j m_bj
    # (each mean moves in proportion to its variance over its count).
    excess = 0.0
    spread = 0.0
    for j in range(m):
        excess += sums_a[j] / counts_a[j] - sums_b[j] / counts_b[j]
        for s, n in ((sums_a[j], counts_a[j]), (sums_b[j], counts_b[j])):
            p = min(max(s / n, 0.01), 0.99)
            spread += p * (1.0 - p) / n
    if excess > 0.0:
        moved = 0.0
        total_a = 0.0
        total_b = 0.0
        for j in range(m):
            p = min(max(sums_a[j] / counts_a[j], 0.01), 0.99)
            point_a = min(max(sums_a[j] / counts_a[j] - excess * p * (1.0 - p) / counts_a[j] / spread, 1e-12), 1.0)
            p = min(max(sums_b[j] / counts_b[j], 0.01), 0.99)
            point_b = max(min(sums_b[j] / counts_b[j] + excess * p * (1.0 - p) / counts_b[j] / spread, 1.0 - 1e-12),
                          0.0)
            total_a += point_a
            total_b += point_b
            moved += bet_above(sums_a[j], counts_a[j], point_a, rho)
            moved += bet_above(counts_b[j] - sums_b[j], counts_b[j], 1.0 - point_b, rho)
        if total_a <= total_b and moved <= screen:  # a point of the null: the infimum is at most its sum
            return moved
    if m == 1:
        # The null's infimum has m_a = m_b: a's capital falls and b's rises with the mean.
        return _lowest(sums_a[0], counts_a[0], 0.0, sums_b[0], counts_b[0], rho)
    total = 0.0
    for j in range(m):
        total += counts_a[j] + counts_b[j]
    # The multiplier is the slope of the capitals at the optimum, at most about the samples over m(1 - m).
    lo, hi = 0.0, math.log1p(1e4 * total)
    c = hi - _INVERSE_GOLDEN * (hi - lo)
    d = lo + _INVERSE_GOLDEN * (hi - lo)
    fc = _dual_value(sums_a, counts_a, sums_b, counts_b, math.expm1(c), rho)
    fd = _dual_value(sums_a, counts_a, sums_b, counts_b, math.expm1(d), rho)
    for _ in range(_MULTIPLIER_STEPS):
        if fc >= fd:
            hi, d, fd = d, c, fc
            c = hi - _INVERSE_GOLDEN * (hi - lo)
            fc = _dual_value(sums_a, counts_a, sums_b, counts_b, math.expm1(c), rho)
        else:
            lo, c, fc = c, d, fd
            d = lo + _INVERSE_GOLDEN * (hi - lo)
            fd = _dual_value(sums_a, counts_a, sums_b, counts_b, math.expm1(d), rho)
    return max(fc, fd, _dual_value(sums_a, counts_a, sums_b, counts_b, 0.0, rho))
