"""Betting-GBAI: betting e-values per test, fewest union terms, weakest-test sampling (beyond the paper).

It is delta-correct for any rewards in [0, 1] by Ville's inequality applied to
nonnegative supermartingales built by betting (Waudby-Smith & Ramdas 2024,
"Estimating means of bounded random variables by betting", J. R. Stat. Soc. B
86(1), Sections 3-4: a capital process ``prod_k (1 + lambda_k (X_k - m))`` with
bets ``lambda_k`` in a range that keeps every factor positive is a nonnegative
supermartingale whenever ``E[X_k | past] <= m``, and so is any fixed convex
combination of such processes). The step-engine policy and the fast kernel call
the same compiled functions (:func:`betting_decide`, :func:`absorb_pair`,
:func:`absorb_round`), so the two engines agree exactly (``tests/test_engines.py``).

**The tests.** Three kinds of one-sided e-values, each a uniform mixture of
``G`` constant bets ``lambda_g = rho_g * lambda_max`` with ``rho_g`` geometric
from 0.95 down by a factor :data:`GRID_RATIO` (:data:`GRID_SIZE` bets):

* *pair above the threshold* (null ``mu_ij <= mu_TH``): capital
  ``prod_k (1 + lambda (X_ijk - mu_TH))``, ``lambda_max = 1/mu_TH``;
* *pair below the threshold* (null ``mu_ij >= mu_TH``): capital
  ``prod_k (1 + lambda (mu_TH - X_ijk))``, ``lambda_max = 1/(1 - mu_TH)``;
* *arm ``a`` above arm ``b``* (null ``m_a <= m_b``) on *complete arm-rounds*:
  ``D_k = Y_ak - Y_bk`` with ``Y_ik`` the average of the ``k``-th reward of each
  attribute of arm ``i``; the ``D_k`` are i.i.d. in [-1, 1] whatever the sampling
  rule (common random numbers fix the ``k``-th reward of a pair), so one stream
  replaces the ``2M`` pairs of the pair-level GLR; capital
  ``prod_{k <= K} (1 + lambda D_k)`` with ``K = min(T_a, T_b)``, ``lambda_max = 1``.

Betting adapts to the variance: for Bernoulli rewards the best constant bet grows
the log-capital at rate ``kl(mu, mu_TH)`` per sample (the Bernoulli limit), and for
less variable rewards faster.

**The stopping rule.** With ``a`` the empirical answer (:func:`gbai.lower_bounds.
alternatives.answer_kernel` of the pair means) and ``c = ln((N + M - 1)/delta)``,
stop when every alternative is rejected (log e-value ``>= c``):

* (A) every attribute ``j`` of ``a``: its *above* test;
* (B) every arm ``b != a``: the *below* test of some attribute of ``b``, or the
  arm test "``a`` above ``b``";
* (C) when no arm is empirically feasible, every arm ``b``: the *below* test of
  some attribute of ``b`` (output "infeasible").

*Why ``N + M - 1`` union terms suffice* (our derivation). Fix the truth and, for
each infeasible arm ``i``, one attribute ``j(i)`` with ``mu_ij(i) < mu_TH``. An error
needs one of these events: an infeasible arm ``i`` is returned, so the above test
of ``(i, j(i))`` crossed (null true); or the best arm ``a*`` exists and is
rejected in (B) or (C), so either a below test of one of its ``M`` pairs crossed
(null true) or the arm test "``i`` above ``a*``" crossed for a feasible ``i`` with
``m_i < m_a*`` (null true). Each arm ``i != a*`` contributes one event (infeasible:
the pair event; feasible: the arm event) and ``a*`` contributes ``M``, so at most
``N - 1 + M`` events (``N`` when no arm is feasible) are live, each of probability
at most ``delta/(N + M - 1)`` by Ville's inequality.

**Sampling** (ours, in the spirit of best-response sampling: it feeds the test
that is furthest from rejection). Every round the alternative with the smallest
log e-value is served: (A) samples that attribute of ``a``; (B) and (C) take the
cheaper route by a plug-in estimate of the samples still needed (a below test of
``b``'s most promising attribute, at ``kl(mu_hat, mu_TH)`` per sample, or the arm
test, at ``D_bar^2 / (2 var(D))`` per paired round), and the arm test samples one
arm-round (the lagging attributes) of whichever of ``a`` and ``b`` has fewer
complete rounds. The log e-values are what the stopping rule computes, so a
round costs ``O(N + M)`` plus ``O(G)`` per new sample.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engine import Decision, RoundState
from ..lower_bounds.alternatives import answer_kernel
from ..lower_bounds.divergences import kl_bernoulli_scalar
from ..rewards import draw, reward_exponents
from .base import Algorithm, canonical_spec
from .kernels import CONTINUE, NO_ANSWER, run_result

__all__ = [
    "ALGORITHM",
    "BETTING_OPTIONS",
    "BettingGBAI",
    "GRID_RATIO",
    "GRID_SIZE",
    "absorb_pair",
    "absorb_round",
    "bet_grid",
    "betting_decide",
    "betting_kernel",
    "rejection_level",
]

#: Options: ``arm_test`` ``"paired"`` (default) uses the arm-round stream test for
#: (B); ``"none"`` rejects (B) with pair tests only (the ablation).
BETTING_OPTIONS = {"arm_test": ("paired", "none")}

#: Number of constant bets in each mixture and the ratio between consecutive ones.
#: They are fixed parameters (delta-correctness holds for any fixed grid): 20 bets
#: from 0.95 lambda_max down to about 0.004 lambda_max cover gaps from about 0.005
#: to 1, and adjacent bets lose at most ~2% of the best constant bet's growth rate.
GRID_SIZE = 20
GRID_RATIO = 1.33
_INITIAL_CAPACITY = 256


def bet_grid() -> np.ndarray:
    """The bet fractions ``rho_g`` (of ``lambda_max``), largest first."""
    return 0.95 / GRID_RATIO ** np.arange(GRID_SIZE)


def rejection_level(n_arms: int, n_attributes: int, delta: float) -> float:
    """``c = ln((N + M - 1) / delta)``: the log e-value each test must reach."""
    return math.log((n_arms + n_attributes - 1) / delta)


@njit(cache=True)
def _log_mixture(log_capital):
    """``ln( (1/G) sum_g exp(log_capital_g) )``, computed stably."""
    top = log_capital.max()
    total = 0.0
    for value in log_capital:
        total += math.exp(value - top)
    return top + math.log(total / log_capital.size)


@njit(cache=True)
def absorb_pair(i, j, reward, threshold, rho, sums, counts, above, below, above_value, below_value):
    """Record a reward of pair ``(i, j)``: bet on it against ``mu_TH`` in both directions."""
    sums[i, j] += reward
    counts[i, j] += 1
    up = 1.0 / threshold
    down = 1.0 / (1.0 - threshold)
    for g in range(rho.size):
        above[i, j, g] += math.log1p(rho[g] * up * (reward - threshold))
        below[i, j, g] += math.log1p(rho[g] * down * (threshold - reward))
    above_value[i, j] = _log_mixture(above[i, j])
    below_value[i, j] = _log_mixture(below[i, j])


@njit(cache=True)
def absorb_round(i, values, rounds, arm_count):
    """Store arm ``i``'s next complete arm-round average; returns the (possibly grown) buffer."""
    k = arm_count[i]
    if k >= rounds.shape[1]:
        grown = np.zeros((rounds.shape[0], 2 * rounds.shape[1]))
        grown[:, : rounds.shape[1]] = rounds
        rounds = grown
    total = 0.0
    for j in range(values.size):
        total += values[j]
    rounds[i, k] = total / values.size
    arm_count[i] = k + 1
    return rounds


