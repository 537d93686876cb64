"""Reference algorithms for plain best-arm identification, the yardsticks of the near-limit study.

Track-and-Stop with the heuristic threshold (*not delta-correct*). A reference for
studies, not an entry of :data:`gbai.algorithms.ALGORITHMS`: it stops when the
Chernoff statistic of the empirical best arm (Garivier & Kaufmann 2016, eq. (7))
exceeds ``ln((ln t + 1)/delta)``, the threshold of the BAI literature's experiments,
which is not proven to keep the error below ``delta``. Sampling: D-tracking of the
Bernoulli optimal proportions ``w*(mu_hat)`` (their Theorem 5, two nested
bisections) with forced exploration below ``sqrt(t) - K/2`` samples (Section 3.1).
It runs one-attribute instances (``M = 1``; the threshold is ignored) on the first
attribute's reward streams of a seed, so it sees the rewards a registered algorithm
sees on that seed (common random numbers).

``stopping="oracle"`` keeps the sampling and swaps the stop for a yardstick that *is*
delta-correct but is told the true means: against each other arm ``b`` it needs the
likelihood ratio of the true means (the larger one given to the empirical best
``a``) to the best fit with ``mu_b >= mu_a`` to exceed ``(K - 1)/delta``. If ``a`` is
not the best arm ``a*``, that ratio against ``b = a*`` is at most the ratio to the
true means, which lie in the fitted set; the latter is a product of per-sample
Bernoulli likelihood ratios, each of mean at most 1 for any law on [0, 1] (the
ratio is convex in the reward, so it lies below its chord), hence a nonnegative
supermartingale whatever the sampling, and Ville's inequality bounds its crossing
by ``delta/(K - 1)``; ``K - 1`` wrong arms share ``delta``. It pays no price for
learning the alternative, so it shows what a proven stop of this form reaches at
best with this sampling. It is a measurement, not an algorithm: no real policy
knows the means.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..fast.rewards import draw
from ..limits.divergences import kl_bernoulli_scalar
from ..paper.engine import NO_ANSWER
from ..paper.model import Instance
from ..paper.rewards import pair_keys, reward_code, reward_exponents

__all__ = ["STOPPING_RULES", "heuristic_threshold", "optimal_proportions", "oracle_statistic", "run_track_and_stop",
           "track_and_stop_kernel"]

#: Stopping rules of the reference: the heuristic threshold, or the oracle yardstick.
STOPPING_RULES = ("heuristic", "oracle")

_BISECTIONS = 32


@njit(cache=True)
def heuristic_threshold(t, delta):
    """``ln((ln t + 1) / delta)``: the heuristic threshold (not proven delta-correct)."""
    return math.log((math.log(t) + 1.0) / delta)


@njit(cache=True)
def _g(mu1, mua, x):
    """``g_a(x) = (1 + x) I_{1/(1+x)}(mu_1, mu_a)`` = ``d(mu_1, m) + x d(mu_a, m)``."""
    m = (mu1 + x * mua) / (1.0 + x)
    return kl_bernoulli_scalar(mu1, m) + x * kl_bernoulli_scalar(mua, m)


@njit(cache=True)
def _x_of_y(mu1, mua, y):
    """The root ``x`` of ``g_a(x) = y`` (``g_a`` increases from 0 to ``d(mu_1, mu_a)``)."""
    lo, hi = 0.0, 1.0
    while _g(mu1, mua, hi) < y and hi < 1e12:
        hi *= 2.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if _g(mu1, mua, mid) < y:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True)
def optimal_proportions(mu):
    """``w*(mu)`` for Bernoulli arms (Garivier & Kaufmann 2016, Theorem 5); uniform on a tie."""
    k = mu.size
    w = np.full(k, 1.0 / k)
    best = 0
    for a in range(k):
        if mu[a] > mu[best]:
            best = a
    # Clip to the open interval so that every divergence stays finite.
    eps = 1e-6
    mu1 = min(max(mu[best], eps), 1.0 - eps)
    second = -1.0
    for a in range(k):
        if a != best:
            second = max(second, min(max(mu[a], eps), 1.0 - eps))
    if k == 1:
        return w
    if second >= mu1:
        return w
    top = kl_bernoulli_scalar(mu1, second)
    xs = np.zeros(k)

    def f(y):
        total = 0.0
        for a in range(k):
            if a == best:
                continue
            mua = min(max(mu[a], eps), 1.0 - eps)
            x = _x_of_y(mu1, mua, y)
            xs[a] = x
            m = (mu1 + x * mua) / (1.0 + x)
            total += kl_bernoulli_scalar(mu1, m) / max(kl_bernoulli_scalar(mua, m), 1e-300)
        return total

    lo, hi = 0.0, top
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if f(mid) < 1.0:
            lo = mid
        else:
            hi = mid
    f(0.5 * (lo + hi))
    total = 1.0
    for a in range(k):
        if a != best:
            total += xs[a]
    for a in range(k):
        w[a] = (1.0 if a == best else xs[a]) / total
    return w


@njit(cache=True)
def _chernoff(means, counts):
    """``(a_hat, Z(t))``: the empirical best arm and the smallest pairwise GLR against it."""
    k = means.size
    a = 0
    for i in range(k):
        if means[i] > means[a]:
            a = i
    z = math.inf
    for b in range(k):
        if b == a:
            continue
        m = (counts[a] * means[a] + counts[b] * means[b]) / (counts[a] + counts[b])
        value = counts[a] * kl_bernoulli_scalar(means[a], m) + counts[b] * kl_bernoulli_scalar(means[b], m)
        z = min(z, value)
    return a, z


@njit(cache=True)
def oracle_statistic(means, mu_hat, counts, a):
    """The smallest log-likelihood ratio, over arms ``b != a``, of the true means (the larger given
    to ``a``) to the best fit with ``mu_b >= mu_a``; ``a`` must be the empirical best.

    It equals the Chernoff statistic of the pair minus ``n_a d(mu_hat_a, hi) + n_b d(mu_hat_b, lo)``,
    the fit of the true means (``d``: the Bernoulli divergence).
    """
    z = math.inf
    for b in range(means.size):
        if b == a:
            continue
        hi, lo = max(means[a], means[b]), min(means[a], means[b])
        m = (counts[a] * mu_hat[a] + counts[b] * mu_hat[b]) / (counts[a] + counts[b])
        glr = counts[a] * kl_bernoulli_scalar(mu_hat[a], m) + counts[b] * kl_bernoulli_scalar(mu_hat[b], m)
        fit = counts[a] * kl_bernoulli_scalar(mu_hat[a], hi) + counts[b] * kl_bernoulli_scalar(mu_hat[b], lo)
        z = min(z, glr - fit)
    return z


@njit(cache=True)
def track_and_stop_kernel(means, keys, exponents, model, delta, max_samples, oracle=False):
    """Run Track-and-Stop; returns ``(answer, samples, counts, stopped)`` (answer: an arm, or NO_ANSWER).

    ``oracle`` replaces the heuristic stop by the oracle yardstick (module docstring).
    """
    k = means.size
    sums = np.zeros(k)
    counts = np.zeros(k, dtype=np.int64)
    for a in range(k):
        sums[a] += draw(keys[a], 0, means[a], exponents[a], model)
        counts[a] = 1
    t = k
    level = math.log(max(k - 1, 1) / delta)
    while True:
        mu_hat = sums / counts
        a_hat, z = _chernoff(mu_hat, counts)
        if oracle:
            if oracle_statistic(means, mu_hat, counts, a_hat) > level:
                return a_hat, t, counts, True
        elif z > heuristic_threshold(t, delta):
            return a_hat, t, counts, True
        if t + 1 > max_samples:
            return NO_ANSWER, t, counts, False
        fewest = 0
        for a in range(k):
            if counts[a] < counts[fewest]:
                fewest = a
        if counts[fewest] < math.sqrt(t) - k / 2.0:
            pull = fewest
        else:
            w = optimal_proportions(mu_hat)
            pull = 0
            lag = -math.inf
            for a in range(k):
                if t * w[a] - counts[a] > lag:
                    lag, pull = t * w[a] - counts[a], a
        sums[pull] += draw(keys[pull], counts[pull], means[pull], exponents[pull], model)
        counts[pull] += 1
        t += 1


def run_track_and_stop(instance: Instance, *, delta: float = 0.1, seed=0, reward: str = "bernoulli",
                       max_samples: int = 10_000_000, stopping: str = "heuristic") -> tuple[int, int, np.ndarray, bool]:
    """Run the reference on a one-attribute instance; returns ``(answer, samples, counts, stopped)``.

    ``stopping="heuristic"``: the heuristic threshold, not delta-correct;
    ``"oracle"``: the delta-correct yardstick told the true means (module docstring).
    ``instance`` must have ``M = 1``; its threshold is ignored (plain best-arm
    identification). The rewards are the first attribute's streams of ``seed``
    (:func:`gbai.paper.rewards.pair_keys`).
    """
    if not isinstance(instance, Instance) or instance.n_attributes != 1:
        raise ValueError("the Track-and-Stop reference needs a gbai Instance with one attribute (M = 1)")
    if stopping not in STOPPING_RULES:
        raise ValueError(f"stopping must be one of {list(STOPPING_RULES)}, got {stopping!r}")
    if stopping == "oracle" and not ((instance.means > 0.0) & (instance.means < 1.0)).all():
        raise ValueError("the oracle stop needs every mean strictly between 0 and 1 (its likelihoods must be finite)")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if int(max_samples) < instance.n_arms:
        raise ValueError("max_samples must cover one sample of every arm")
    means = np.ascontiguousarray(instance.means[:, 0], dtype=np.float64)
    keys = np.ascontiguousarray(pair_keys(seed, instance.n_arms, 1)[:, 0])
    answer, samples, counts, stopped = track_and_stop_kernel(
        means, keys, np.ascontiguousarray(reward_exponents(means)), reward_code(reward), float(delta),
        np.int64(max_samples), stopping == "oracle")
    return int(answer), int(samples), counts, bool(stopped)
