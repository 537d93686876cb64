"""Betting-GBAI: a betting e-value per alternative, N + M - 1 union terms, weakest-test sampling (notebook 12).

Each test is the capital of a uniform mixture of :data:`GRID_SIZE` constant bets
against its null, a nonnegative supermartingale under the null (Waudby-Smith & Ramdas
2024, Sections 3-4), so Ville's inequality bounds the chance that it ever crosses a
level. Pair tests bet on one attribute's rewards against the threshold; the arm test
"a above b" bets on the attribute differences of complete arm-rounds, one factor per
attribute (option ``arm_test``). The empirical answer is returned when every
alternative is rejected at ``ln((N + M - 1)/delta)`` (option ``union``); sampling
serves the alternative furthest from rejection, with the TCI penalty of Jourdan et
al. (2022) (option ``sampling``). Notebook 12 derives the supermartingale property,
the union count and the sampling rule. Both engines call the same compiled functions.

``sampling="level-free"`` chooses the alternative to serve without looking at the
rejection level, so a run does not depend on delta until it stops:
:func:`run_betting` then runs it once for a list of deltas and records the stop of
each (notebook 12, section 7). ``betting:sampling=level-free`` is the package's
recommended algorithm (:data:`gbai.RECOMMENDED`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..fast.levels import first_round, kernel_inputs, level_results, new_stops, record_stops
from ..fast.rewards import draw
from ..limits.alternatives import answer_kernel
from ..limits.divergences import kl_bernoulli_scalar
from ..paper.engine import Decision, RoundState
from ..paper.model import CONTINUE, NO_ANSWER

__all__ = [
    "BETTING_OPTIONS",
    "BettingGBAI",
    "SAMPLING_LEVEL_FREE",
    "SAMPLING_UNIFORM",
    "SAMPLING_WEAKEST",
    "GRID_RATIO",
    "GRID_SIZE",
    "absorb_arm_round",
    "absorb_pair",
    "bernoulli_steps",
    "bet_grid",
    "betting_answer",
    "betting_decide",
    "betting_kernel",
    "level_free",
    "refresh_values",
    "rejection_level",
    "run_betting",
    "union_terms",
    "weakest_value",
]

#: Options, defaults first. ``arm_test``: ``"product"`` bets on the attribute
#: differences of a complete arm-round one by one (notebook 12, section 1);
#: ``"average"`` bets on their average, with bets capped at 1 (the ablation of the
#: product form); ``"none"`` rejects (B) with pair tests only. ``union``:
#: ``"structured"`` splits delta over the ``N + M - 1`` tests that can err together;
#: ``"every"`` over every test (``2NM + N(N - 1)``). ``sampling``: ``"weakest"``
#: serves the test furthest from rejection, among those below the rejection level;
#: ``"uniform"`` samples every pair once a round; ``"level-free"`` serves the same
#: tests without looking at the level (notebook 12, section 7), so that its runs do
#: not depend on delta and one run serves every delta (:func:`betting_kernel`).
BETTING_OPTIONS = {"arm_test": ("product", "average", "none"), "union": ("structured", "every"),
                   "sampling": ("weakest", "uniform", "level-free")}
_ARM_TEST_CODE = {"none": 0, "product": 1, "average": 2}
#: The sampling rules as the compiled functions take them.
SAMPLING_WEAKEST, SAMPLING_UNIFORM, SAMPLING_LEVEL_FREE = 0, 1, 2
_SAMPLING_CODE = {"weakest": SAMPLING_WEAKEST, "uniform": SAMPLING_UNIFORM, "level-free": SAMPLING_LEVEL_FREE}

#: Number of constant bets in each mixture and the ratio between consecutive ones.
#: They are fixed parameters (delta-correctness holds for any fixed grid): 20 bets
#: from 0.95 lambda_max down to about 0.004 lambda_max cover gaps from about 0.005
#: to 1, and adjacent bets lose at most ~2% of the best constant bet's growth rate.
GRID_SIZE = 20
GRID_RATIO = 1.33


def bet_grid() -> np.ndarray:
    """The bet fractions ``rho_g`` (of ``lambda_max``), largest first."""
    return 0.95 / GRID_RATIO ** np.arange(GRID_SIZE)


def union_terms(n_arms: int, n_attributes: int, union: str = "structured") -> int:
    """How many tests share delta: ``N + M - 1`` (notebook 12, section 2), or all ``2NM + N(N - 1)``."""
    if union == "structured":
        return n_arms + n_attributes - 1
    return 2 * n_arms * n_attributes + n_arms * (n_arms - 1)


def rejection_level(n_arms: int, n_attributes: int, delta: float, union: str = "structured") -> float:
    """``c = ln(terms / delta)``: the log e-value each test must reach."""
    return math.log(union_terms(n_arms, n_attributes, union) / delta)


@njit(cache=True)
def _log_mixture(log_capital):
    """``ln( (1/G) sum_g exp(log_capital_g) )``, computed stably."""
    top = log_capital.max()
    total = 0.0
    for value in log_capital:
        total += math.exp(value - top)
    return top + math.log(total / log_capital.size)


@njit(cache=True)
def bernoulli_steps(threshold, rho):
    """The log-capital steps of the rewards 0 and 1, once per run (a table for :func:`absorb_pair`).

    Rows: the pair tests' above and below steps at 0, then at 1; then the arm test's
    steps ``ln(1 + rho_g z)`` at ``z = -1, 0, 1``. Bernoulli rewards take only these
    values, so the tests add these very floats (the same expressions at the same
    arguments) without a ``log1p`` each.
    """
    steps = np.empty((7, rho.size))
    up = 1.0 / threshold
    down = 1.0 / (1.0 - threshold)
    for k in range(2):
        reward = float(k)
        for g in range(rho.size):
            steps[k, g] = math.log1p(rho[g] * up * (reward - threshold))
            steps[2 + k, g] = math.log1p(rho[g] * down * (threshold - reward))
    for k in range(3):
        for g in range(rho.size):
            steps[4 + k, g] = math.log1p(rho[g] * float(k - 1))
    return steps


@njit(cache=True)
def absorb_pair(i, j, reward, threshold, rho, steps, sums, counts, pair, above, below, above_value, below_value):
    """Record a reward of pair ``(i, j)``: bet on it against ``mu_TH`` in both directions.

    ``steps`` is :func:`bernoulli_steps` (used for a reward of exactly 0 or 1).
    ``pair`` keeps, per pair, what the sampling rule reads of it and which changes
    only here: the mean, :func:`_pair_rate` and ``ln`` of the count. The pair's two
    log e-values become NaN, to be computed when a round reads them (:func:`refresh_values`).
    """
    sums[i, j] += reward
    counts[i, j] += 1
    if reward == 0.0 or reward == 1.0:
        k = int(reward)
        for g in range(rho.size):
            above[i, j, g] += steps[k, g]
            below[i, j, g] += steps[2 + k, g]
    else:
        up = 1.0 / threshold
        down = 1.0 / (1.0 - threshold)
        for g in range(rho.size):
            above[i, j, g] += math.log1p(rho[g] * up * (reward - threshold))
            below[i, j, g] += math.log1p(rho[g] * down * (threshold - reward))
    above_value[i, j] = math.nan
    below_value[i, j] = math.nan
    mean = sums[i, j] / counts[i, j]
    pair[0, i, j] = mean
    pair[1, i, j] = _pair_rate(mean, threshold)
    pair[2, i, j] = math.log(counts[i, j])


@njit(cache=True)
def refresh_values(answer, above, below, above_value, below_value):
    """Compute the log e-values a round reads that are NaN (:func:`absorb_pair`).

    A round reads the above tests of the answer's pairs and the below tests of every
    other arm's pairs (:func:`weakest_value`, :func:`betting_decide`). A mixture is a
    function of its log-capitals alone, so computing it when it is read gives the
    float computing it at every reward would; most rewards then cost one mixture, not two.
    """
    n, m = above_value.shape
    for i in range(n):
        for j in range(m):
            if i == answer:
                if math.isnan(above_value[i, j]):
                    above_value[i, j] = _log_mixture(above[i, j])
            elif math.isnan(below_value[i, j]):
                below_value[i, j] = _log_mixture(below[i, j])


@njit(cache=True)
def absorb_arm_round(a, b, leader_values, other_values, rho, steps, arm_test, rounds, arm_log, arm_sum, arm_square,
                     arm_value):
    """Add one complete arm-round to the test "``a`` above ``b``" (``rounds[a, b] += 1``).

    ``arm_test`` 1 (product): log-capital ``sum_j ln(1 + lambda z_j)`` with
    ``z_j = X_aj - X_bj``, and ``arm_sum``/``arm_square`` collect ``sum_j z_j`` and
    ``sum_j z_j^2``; 2 (average): ``ln(1 + lambda D)`` with ``D = mean_j z_j``, and
    they collect ``D`` and ``D^2``. ``steps`` is :func:`bernoulli_steps` (a difference of
    exactly -1, 0 or 1 in the product).
    """
    m = leader_values.size
    total = 0.0
    square = 0.0
    for j in range(m):
        z = leader_values[j] - other_values[j]
        total += z
        square += z * z
    if arm_test == 1:
        for g in range(rho.size):
            growth = 0.0
            for j in range(m):
                z = leader_values[j] - other_values[j]
                if z == -1.0 or z == 0.0 or z == 1.0:
                    growth += steps[5 + int(z), g]
                else:
                    growth += math.log1p(rho[g] * z)
            arm_log[a, b, g] += growth
        arm_sum[a, b] += total
        arm_square[a, b] += square
    else:
        average = total / m
        for g in range(rho.size):
            arm_log[a, b, g] += math.log1p(rho[g] * average)
        arm_sum[a, b] += average
        arm_square[a, b] += average * average
    rounds[a, b] += 1
    arm_value[a, b] = _log_mixture(arm_log[a, b])


@njit(cache=True)
def betting_answer(means, threshold):
    """The empirical answer of the pair means (an arm, or -1 for "infeasible")."""
    answer, _ = answer_kernel(means, threshold)
    return answer


@njit(cache=True)
def _pair_rate(mean, threshold):
    """Plug-in growth rate of a pair test per sample (Bernoulli limit), floored."""
    return max(kl_bernoulli_scalar(min(max(mean, 0.0), 1.0), threshold), 1e-12)


@njit(cache=True)
def _arm_rate(a, b, m, arm_test, rounds, arm_sum, arm_square):
    """Plug-in growth rate of the arm test "``a`` above ``b``" per paired round (0: none).

    One pseudo-round at a variance bound keeps the first rounds, whose empirical
    variance is often 0, from promising a test that is nearly done: ``sum_j z_j^2``
    at ``M/2`` (product) or ``var(D)`` at ``1/(2M)`` (average; an arm-round average
    of [0, 1] rewards has variance at most ``1/(4M)``).
    """
    count = rounds[a, b]
    if count == 0 or arm_sum[a, b] <= 0.0:
        return 0.0
    if arm_test == 1:
        # Best bet lambda = S1/S2 (capped at 1) of the quadratic growth lambda S1 - lambda^2 S2 / 2.
        square = arm_square[a, b] + 0.5 * m
        bet = min(arm_sum[a, b] / square, 1.0)
        return (bet * arm_sum[a, b] - 0.5 * bet * bet * square) / (count + 1)
    average = arm_sum[a, b] / count
    spread = max(arm_square[a, b] - count * average * average, 0.0)
    variance = (spread + 0.5 / m) / (count + 1)
    return average * average / (2.0 * variance)


@njit(cache=True)
def weakest_value(answer, above_value, below_value, arm_value, use_arm_test):
    """The smallest log e-value over the alternatives of ``answer`` (notebook 12, section 2).

    (A) the above test of every attribute of the answer; (B) and (C) for every other
    arm ``b``, the larger of its below tests and, when ``use_arm_test``, the arm test
    "``answer`` above ``b``". The stopping rule answers once it reaches the level.
    """
    n, m = above_value.shape
    weakest = math.inf
    if answer >= 0:
        for j in range(m):
            weakest = min(weakest, above_value[answer, j])
    for b in range(n):
        if b == answer:
            continue
        value = -math.inf
        for j in range(m):
            value = max(value, below_value[b, j])
        if use_arm_test:
            value = max(value, arm_value[answer, b])
        weakest = min(weakest, value)
    return weakest


@njit(cache=True)
def betting_decide(answer, counts, pair, arm_log_samples, above_value, below_value, arm_count, rounds, arm_sum,
                   arm_square, arm_value, threshold, level, arm_test, sampling, pulls):
    """The stopping rule and the sampling rule of one round (notebook 12, sections 2, 3 and 7).

    The caller has brought the arm tests "``answer`` above ``b``" up to
    ``min(arm_count[answer], arm_count[b])`` rounds (:func:`absorb_arm_round`).
    ``pair`` holds the pair means, rates and log counts (:func:`absorb_pair`),
    ``arm_log_samples`` the ``ln`` of each arm's samples.
    ``sampling`` is :data:`SAMPLING_WEAKEST`, :data:`SAMPLING_UNIFORM` or
    :data:`SAMPLING_LEVEL_FREE`. Returns the answer, or :data:`CONTINUE` after filling ``pulls``.
    """
    n, m = counts.shape
    means = pair[0]
    rates = pair[1]
    use_arm_test = arm_test > 0 and answer >= 0
    pulls[:, :] = False
    # Stopping: the smallest log e-value over the alternatives must reach the level.
    weakest = weakest_value(answer, above_value, below_value, arm_value, use_arm_test)
    if weakest >= level:
        return answer  # every alternative rejected (an arm, or INFEASIBLE = -1)
    if sampling == SAMPLING_UNIFORM:
        pulls[:, :] = True
        return CONTINUE
    # Which alternatives may be served. Weakest: those not yet rejected at the level.
    # Level-free: all of them while some alternative has no evidence yet (a log
    # e-value at most 0), then only those whose log e-value is the smallest; the
    # level, hence delta, plays no part.
    cut = level
    inclusive = False
    if sampling == SAMPLING_LEVEL_FREE:
        cut = weakest if weakest > 0.0 else math.inf
        inclusive = True
    # Sampling serves the alternative with the smallest plug-in statistic ``Z`` (the
    # empirical GLR of its best route: ``N kl(mu_hat, mu_TH)`` for a pair test on the
    # right side of the threshold, rounds times the arm test's plug-in rate, 0 on
    # the wrong side) plus ``ln`` of the samples the test has used, the penalty of the
    # TCI challenger of Jourdan, Degenne, Baudry, de Heide, Kaufmann (2022, "Top two
    # algorithms revisited", NeurIPS); ties go to the smaller log e-value. The
    # penalty matters when the leader is wrong: a near tie between two wrong arms
    # keeps ``Z`` small forever, while the cheap correction (a pair of the true best
    # arm seen under the threshold) has few samples; e-values alone cannot tell
    # them apart, as both floor near ``-ln G``.
    chosen = math.inf
    chosen_value = math.inf
    weakest_kind = -1
    weakest_index = -1
    if answer >= 0:
        for j in range(m):
            value = above_value[answer, j]
            score = 0.0
            if means[answer, j] > threshold:
                score = counts[answer, j] * rates[answer, j]
            score += pair[2, answer, j]
            if (value < cut or (inclusive and value == cut)) and (
                    score < chosen or (score == chosen and value < chosen_value)):
                chosen, chosen_value, weakest_kind, weakest_index = score, value, 0, j
    for b in range(n):
        if b == answer:
            continue
        value = -math.inf
        score = 0.0
        for j in range(m):
            value = max(value, below_value[b, j])
            if means[b, j] < threshold:
                score = max(score, counts[b, j] * rates[b, j])
        if use_arm_test:
            value = max(value, arm_value[answer, b])
            score = max(score, rounds[answer, b] * _arm_rate(answer, b, m, arm_test, rounds, arm_sum, arm_square))
        score += arm_log_samples[b]
        if (value < cut or (inclusive and value == cut)) and (
                score < chosen or (score == chosen and value < chosen_value)):
            chosen, chosen_value, weakest_kind, weakest_index = score, value, 1, b
    if weakest_kind == 0:
        pulls[answer, weakest_index] = True
        return CONTINUE
    b = weakest_index
    # Route 1: a below test of b's most promising attribute (mean under the threshold).
    # Route 2: the arm test "answer above b", one arm-round of the arm that lags.
    # Weakest: the route with fewer samples still needed to reach the level, by the
    # plug-in rates. Level-free: the route that gains more per sample (the same
    # choice once the level is far), with the attribute that gains most.
    pair_cost = math.inf
    pair_attribute = -1
    for j in range(m):
        if means[b, j] < threshold:
            if sampling == SAMPLING_LEVEL_FREE:
                cost = -rates[b, j]
            else:
                cost = (level - below_value[b, j]) / rates[b, j]
            if cost < pair_cost:
                pair_cost, pair_attribute = cost, j
    arm_cost = math.inf
    if use_arm_test:
        rate = _arm_rate(answer, b, m, arm_test, rounds, arm_sum, arm_square)
        if rate > 0.0:
            per_round = m if arm_count[answer] != arm_count[b] else 2 * m
            if sampling == SAMPLING_LEVEL_FREE:
                arm_cost = -rate / per_round
            else:
                arm_cost = (level - arm_value[answer, b]) / rate * per_round
    if pair_attribute >= 0 and pair_cost <= arm_cost:
        pulls[b, pair_attribute] = True
        return CONTINUE
    if answer < 0:
        # (C) with no attribute of b under the threshold cannot happen (b would be
        # empirically feasible); kept as a safeguard: sample b's lowest attribute.
        lowest = 0
        for j in range(m):
            if means[b, j] < means[b, lowest]:
                lowest = j
        pulls[b, lowest] = True
        return CONTINUE
    lagging = b if arm_count[b] <= arm_count[answer] else answer
    for j in range(m):
        if counts[lagging, j] == arm_count[lagging]:
            pulls[lagging, j] = True
    return CONTINUE


@njit(cache=True)
def _new_state(n, m, g):
    """The statistics of a run: pair sums, counts and :func:`absorb_pair`'s ``pair``, pair and arm log-capitals."""
    return (np.zeros((n, m)), np.zeros((n, m), dtype=np.int64), np.zeros((3, n, m)), np.zeros((n, m, g)),
            np.zeros((n, m, g)), np.zeros((n, m)), np.zeros((n, m)), np.zeros((n, n), dtype=np.int64),
            np.zeros((n, n, g)), np.zeros((n, n)), np.zeros((n, n)), np.full((n, n), -math.inf))