@njit(cache=True)
def _refresh_arm_tests(leader, rho, rounds, arm_count, paired, paired_log, paired_sum, paired_square, arm_value):
    """Advance the arm tests "leader above b" to ``K = min(T_leader, T_b)`` paired rounds."""
    n = arm_count.size
    for b in range(n):
        if b == leader:
            arm_value[b] = -math.inf
            continue
        target = min(arm_count[leader], arm_count[b])
        if paired[b] >= target:
            continue
        for k in range(paired[b], target):
            difference = rounds[leader, k] - rounds[b, k]
            paired_sum[b] += difference
            paired_square[b] += difference * difference
            for g in range(rho.size):
                paired_log[b, g] += math.log1p(rho[g] * difference)
        paired[b] = target
        arm_value[b] = _log_mixture(paired_log[b])


@njit(cache=True)
def _pair_rate(mean, threshold):
    """Plug-in growth rate of a pair test per sample (Bernoulli limit), floored."""
    return max(kl_bernoulli_scalar(min(max(mean, 0.0), 1.0), threshold), 1e-12)


@njit(cache=True)
def _paired_variance(paired, paired_sum, paired_square, b, m):
    """Variance estimate of ``D`` with one pseudo-observation at its bound ``1/(2M)``.

    The bound holds for any [0, 1] rewards (each arm-round average has variance at
    most ``1/(4M)``); the pseudo-observation keeps the first rounds, whose empirical
    variance is often 0, from promising an arm test that is nearly done.
    """
    count = paired[b]
    average = paired_sum[b] / count
    spread = max(paired_square[b] - count * average * average, 0.0)
    return (spread + 0.5 / m) / (count + 1)


