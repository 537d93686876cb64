"""Plain best-arm identification references: Track-and-Stop and Top Two, each with proven and unproven stops.

Entries of :data:`gbai.algorithms.REFERENCES`, apart from the grouped algorithms:
yardsticks for plain best-arm identification (``M = 1``; the threshold is ignored),
run in the compiled engine only, on the reward streams of the instance's one
attribute, so they see the rewards a registered algorithm sees on that seed (common
random numbers). An instance with several attributes is refused (ValueError). The
spec names the sampling rule and the stop, e.g. ``"track-and-stop"`` (the KT stop,
the default) or ``"top-two:stopping=gk"``.

Sampling (the spec's name):

* ``"track-and-stop"``: D-tracking of the Bernoulli optimal proportions
  ``w*(mu_hat)`` (Garivier & Kaufmann 2016, Theorem 5), recomputed at every sample
  by a warm-started Newton solver, with forced exploration below ``sqrt(t) - K/2``
  samples (their Section 3.1);
* ``"top-two"``: EB-TCI with ``beta = 1/2`` (Jourdan et al. 2022): the leader is the
  empirical best arm, the challenger minimises the pairwise GLR against it plus
  ``ln N_b``, and each leader is sampled in half of the rounds it leads (the
  deterministic tracking of their Section 2).

Stopping (option ``stopping=``), with ``Z_ab`` the GLR of the empirical best arm ``a``
against ``b`` (their eq. (7)), tested against every ``b != a``:

* ``"kt"`` (proven): ``Z_ab - R_a - R_b > ln((K - 1)/delta)``, ``R`` the
  Krichevsky-Trofimov regret of an arm's rewards (:func:`gbai.beyond.mixtures.kt_regret`);
* ``"gk"`` (proven): ``Z_ab > ln(2 t (K - 1)/delta)`` (Garivier & Kaufmann 2016);
* ``"bets"`` (proven): the two-sample bet-mixture test of ``a`` above ``b``
  (:func:`gbai.beyond.mixtures.overtake_bets`, over Betting-GBAI's bet grid) above
  ``ln((K - 1)/delta)``; it pays for one bet mixture per arm instead of the KT
  regrets, and gains as the samples grow;
* ``"heuristic"`` (**unproven**): ``Z_ab > ln((ln t + 1)/delta)``, the threshold of
  the literature's experiments;
* ``"oracle"`` (a yardstick told the true means): the likelihood ratio of the true
  means (the larger one given to ``a``) to the best fit with ``mu_b >= mu_a`` above
  ``(K - 1)/delta``; delta-correct, but no policy knows the means.

The book page "Proven stops for plain best-arm identification" proves the first three
and the oracle delta-correct for any rewards in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..fast.levels import first_round, level_results, new_stops, record_stops
from ..fast.rewards import draw
from ..limits.divergences import kl_bernoulli_scalar
from ..paper.model import NO_ANSWER, Instance
from ..paper.rewards import reward_exponents
from .betting import bet_grid
from .mixtures import kt_regret, overtake_bets

__all__ = ["PROVEN_STOPPING_RULES", "SAMPLING_RULES", "STOPPING_RULES", "TOP_TWO_BETA", "bets_statistic",
           "gk_threshold", "heuristic_threshold", "kt_statistic", "optimal_proportions", "oracle_statistic",
           "run_reference", "run_references", "stopping_statistic"]

#: Sampling rules of the references (the names of their registry entries).
SAMPLING_RULES = ("track-and-stop", "top-two")
#: Stopping rules (the values of option ``stopping``, the default first): the three proven ones first, then
#: the unproven heuristic and the oracle yardstick.
STOPPING_RULES = ("kt", "gk", "bets", "heuristic", "oracle")
#: The stopping rules proven delta-correct (for any rewards in [0, 1]).
PROVEN_STOPPING_RULES = ("kt", "gk", "bets")
#: The Top Two rule's share of samples for its leader.
TOP_TWO_BETA = 0.5

_KT, _GK, _BETS, _HEURISTIC, _ORACLE = range(5)
_TRACK_AND_STOP, _TOP_TWO = range(2)
#: Clip of the means inside (0, 1) for w*, so that every divergence stays finite.
_CLIP = 1e-6
_NEWTON_STEPS = 100


@njit(cache=True)
def heuristic_threshold(t, delta):
    """``ln((ln t + 1) / delta)``: the heuristic threshold (not proven delta-correct)."""
    return math.log((math.log(t) + 1.0) / delta)


@njit(cache=True)
def gk_threshold(t, n_arms, delta):
    """``ln(2 t (K - 1) / delta)``: Garivier & Kaufmann's (2016) proven threshold."""
    return math.log(2.0 * t * (n_arms - 1) / delta)