@njit(cache=True)
def _arm_log_samples(counts, i, out):
    """``ln`` of arm ``i``'s samples (the TCI penalty of the sampling rule) into ``out[i]``."""
    samples = 0
    for j in range(counts.shape[1]):
        samples += counts[i, j]
    out[i] = math.log(samples)


@njit(cache=True)
def betting_kernel(means, threshold, keys, exponents, model, max_samples, rho, levels, arm_test, sampling):
    """Betting-GBAI at every level of ``levels`` in one pass: the stop records of :func:`~gbai.fast.levels.new_stops`.

    A level stops at the first round whose smallest log e-value reaches it; the run
    ends at the largest level (or the budget). The sampling rule sees only the largest
    level; with the level-free rule it sees none, so each entry is the run a single
    level would give (notebook 12, section 7).
    """
    n, m = means.shape
    (sums, counts, pair, above, below, above_value, below_value, rounds, arm_log, arm_sum, arm_square,
     arm_value) = _new_state(n, m, rho.size)
    steps = bernoulli_steps(threshold, rho)
    arm_log_samples = np.zeros(n)
    stops = new_stops(levels.size, (n, m))
    everywhere = np.ones(levels.size, dtype=np.bool_)
    top = levels.max()
    arm_count = np.ones(n, dtype=np.int64)
    pulls = np.zeros((n, m), dtype=np.bool_)
    leader_values = np.empty(m)
    other_values = np.empty(m)
    first, _ = first_round(keys, means, exponents, model, 1)
    for i in range(n):
        for j in range(m):
            absorb_pair(i, j, first[i, j], threshold, rho, steps, sums, counts, pair, above, below, above_value,
                        below_value)
        _arm_log_samples(counts, i, arm_log_samples)
    samples = n * m
    n_rounds = 1
    while True:
        answer = betting_answer(pair[0], threshold)
        if arm_test > 0 and answer >= 0:
            a = answer
            for b in range(n):
                if b == a:
                    continue
                # The k-th reward of a pair is a function of its key and k: redraw, don't store.
                for k in range(rounds[a, b], min(arm_count[a], arm_count[b])):
                    for j in range(m):
                        leader_values[j] = draw(keys[a, j], k, means[a, j], exponents[a, j], model)
                        other_values[j] = draw(keys[b, j], k, means[b, j], exponents[b, j], model)
                    absorb_arm_round(a, b, leader_values, other_values, rho, steps, arm_test, rounds, arm_log,
                                     arm_sum, arm_square, arm_value)
        refresh_values(answer, above, below, above_value, below_value)
        if levels.size > 1:
            weakest = weakest_value(answer, above_value, below_value, arm_value, arm_test > 0 and answer >= 0)
            record_stops(stops, levels <= weakest, answer, samples, n_rounds, counts, True)
        decision = betting_decide(answer, counts, pair, arm_log_samples, above_value, below_value, arm_count, rounds,
                                  arm_sum, arm_square, arm_value, threshold, top, arm_test, sampling, pulls)
        if decision != CONTINUE:
            record_stops(stops, everywhere, decision, samples, n_rounds, counts, True)
            return stops
        n_new = pulls.sum()
        if samples + n_new > max_samples:
            record_stops(stops, everywhere, NO_ANSWER, samples, n_rounds, counts, False)
            return stops
        for i in range(n):
            fewest = counts[i, 0] + 1
            pulled = False
            for j in range(m):
                if pulls[i, j]:
                    reward = draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
                    absorb_pair(i, j, reward, threshold, rho, steps, sums, counts, pair, above, below, above_value,
                                below_value)
                    pulled = True
                fewest = min(fewest, counts[i, j])
            arm_count[i] = fewest
            if pulled:
                _arm_log_samples(counts, i, arm_log_samples)
        samples += n_new
        n_rounds += 1