@njit(cache=True)
def betting_decide(sums, counts, above_value, below_value, rho, rounds, arm_count, memory, paired, paired_log,
                   paired_sum, paired_square, arm_value, threshold, level, use_arm_test, pulls):
    """The stopping rule and the sampling rule of one round (see the module docstring).

    ``memory[0]`` holds the leader the arm tests are computed against (-1: none);
    when the empirical answer changes they are recomputed from the stored arm-rounds.
    Returns the answer, or :data:`CONTINUE` after filling ``pulls``.
    """
    n, m = counts.shape
    means = sums / counts
    answer, _ = answer_kernel(means, threshold)
    pulls[:, :] = False
    if use_arm_test and answer >= 0:
        if memory[0] != answer:
            memory[0] = answer
            paired[:] = 0
            paired_log[:, :] = 0.0
            paired_sum[:] = 0.0
            paired_square[:] = 0.0
        _refresh_arm_tests(answer, rho, rounds, arm_count, paired, paired_log, paired_sum, paired_square, arm_value)
    # Stopping: the smallest log e-value over the alternatives must reach the level.
    # Sampling serves the alternative with the smallest plug-in statistic ``Z`` (the
    # empirical GLR of its best route: ``N kl(mu_hat, mu_TH)`` for a pair test on the
    # right side of the threshold, ``K D_bar^2 / (2 var(D))`` for the arm test, 0 on
    # the wrong side) plus ``ln`` of the samples the test has used, the penalty of the
    # TCI challenger of Jourdan, Degenne, Baudry, de Heide, Kaufmann (2022, "Top two
    # algorithms revisited", NeurIPS); ties go to the smaller log e-value. The
    # penalty matters when the leader is wrong: a near tie between two wrong arms
    # keeps ``Z`` small forever, while the cheap correction (a pair of the true best
    # arm seen under the threshold) has few samples; e-values alone cannot tell
    # them apart, as both floor near ``-ln G``.
    weakest = math.inf
    chosen = math.inf
    chosen_value = math.inf
    weakest_kind = -1
    weakest_index = -1
    if answer >= 0:
        for j in range(m):
            value = above_value[answer, j]
            weakest = min(weakest, value)
            score = 0.0
            if means[answer, j] > threshold:
                score = counts[answer, j] * _pair_rate(means[answer, j], threshold)
            score += math.log(counts[answer, j])
            if value < level and (score < chosen or (score == chosen and value < chosen_value)):
                chosen, chosen_value, weakest_kind, weakest_index = score, value, 0, j
    for b in range(n):
        if b == answer:
            continue
        value = -math.inf
        score = 0.0
        for j in range(m):
            value = max(value, below_value[b, j])
            if means[b, j] < threshold:
                score = max(score, counts[b, j] * _pair_rate(means[b, j], threshold))
        if use_arm_test and answer >= 0:
            value = max(value, arm_value[b])
            if paired[b] >= 1:
                average = paired_sum[b] / paired[b]
                if average > 0.0:
                    variance = _paired_variance(paired, paired_sum, paired_square, b, m)
                    score = max(score, paired[b] * average * average / (2.0 * variance))
        arm_samples = 0
        for j in range(m):
            arm_samples += counts[b, j]
        score += math.log(arm_samples)
        weakest = min(weakest, value)
        if value < level and (score < chosen or (score == chosen and value < chosen_value)):
            chosen, chosen_value, weakest_kind, weakest_index = score, value, 1, b
    if weakest >= level:
        return answer  # every alternative rejected (an arm, or INFEASIBLE = -1)
    if weakest_kind == 0:
        pulls[answer, weakest_index] = True
        return CONTINUE
    b = weakest_index
    # Route 1: a below test of b's most promising attribute (mean under the threshold).
    pair_cost = math.inf
    pair_attribute = -1
    for j in range(m):
        if means[b, j] < threshold:
            cost = (level - below_value[b, j]) / _pair_rate(means[b, j], threshold)
            if cost < pair_cost:
                pair_cost, pair_attribute = cost, j
    # Route 2: the arm test "answer above b", one arm-round of the arm that lags.
    arm_cost = math.inf
    if use_arm_test and answer >= 0 and paired[b] >= 1:
        average = paired_sum[b] / paired[b]
        if average > 0.0:
            variance = _paired_variance(paired, paired_sum, paired_square, b, m)
            rate = average * average / (2.0 * variance)
            per_round = m if arm_count[answer] != arm_count[b] else 2 * m
            arm_cost = (level - arm_value[b]) / rate * per_round
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
def betting_kernel(means, threshold, keys, exponents, model, max_samples, rho, level, use_arm_test):
    """Betting-GBAI run to completion; returns ``(answer, samples, rounds, counts, stopped)``."""
    n, m = means.shape
    g = rho.size
    sums = np.zeros((n, m))
    counts = np.zeros((n, m), dtype=np.int64)
    above = np.zeros((n, m, g))
    below = np.zeros((n, m, g))
    above_value = np.zeros((n, m))
    below_value = np.zeros((n, m))
    rounds = np.zeros((n, _INITIAL_CAPACITY))
    arm_count = np.zeros(n, dtype=np.int64)
    memory = np.full(1, -1, dtype=np.int64)
    paired = np.zeros(n, dtype=np.int64)
    paired_log = np.zeros((n, g))
    paired_sum = np.zeros(n)
    paired_square = np.zeros(n)
    arm_value = np.full(n, -math.inf)
    pulls = np.zeros((n, m), dtype=np.bool_)
    values = np.empty(m)
    for i in range(n):
        for j in range(m):
            reward = draw(keys[i, j], 0, means[i, j], exponents[i, j], model)
            absorb_pair(i, j, reward, threshold, rho, sums, counts, above, below, above_value, below_value)
            values[j] = reward
        rounds = absorb_round(i, values, rounds, arm_count)
    samples = n * m
    n_rounds = 1
    while True:
        answer = betting_decide(sums, counts, above_value, below_value, rho, rounds, arm_count, memory, paired,
                                paired_log, paired_sum, paired_square, arm_value, threshold, level, use_arm_test,
                                pulls)
        if answer != CONTINUE:
            return answer, samples, n_rounds, counts, True
        n_new = 0
        for i in range(n):
            for j in range(m):
                if pulls[i, j]:
                    n_new += 1
        if samples + n_new > max_samples:
            return NO_ANSWER, samples, n_rounds, counts, False
        for i in range(n):
            touched = False
            for j in range(m):
                if pulls[i, j]:
                    reward = draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
                    absorb_pair(i, j, reward, threshold, rho, sums, counts, above, below, above_value, below_value)
                    touched = True
            if touched:
                fewest = counts[i, 0]
                for j in range(m):
                    fewest = min(fewest, counts[i, j])
                while arm_count[i] < fewest:
                    k = arm_count[i]
                    for j in range(m):
                        # The k-th reward of the pair is a function of its key and k.
                        values[j] = draw(keys[i, j], k, means[i, j], exponents[i, j], model)
                    rounds = absorb_round(i, values, rounds, arm_count)
        samples += n_new
        n_rounds += 1