@njit(cache=True)
def _x_of_y(mu1, mua, y, x):
    """The root ``x`` of ``g_a(x) = d(mu_1, m) + x d(mu_a, m) = y``, ``m = (mu_1 + x mu_a)/(1 + x)``, from ``x``.

    ``g_a`` increases from 0 to ``d(mu_1, mu_a)`` and is concave with ``g_a'(x) = d(mu_a, m)``,
    so a Newton step from either side lands at or left of the root, and the iterates
    then rise to it; a step outside the bracket found so far is replaced by a bisection.
    """
    lo, hi = 0.0, math.inf
    for _ in range(_NEWTON_STEPS):
        m = (mu1 + x * mua) / (1.0 + x)
        slope = kl_bernoulli_scalar(mua, m)
        excess = kl_bernoulli_scalar(mu1, m) + x * slope - y
        if excess < 0.0:
            lo = x
        else:
            hi = x
        if abs(excess) <= 1e-15 * y or slope <= 0.0:
            break
        step = x - excess / slope
        if not lo < step < hi:
            step = 0.5 * (lo + hi) if hi < math.inf else 2.0 * x + 1.0
        if abs(step - x) <= 1e-15 * x:
            break
        x = step
    return x


@njit(cache=True)
def _proportions(mu, y, xs):
    """``(w*(mu), y)`` from the warm start ``y`` (none if ``y <= 0``) and ``xs`` (updated in place).

    Garivier & Kaufmann (2016, Theorem 5): ``w*_a`` is proportional to ``x_a(y*)`` (1 for
    the best arm), where ``y*`` solves ``F(y) = sum_a d(mu_1, m_a)/d(mu_a, m_a) = 1``;
    ``F`` increases from 0 to infinity on ``(0, d(mu_1, mu_2))``. Newton on ``F`` with
    its exact derivative, safeguarded by bisection, to ``|F - 1| <= 1e-13``. Uniform on a
    tie for the best arm.
    """
    k = mu.size
    w = np.full(k, 1.0 / k)
    best = 0
    for a in range(k):
        if mu[a] > mu[best]:
            best = a
    mu1 = min(max(mu[best], _CLIP), 1.0 - _CLIP)
    second = -1.0
    for a in range(k):
        if a != best:
            second = max(second, min(max(mu[a], _CLIP), 1.0 - _CLIP))
    if k == 1 or second >= mu1:
        return w, 0.0
    top = kl_bernoulli_scalar(mu1, second)
    lo, hi = 0.0, top
    if not 0.0 < y < top:
        y = 0.5 * top
    for _ in range(_NEWTON_STEPS):
        excess = -1.0
        slope = 0.0
        for a in range(k):
            if a == best:
                continue
            mua = min(max(mu[a], _CLIP), 1.0 - _CLIP)
            x = _x_of_y(mu1, mua, y, max(xs[a], 0.0))
            xs[a] = x
            m = (mu1 + x * mua) / (1.0 + x)
            d1 = kl_bernoulli_scalar(mu1, m)
            d2 = kl_bernoulli_scalar(mua, m)
            excess += d1 / d2
            # dF/dy = sum_a (d ratio/dm)(dm/dx)/g_a'(x), with g_a'(x) = d2.
            variance = m * (1.0 - m)
            ratio_slope = ((m - mu1) * d2 - (m - mua) * d1) / (variance * d2 * d2)
            slope += ratio_slope * (mua - mu1) / ((1.0 + x) * (1.0 + x)) / d2
        if excess < 0.0:
            lo = y
        else:
            hi = y
        if abs(excess) <= 1e-13:
            break
        step = y - excess / slope if slope > 0.0 else -1.0
        if not lo < step < hi:
            step = 0.5 * (lo + hi)
        if abs(step - y) <= 1e-15 * y:
            break
        y = step
    total = 1.0
    for a in range(k):
        if a != best:
            total += xs[a]
    for a in range(k):
        w[a] = (1.0 if a == best else xs[a]) / total
    return w, y