def _check_options(arm_test: str, union: str, sampling: str) -> None:
    for name, value in (("arm_test", arm_test), ("union", union), ("sampling", sampling)):
        if value not in BETTING_OPTIONS[name]:
            raise ValueError(f"betting: {name} must be one of {list(BETTING_OPTIONS[name])}, got {value!r}")


def level_free(options: dict) -> bool:
    """True when a spec's sampling ignores the rejection level, so one run serves every delta."""
    return options["sampling"] == "level-free"


_DEFAULTS = {name: values[0] for name, values in BETTING_OPTIONS.items()}


class BettingGBAI:
    """Betting-GBAI as a step-engine policy (the rule: module docstring and notebook 12)."""

    def __init__(self, arm_test: str = _DEFAULTS["arm_test"], union: str = _DEFAULTS["union"],
                 sampling: str = _DEFAULTS["sampling"]):
        _check_options(arm_test, union, sampling)
        self.arm_test = _ARM_TEST_CODE[arm_test]
        self.union = union
        self.sampling = _SAMPLING_CODE[sampling]
        self.name = "betting"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.rho = bet_grid()
        (self.sums, self.counts, self.pair, self.above, self.below, self.above_value, self.below_value, self.rounds,
         self.arm_log, self.arm_sum, self.arm_square, self.arm_value) = _new_state(n_arms, n_attributes,
                                                                                   self.rho.size)
        self.arm_log_samples = np.zeros(n_arms)
        self.level: float | None = None

    def decide(self, state: RoundState) -> Decision:
        n, m = state.counts.shape
        threshold = float(state.threshold)
        if self.level is None:  # the run's constants, once (the threshold and delta come with the first round)
            self.level = rejection_level(n, m, state.delta, self.union)
            self.steps = bernoulli_steps(threshold, self.rho)
        observations = state.observations
        steps = self.steps
        for i in range(n):
            for j in range(m):
                while self.counts[i, j] < state.counts[i, j]:
                    absorb_pair(i, j, float(observations[i][j][self.counts[i, j]]), threshold, self.rho, steps,
                                self.sums, self.counts, self.pair, self.above, self.below, self.above_value,
                                self.below_value)
            _arm_log_samples(self.counts, i, self.arm_log_samples)
        arm_count = self.counts.min(axis=1)
        answer = int(betting_answer(self.pair[0], threshold))
        if self.arm_test > 0 and answer >= 0:
            a = answer
            for b in range(n):
                if b == a:
                    continue
                # The kernel's order: arm-rounds in turn, after every pair's new rewards.
                for k in range(self.rounds[a, b], min(arm_count[a], arm_count[b])):
                    leader = np.array([observations[a][j][k] for j in range(m)], dtype=np.float64)
                    other = np.array([observations[b][j][k] for j in range(m)], dtype=np.float64)
                    absorb_arm_round(a, b, leader, other, self.rho, steps, self.arm_test, self.rounds, self.arm_log,
                                     self.arm_sum, self.arm_square, self.arm_value)
        refresh_values(answer, self.above, self.below, self.above_value, self.below_value)
        pulls = np.zeros((n, m), dtype=bool)
        answer = betting_decide(answer, self.counts, self.pair, self.arm_log_samples, self.above_value,
                                self.below_value, arm_count, self.rounds, self.arm_sum, self.arm_square,
                                self.arm_value, threshold, self.level, self.arm_test, self.sampling, pulls)
        return Decision.sample(pulls) if answer == CONTINUE else Decision.stop(int(answer))


def run_betting(instance, deltas: np.ndarray, keys: np.ndarray, model: int, max_samples: int,
                options: dict) -> list[tuple]:
    """The registry kernel: one pass, one run tuple per level of ``deltas`` (all of them only if :func:`level_free`)."""
    _check_options(**options)
    arguments = (*kernel_inputs(instance, keys), int(model), np.int64(max_samples), bet_grid())
    codes = _ARM_TEST_CODE[options["arm_test"]], _SAMPLING_CODE[options["sampling"]]
    levels = np.array([rejection_level(instance.n_arms, instance.n_attributes, delta, options["union"])
                       for delta in deltas])
    return level_results(betting_kernel(*arguments, levels, *codes))