def _check_options(arm_test: str) -> None:
    if arm_test not in BETTING_OPTIONS["arm_test"]:
        raise ValueError(f"betting: arm_test must be one of {list(BETTING_OPTIONS['arm_test'])}, got {arm_test!r}")


class BettingGBAI:
    """Betting-GBAI as a step-engine policy (see the module docstring for the rule)."""

    def __init__(self, arm_test: str = BETTING_OPTIONS["arm_test"][0]):
        _check_options(arm_test)
        self.use_arm_test = arm_test == "paired"
        self.name = canonical_spec("betting", {"arm_test": arm_test}, BETTING_OPTIONS)

    def reset(self, n_arms: int, n_attributes: int) -> None:
        n, m, g = n_arms, n_attributes, GRID_SIZE
        self.rho = bet_grid()
        self.sums = np.zeros((n, m))
        self.counts = np.zeros((n, m), dtype=np.int64)
        self.above = np.zeros((n, m, g))
        self.below = np.zeros((n, m, g))
        self.above_value = np.zeros((n, m))
        self.below_value = np.zeros((n, m))
        self.rounds = np.zeros((n, _INITIAL_CAPACITY))
        self.arm_count = np.zeros(n, dtype=np.int64)
        self.memory = np.full(1, -1, dtype=np.int64)
        self.paired = np.zeros(n, dtype=np.int64)
        self.paired_log = np.zeros((n, g))
        self.paired_sum = np.zeros(n)
        self.paired_square = np.zeros(n)
        self.arm_value = np.full(n, -math.inf)
        self.level: float | None = None

    def decide(self, state: RoundState) -> Decision:
        n, m = state.counts.shape
        if self.level is None:
            self.level = rejection_level(n, m, state.delta)
        observations = state.observations
        threshold = float(state.threshold)
        for i in range(n):
            # Pairs first, then the arm-rounds they complete: the fast kernel's order.
            for j in range(m):
                while self.counts[i, j] < state.counts[i, j]:
                    absorb_pair(i, j, float(observations[i][j][self.counts[i, j]]), threshold, self.rho, self.sums,
                                self.counts, self.above, self.below, self.above_value, self.below_value)
            while self.arm_count[i] < self.counts[i].min():
                k = self.arm_count[i]
                values = np.array([observations[i][j][k] for j in range(m)], dtype=np.float64)
                self.rounds = absorb_round(i, values, self.rounds, self.arm_count)
        pulls = np.zeros((n, m), dtype=bool)
        answer = betting_decide(self.sums, self.counts, self.above_value, self.below_value, self.rho, self.rounds,
                                self.arm_count, self.memory, self.paired, self.paired_log, self.paired_sum,
                                self.paired_square, self.arm_value, threshold, self.level, self.use_arm_test, pulls)
        return Decision.sample(pulls) if answer == CONTINUE else Decision.stop(int(answer))


def _run_betting(instance, delta, keys, model, max_samples, options):
    _check_options(**options)
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    return run_result(*betting_kernel(
        means, float(instance.threshold), np.ascontiguousarray(keys, dtype=np.uint64),
        np.ascontiguousarray(reward_exponents(means)), int(model), np.int64(max_samples), bet_grid(),
        rejection_level(instance.n_arms, instance.n_attributes, delta), options["arm_test"] == "paired",
    ))


ALGORITHM = Algorithm(
    name="betting",
    title="Betting-GBAI (betting e-values, N+M-1 union terms, weakest-test sampling)",
    reference="beyond the paper: gbai.algorithms.betting",
    make_policy=BettingGBAI,
    run_fast=_run_betting,
    options=BETTING_OPTIONS,
    modules=("algorithms/betting.py", "lower_bounds/alternatives.py", "lower_bounds/divergences.py",
             "lower_bounds/overtake.py"),
)