@njit(cache=True)
def optimal_proportions(mu):
    """``w*(mu)`` for Bernoulli arms (Garivier & Kaufmann 2016, Theorem 5); uniform on a tie."""
    return _proportions(mu, -1.0, np.zeros(mu.size))[0]


@njit(cache=True)
def _pair_glr(mu_hat, counts, a, b):
    """``Z_ab``: the GLR of ``mu_a > mu_b`` against ``mu_a <= mu_b`` (0 unless ``mu_hat_a > mu_hat_b``)."""
    if not mu_hat[a] > mu_hat[b]:
        return 0.0
    m = (counts[a] * mu_hat[a] + counts[b] * mu_hat[b]) / (counts[a] + counts[b])
    return counts[a] * kl_bernoulli_scalar(mu_hat[a], m) + counts[b] * kl_bernoulli_scalar(mu_hat[b], m)


@njit(cache=True)
def _empirical_best(mu_hat):
    a = 0
    for i in range(mu_hat.size):
        if mu_hat[i] > mu_hat[a]:
            a = i
    return a


@njit(cache=True)
def kt_statistic(sums, counts, a):
    """``min_{b != a} Z_ab - R_a - R_b``: the KT stop's statistic for the answer ``a``."""
    z = math.inf
    mu_hat = sums / counts
    regret_a = kt_regret(sums[a], float(counts[a]))
    for b in range(sums.size):
        if b != a:
            z = min(z, _pair_glr(mu_hat, counts, a, b) - regret_a - kt_regret(sums[b], float(counts[b])))
    return z


@njit(cache=True)
def oracle_statistic(means, mu_hat, counts, a):
    """The smallest log-likelihood ratio, over arms ``b != a``, of the true means (the larger given
    to ``a``) to the best fit with ``mu_b >= mu_a``; ``a`` must be the empirical best.

    It equals the GLR of the pair minus ``n_a d(mu_hat_a, hi) + n_b d(mu_hat_b, lo)``,
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


#: The bet grid of the ``"bets"`` stop (Betting-GBAI's).
_BET_GRID = bet_grid()


@njit(cache=True)
def bets_statistic(sums, counts, a, screen):
    """The smallest two-sample bet test of ``a`` above ``b`` over ``b != a`` (:func:`.mixtures.overtake_bets`).

    ``screen`` as there: a value at most ``screen`` may be a bound of the test.
    """
    z = math.inf
    for b in range(sums.size):
        if b != a:
            z = min(z, overtake_bets(sums[a:a + 1], counts[a:a + 1], sums[b:b + 1], counts[b:b + 1], _BET_GRID,
                                     screen))
            if z <= screen:
                break
    return z


@njit(cache=True)
def _level(rule, k, t, delta):
    """The level of stopping rule ``rule`` after ``t`` samples at ``delta``."""
    if rule == _GK:
        return gk_threshold(t, k, delta)
    if rule == _HEURISTIC:
        return heuristic_threshold(t, delta)
    return math.log((k - 1) / delta)


@njit(cache=True)
def _statistic(rule, means, sums, counts, a, t, delta):
    """``(statistic, level)`` of stopping rule ``rule`` (its index in :data:`STOPPING_RULES`)."""
    k = sums.size
    level = _level(rule, k, t, delta)
    if rule == _KT:
        return kt_statistic(sums, counts, a), level
    if rule == _ORACLE:
        return oracle_statistic(means, sums / counts, counts, a), level
    if rule == _BETS:
        return bets_statistic(sums, counts.astype(np.float64), a, level), level
    mu_hat = sums / counts
    z = math.inf
    for b in range(k):
        if b != a:
            z = min(z, _pair_glr(mu_hat, counts, a, b))
    return z, level


def stopping_statistic(stopping: str, means: np.ndarray, sums: np.ndarray, counts: np.ndarray, a: int, t: float,
                       delta: float) -> tuple[float, float]:
    """``(statistic, level)`` of the stop ``stopping`` (one of :data:`STOPPING_RULES`) for the answer ``a``.

    ``sums`` and ``counts`` are the arms' reward sums and sample counts after ``t``
    samples; ``means`` the true means (read by the ``"oracle"`` stop only).
    """
    return _statistic(STOPPING_RULES.index(stopping), means, sums, counts, a, t, delta)


@njit(cache=True)
def _reference_pass(means, keys, exponents, model, deltas, max_samples, sampling, stoppings):
    """Run a reference once for every stop of ``stoppings`` and delta of ``deltas``: the stop records of
    :func:`gbai.fast.levels.new_stops`, stop by stop (entry ``s L + l`` for stop ``s`` at delta ``l``).

    ``sampling`` and ``stoppings`` are codes in the order of :data:`SAMPLING_RULES` and
    :data:`STOPPING_RULES`. Each stop is checked after every sample. Neither sampling
    rule looks at delta or at the stop, so the run for a stop and a delta is the run
    they alone would give, recorded when that stop holds (``counts`` is ``K``;
    ``rounds`` counts the first round, then one per sample); the run ends when every
    entry has stopped, or at the budget (answer NO_ANSWER). The ``"bets"`` statistic is
    screened at the level of its largest pending delta, the lowest: a value at or
    below it is a bound, and no pending delta stops on it, as none would alone.
    """
    k = means.size
    n_deltas = deltas.size
    n_levels = stoppings.size * n_deltas
    stops = new_stops(n_levels, (k,))
    stopped = stops[4]
    passed = np.zeros(n_levels, dtype=np.bool_)
    sums, counts = first_round(keys, means, exponents, model, 1)
    t = k
    y = -1.0
    xs = np.zeros(k)
    led = np.zeros(k, dtype=np.int64)  # Top Two: rounds each arm led
    leader_pulls = np.zeros(k, dtype=np.int64)  # and samples it drew as the leader
    while True:
        mu_hat = sums / counts
        a = _empirical_best(mu_hat)
        for rule in range(stoppings.size):
            base = rule * n_deltas
            loosest = -1
            for index in range(n_deltas):
                if not stopped[base + index] and (loosest < 0 or deltas[index] > deltas[loosest]):
                    loosest = index
            if loosest < 0:  # this stop is done at every delta (record_stops passes over its entries)
                continue
            stopping = stoppings[rule]
            statistic, _ = _statistic(stopping, means, sums, counts, a, t, deltas[loosest])
            for index in range(n_deltas):
                passed[base + index] = statistic > _level(stopping, k, t, deltas[index])
        if record_stops(stops, passed, a, t, t - k + 1, counts, True) == 0:
            return stops
        if t + 1 > max_samples:
            passed[:] = True
            record_stops(stops, passed, NO_ANSWER, t, t - k + 1, counts, False)
            return stops
        if sampling == _TRACK_AND_STOP:
            fewest = 0
            for i in range(k):
                if counts[i] < counts[fewest]:
                    fewest = i
            if counts[fewest] < math.sqrt(t) - k / 2.0:
                pull = fewest
            else:
                w, y = _proportions(mu_hat, y, xs)
                pull = 0
                lag = -math.inf
                for i in range(k):
                    if t * w[i] - counts[i] > lag:
                        lag, pull = t * w[i] - counts[i], i
        else:
            led[a] += 1
            if leader_pulls[a] <= TOP_TWO_BETA * led[a]:
                pull = a
                leader_pulls[a] += 1
            else:
                pull = -1
                cost = math.inf
                for b in range(k):
                    if b != a:
                        value = _pair_glr(mu_hat, counts, a, b) + math.log(counts[b])
                        if value < cost:
                            cost, pull = value, b
        sums[pull] += draw(keys[pull], counts[pull], means[pull], exponents[pull], model)
        counts[pull] += 1
        t += 1


def _check(instance, stopping):
    if not isinstance(instance, Instance) or instance.n_attributes != 1:
        raise ValueError("the best-arm references need a gbai Instance with one attribute (M = 1)")
    if instance.n_arms < 2:
        raise ValueError("the best-arm references need at least two arms")
    if stopping == "oracle" and not ((instance.means > 0.0) & (instance.means < 1.0)).all():
        raise ValueError("the oracle stop needs every mean strictly between 0 and 1 (its likelihoods must be finite)")


def run_reference(sampling: str, instance: Instance, deltas: np.ndarray, keys: np.ndarray, model: int,
                  max_samples: int, options: dict) -> list[tuple]:
    """The registry kernel of reference ``sampling``: one ``(answer, samples, rounds, counts, stopped)`` per delta.

    ``sampling`` is one of :data:`SAMPLING_RULES`; ``options["stopping"]`` one of
    :data:`STOPPING_RULES` (module docstring): ``"kt"``, ``"gk"`` and ``"bets"`` are
    proven delta-correct, ``"heuristic"`` is not, ``"oracle"`` is told the true means.
    ``instance`` must have ``M = 1``; its threshold is ignored (plain best-arm
    identification), and ``counts`` has the instance's shape ``K x 1``. One pass
    serves every delta of ``deltas``, each entry identical to the run at that delta
    alone (neither sampling rule looks at delta); the pass costs about the run at the
    smallest delta. ``rounds`` counts the first round (every arm once) and then one
    round per sample. :func:`run_references` runs several stops in the same pass.
    """
    return run_references(sampling, instance, deltas, keys, model, max_samples, [options])[0]


def run_references(sampling: str, instance: Instance, deltas: np.ndarray, keys: np.ndarray, model: int,
                   max_samples: int, options: list[dict]) -> list[list[tuple]]:
    """:func:`run_reference` for each options of ``options`` (stops of one sampling rule), in one pass.

    Neither sampling rule reads the stop, so the pass samples as each run alone would
    and checks every stop after every sample: each list is, run for run, what
    :func:`run_reference` gives with those options.
    """
    for choice in options:
        _check(instance, choice["stopping"])
    means = np.ascontiguousarray(instance.means[:, 0], dtype=np.float64)
    stoppings = np.array([STOPPING_RULES.index(choice["stopping"]) for choice in options], dtype=np.int64)
    stops = _reference_pass(
        means, np.ascontiguousarray(keys[:, 0]), np.ascontiguousarray(reward_exponents(means)), model,
        np.asarray(deltas, dtype=np.float64), np.int64(max_samples), SAMPLING_RULES.index(sampling), stoppings)
    results = [(answer, samples, rounds, counts[:, None], stopped)
               for answer, samples, rounds, counts, stopped in level_results(stops)]
    n_deltas = len(deltas)
    return [results[rule * n_deltas:(rule + 1) * n_deltas] for rule in range(len(options))]
