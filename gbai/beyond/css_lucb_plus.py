"""CSS-LUCB+: CSS-LUCB with time-uniform confidence bounds and targeted sampling (notebook 10).

CSS-LUCB's sets, leader, competitor and stopping rule (Algorithm 1 of the paper) with
three switches, the first value of each the default (:data:`PLUS_OPTIONS`):
``confidence`` (``bernstein``: Howard et al.'s (2021) stitched Hoeffding boundary
intersected with their empirical-Bernstein boundary; ``anytime``: the Hoeffding one
alone; ``paper``: the radius of eq. (3)), ``arm_radius`` (``average``: variance proxy
1/(4M) for an arm mean; ``paper``: 1/4) and ``sampling`` (``targeted``: only the pairs
that can still end the run; ``all``: every attribute of the leader and competitor).
Arm means use complete arm-rounds. With every switch at the paper's setting it is
CSS-LUCB, sample for sample. Notebook 10 derives the intervals and why the stopping
rule is delta-correct for any rewards in [0, 1]; both engines call :func:`plus_decide`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..fast.levels import first_round, kernel_inputs, one_level, run_result
from ..fast.paper import css_lucb_decision, paper_log_constant, paper_radius
from ..fast.rewards import draw
from ..paper.engine import Decision, RoundState
from ..paper.model import CONTINUE, NO_ANSWER
from .confidence_sequences import ETA, K1, K2, STITCHING_S, stitched, stitched_log_constant, stitched_radius

__all__ = ["CSSLUCBPlus", "PLUS_OPTIONS", "arm_rounds", "css_lucb_plus_kernel", "new_sets", "plus_decide", "plus_logs",
           "run_css_lucb_plus"]

#: Options of CSS-LUCB+: the first value of each is the default.
PLUS_OPTIONS = {
    "confidence": ("bernstein", "anytime", "paper"),
    "arm_radius": ("average", "paper"),
    "sampling": ("targeted", "all"),
}


_PAPER, _ANYTIME, _BERNSTEIN = 0, 1, 2
_CONFIDENCE_CODES = {"paper": _PAPER, "anytime": _ANYTIME, "bernstein": _BERNSTEIN}
# The three constants below are fixed parameters of the algorithm; delta-correctness
# holds for any fixed values. They were chosen by trying a few values (v_min in 1, 4,
# 10, 20, 30, 100; the two shares in 0.05-0.5 and 0.5-0.9) on six paper instances with
# seed 7, which is not the seed of the reported experiments.
#: Intrinsic time ``m`` of eq. (10) for the empirical-Bernstein boundary. The
#: boundary is used at ``u(max(V_t, m))`` (Howard et al. 2021, Theorem 1), valid from
#: the first sample: below an empirical variance process of 20 it is held at its
#: value at 20, which is loose there, and the Hoeffding bound is then the tighter.
BERNSTEIN_V_MIN = 20.0
#: In ``confidence="bernstein"`` mode, the share of an interval's error probability
#: given to the Hoeffding bound; the rest goes to the empirical-Bernstein bound.
HOEFFDING_SHARE = 0.1
#: The share of ``delta`` given to the ``N`` arm intervals (the rest goes to the ``NM``
#: pair intervals): comparisons of arm means are the bottleneck more often.
ARM_SHARE = 0.75


def plus_logs(n_arms: int, n_attributes: int, delta: float, confidence: str) -> np.ndarray:
    """The log constants of CSS-LUCB+'s radii: ``[paper, pair Hoeffding, pair Bernstein,
    arm Hoeffding, arm Bernstein]``.

    ``delta`` is split between the ``NM`` pair intervals (``1 - ARM_SHARE``) and the
    ``N`` arm intervals (``ARM_SHARE``), equally within each group and between the
    two sides of each interval: one side of a pair interval may fail with probability
    ``(1 - ARM_SHARE) delta / (2 NM)``, one side of an arm interval with
    ``ARM_SHARE delta / (2 N)``. With ``confidence="bernstein"`` each of these is split
    again between the Hoeffding bound (:data:`HOEFFDING_SHARE`) and the
    empirical-Bernstein bound. The first entry is the paper's ``ln(4NM/delta)``.
    Notebook 10 (section 2) shows that these shares add up to ``delta``.
    """
    pair_alpha = (1.0 - ARM_SHARE) * delta / (2.0 * n_arms * n_attributes)
    arm_alpha = ARM_SHARE * delta / (2.0 * n_arms)
    share = HOEFFDING_SHARE if confidence == "bernstein" else 1.0
    rest = 1.0 - HOEFFDING_SHARE
    return np.array([
        paper_log_constant(n_arms * n_attributes, delta),
        stitched_log_constant(pair_alpha * share),
        stitched_log_constant(pair_alpha * rest),
        stitched_log_constant(arm_alpha * share),
        stitched_log_constant(arm_alpha * rest),
    ])


@njit(cache=True)
def _radius(count, t, proxy, spread, mode, paper_log, hoeffding_log, bernstein_log, paper_count):
    """Radius of a mean of ``count`` observations.

    ``mode`` 0: the paper's ``sqrt(ln(4NMt^4/delta) / (2 paper_count))``; 1: Howard et
    al.'s stitched sub-Gaussian boundary with variance proxy ``proxy`` per
    observation; 2: the smaller of that and their empirical-Bernstein boundary
    (Theorem 4, scale 1 for [0, 1] data) at the empirical variance process ``spread``.
    """
    if mode == _PAPER:
        return paper_radius(paper_log, t, paper_count)
    value = stitched_radius(count, proxy, hoeffding_log)
    if mode == _BERNSTEIN:
        empirical = stitched(spread, BERNSTEIN_V_MIN, 1.0, bernstein_log, K1, K2, STITCHING_S, ETA) / count
        value = min(value, empirical)
    return value


@njit(cache=True)
def _observe(i, j, reward, sums, counts, spread):
    """Record a reward of pair ``(i, j)``; ``spread`` accumulates ``(x - x_hat)^2`` with the
    predictable centre ``x_hat = (1/2 + sum of earlier rewards) / (count + 1)``."""
    centre = (0.5 + sums[i, j]) / (counts[i, j] + 1)
    spread[i, j] += (reward - centre) * (reward - centre)
    sums[i, j] += reward
    counts[i, j] += 1


@njit(cache=True)
def _absorb_round(i, values, balanced, arm_count, arm_total, arm_spread):
    """Add one complete arm-round (the ``k``-th reward of every attribute) to arm ``i``."""
    m = values.size
    average = 0.0
    for j in range(m):
        balanced[i, j] += values[j]
        average += values[j]
    average /= m
    centre = (0.5 + arm_total[i]) / (arm_count[i] + 1)
    arm_spread[i] += (average - centre) * (average - centre)
    arm_total[i] += average
    arm_count[i] += 1


@njit(cache=True)
def _balanced_mean(balanced, arm_count, i):
    """Mean of arm ``i`` over its complete arm-rounds, attributes summed left to right."""
    m = balanced.shape[1]
    total = 0.0
    for j in range(m):
        total += balanced[i, j] / arm_count[i]
    return total / m


@njit(cache=True)
def arm_rounds(counts, i):
    """``T_i = min_j T_ij``: the number of complete arm-rounds of arm ``i``."""
    fewest = counts[i, 0]
    for j in range(counts.shape[1]):
        fewest = min(fewest, counts[i, j])
    return fewest


@njit(cache=True)
def plus_decide(pair_mean, pair_radius, arm_mean, arm_radius, counts, threshold, targeted, pulls, sets):
    """CSS-LUCB+'s decision for one round.

    Returns the answer (an arm, or -1 for infeasible) when ``F_t`` and ``P_t`` are
    disjoint; otherwise fills ``pulls`` and returns :data:`CONTINUE`. The sets, the
    stopping rule and ``i_t``, ``c_t`` are CSS-LUCB's (:func:`gbai.fast.paper.css_lucb_decision`);
    the targeted sampling rule is stated in notebook 10 (section 2). ``sets`` is
    :func:`new_sets` of the arms, overwritten here (a run allocates it once, not every round).
    """
    n, m = pair_mean.shape
    feasible, perfect, lower, upper = sets
    for i in range(n):
        lower[i] = arm_mean[i] - arm_radius[i]
        upper[i] = arm_mean[i] + arm_radius[i]
        possible = True
        certain = True
        for j in range(m):
            if pair_mean[i, j] + pair_radius[i, j] < threshold:
                possible = False
            if pair_mean[i, j] - pair_radius[i, j] < threshold:
                certain = False
        feasible[i] = possible
        perfect[i] = possible and certain
    answer, leader, competitor = css_lucb_decision(arm_mean, lower, upper, feasible, perfect)
    if answer != CONTINUE:
        return answer
    pulls[:, :] = False
    if not targeted:
        pulls[leader, :] = True  # every pair of an arm of F_t is in F_t^A
        if competitor >= 0:
            pulls[competitor, :] = True
        return CONTINUE
    if not perfect[leader]:
        # Until the leader is certified feasible (or ruled out) nothing else can
        # decide the run: sample its undecided attributes only.
        for j in range(m):
            if pair_mean[leader, j] - pair_radius[leader, j] < threshold:
                pulls[leader, j] = True
        return CONTINUE
    if competitor < 0:  # cannot happen while F_t and P_t overlap; kept as a safeguard
        pulls[leader, :] = True
        return CONTINUE
    # The competitor can leave P_t on the mean or leave F_t on an attribute: estimate the
    # samples each route still needs from the current intervals (radius^2 * count is
    # nearly constant), and take the cheaper one.
    feasibility_cost = math.inf
    weakest = -1
    if not perfect[competitor]:
        for j in range(m):
            gap = threshold - pair_mean[competitor, j]
            if pair_mean[competitor, j] - pair_radius[competitor, j] < threshold and gap > 0.0:
                need = pair_radius[competitor, j] ** 2 * counts[competitor, j] / (gap * gap) - counts[competitor, j]
                if need < feasibility_cost:
                    feasibility_cost, weakest = need, j
    mean_cost = math.inf
    gap = arm_mean[leader] - arm_mean[competitor]
    if gap > 0.0:
        spread_leader = arm_radius[leader] * math.sqrt(arm_rounds(counts, leader))
        spread_competitor = arm_radius[competitor] * math.sqrt(arm_rounds(counts, competitor))
        rounds_needed = (spread_leader + spread_competitor) ** 2 / (gap * gap)
        mean_cost = m * (max(rounds_needed - arm_rounds(counts, leader), 0.0)
                         + max(rounds_needed - arm_rounds(counts, competitor), 0.0))
    if weakest >= 0 and feasibility_cost <= mean_cost:
        pulls[competitor, weakest] = True
        return CONTINUE
    # Mean route: one arm-round of the arm with the wider interval (both when equal).
    for arm in (leader, competitor):
        other = competitor if arm == leader else leader
        if arm_radius[arm] >= arm_radius[other]:
            fewest = arm_rounds(counts, arm)
            for j in range(m):
                if counts[arm, j] == fewest:
                    pulls[arm, j] = True
    return CONTINUE


@njit(cache=True)
def new_sets(n):
    """Room for :func:`plus_decide`'s sets: possibly feasible, surely feasible, lower and upper arm bounds."""
    return np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), np.empty(n), np.empty(n)


@njit(cache=True)
def _advance_balanced(i, counts, last, keys, means, exponents, model, balanced, arm_count, arm_total, arm_spread,
                      values):
    """Absorb arm ``i``'s newly completed arm-rounds (``values``: room for one); True if there was any."""
    m = counts.shape[1]
    fewest = arm_rounds(counts, i)
    changed = False
    while arm_count[i] < fewest:
        k = arm_count[i]
        for j in range(m):
            # The k-th reward of the pair: just drawn, or drawn earlier (common random
            # numbers make it a function of the key and k, so it is recomputed).
            if counts[i, j] == k + 1:
                values[j] = last[i, j]
            else:
                values[j] = draw(keys[i, j], k, means[i, j], exponents[i, j], model)
        _absorb_round(i, values, balanced, arm_count, arm_total, arm_spread)
        changed = True
    return changed


@njit(cache=True)
def css_lucb_plus_kernel(means, threshold, keys, exponents, model, max_samples, mode, average, targeted, logs):
    """CSS-LUCB+ run to completion; returns ``(answer, samples, rounds, counts, stopped)``."""
    n, m = means.shape
    proxy = 0.25 / m if average else 0.25
    arm_scale = m if average else 1
    paper_log = logs[0]
    sums = np.zeros((n, m))
    counts = np.zeros((n, m), dtype=np.int64)
    spread = np.zeros((n, m))
    last, _ = first_round(keys, means, exponents, model, 1)
    balanced = np.zeros((n, m))
    arm_count = np.zeros(n, dtype=np.int64)
    arm_total = np.zeros(n)
    arm_spread = np.zeros(n)
    pair_mean = np.zeros((n, m))
    pair_radius = np.zeros((n, m))
    arm_mean = np.zeros(n)
    arm_radius = np.zeros(n)
    values = np.empty(m)
    for i in range(n):
        for j in range(m):
            _observe(i, j, last[i, j], sums, counts, spread)
            pair_mean[i, j] = sums[i, j] / counts[i, j]
            pair_radius[i, j] = _radius(counts[i, j], 2, 0.25, spread[i, j], mode, paper_log, logs[1], logs[2],
                                        counts[i, j])
        _advance_balanced(i, counts, last, keys, means, exponents, model, balanced, arm_count, arm_total, arm_spread,
                          values)
        arm_mean[i] = _balanced_mean(balanced, arm_count, i)
        arm_radius[i] = _radius(arm_count[i], 2, proxy, arm_spread[i], mode, paper_log, logs[3], logs[4],
                                arm_scale * arm_count[i])
    samples = n * m
    rounds = 1
    t = 2
    pulls = np.zeros((n, m), dtype=np.bool_)
    sets = new_sets(n)
    while True:
        if mode == _PAPER:  # the paper's radius grows with the round index
            for i in range(n):
                for j in range(m):
                    pair_radius[i, j] = _radius(counts[i, j], t, 0.25, spread[i, j], mode, paper_log, logs[1],
                                                logs[2], counts[i, j])
                arm_radius[i] = _radius(arm_count[i], t, proxy, arm_spread[i], mode, paper_log, logs[3], logs[4],
                                        arm_scale * arm_count[i])
        answer = plus_decide(pair_mean, pair_radius, arm_mean, arm_radius, counts, threshold, targeted, pulls, sets)
        if answer != CONTINUE:
            return answer, samples, rounds, counts, True
        n_new = pulls.sum()
        if samples + n_new > max_samples:
            return NO_ANSWER, samples, rounds, counts, False
        for i in range(n):
            touched = False
            for j in range(m):
                if pulls[i, j]:
                    last[i, j] = draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
                    _observe(i, j, last[i, j], sums, counts, spread)
                    pair_mean[i, j] = sums[i, j] / counts[i, j]
                    if mode != _PAPER:
                        pair_radius[i, j] = _radius(counts[i, j], t, 0.25, spread[i, j], mode, paper_log,
                                                    logs[1], logs[2], counts[i, j])
                    touched = True
            if touched and _advance_balanced(i, counts, last, keys, means, exponents, model, balanced, arm_count,
                                             arm_total, arm_spread, values):
                arm_mean[i] = _balanced_mean(balanced, arm_count, i)
                if mode != _PAPER:
                    arm_radius[i] = _radius(arm_count[i], t, proxy, arm_spread[i], mode, paper_log,
                                            logs[3], logs[4], arm_scale * arm_count[i])
        samples += n_new
        rounds += 1
        t += 1


def _check_plus_options(confidence: str, arm_radius: str, sampling: str) -> None:
    for name, value in (("confidence", confidence), ("arm_radius", arm_radius), ("sampling", sampling)):
        if value not in PLUS_OPTIONS[name]:
            raise ValueError(f"css-lucb-plus: {name} must be one of {list(PLUS_OPTIONS[name])}, got {value!r}")


class CSSLUCBPlus:
    """CSS-LUCB+ as a step-engine policy (the rule: module docstring and notebook 10)."""

    def __init__(self, confidence: str = PLUS_OPTIONS["confidence"][0], arm_radius: str = "average",
                 sampling: str = "targeted"):
        _check_plus_options(confidence, arm_radius, sampling)
        self.confidence = confidence
        self.mode = _CONFIDENCE_CODES[confidence]
        self.average = arm_radius == "average"
        self.targeted = sampling == "targeted"
        self.name = "css-lucb-plus"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        shape = (n_arms, n_attributes)
        self.sums = np.zeros(shape)
        self.seen = np.zeros(shape, dtype=np.int64)
        self.spread = np.zeros(shape)
        self.balanced = np.zeros(shape)
        self.arm_count = np.zeros(n_arms, dtype=np.int64)
        self.arm_total = np.zeros(n_arms)
        self.arm_spread = np.zeros(n_arms)
        self.logs: np.ndarray | None = None

    def decide(self, state: RoundState) -> Decision:
        n, m = state.counts.shape
        if self.logs is None:
            self.logs = plus_logs(n, m, state.delta, self.confidence)
        observations = state.observations
        for i in range(n):
            for j in range(m):
                while self.seen[i, j] < state.counts[i, j]:
                    _observe(i, j, observations[i][j][self.seen[i, j]], self.sums, self.seen, self.spread)
            while self.arm_count[i] < state.counts[i].min():  # complete arm-rounds
                k = self.arm_count[i]
                values = np.array([observations[i][j][k] for j in range(m)])
                _absorb_round(i, values, self.balanced, self.arm_count, self.arm_total, self.arm_spread)
        proxy = 0.25 / m if self.average else 0.25
        paper_log, pair_hoeffding, pair_bernstein, arm_hoeffding, arm_bernstein = self.logs
        pair_radius = np.array([[_radius(state.counts[i, j], state.t, 0.25, self.spread[i, j], self.mode, paper_log,
                                         pair_hoeffding, pair_bernstein, state.counts[i, j]) for j in range(m)]
                                for i in range(n)])
        arm_mean = np.array([_balanced_mean(self.balanced, self.arm_count, i) for i in range(n)])
        arm_radius = np.array([_radius(self.arm_count[i], state.t, proxy, self.arm_spread[i], self.mode, paper_log,
                                       arm_hoeffding, arm_bernstein, (m if self.average else 1) * self.arm_count[i])
                               for i in range(n)])
        pulls = np.zeros((n, m), dtype=bool)
        answer = plus_decide(state.means, pair_radius, arm_mean, arm_radius, state.counts, state.threshold,
                              self.targeted, pulls, new_sets(n))
        return Decision.sample(pulls) if answer == CONTINUE else Decision.stop(answer)


def run_css_lucb_plus(instance, deltas: np.ndarray, keys: np.ndarray, model: int, max_samples: int,
                      options: dict) -> list[tuple]:
    """The registry kernel: its radii, hence its sampling, read delta, so one level of ``deltas``, one run tuple."""
    _check_plus_options(**options)
    means, threshold, keys, exponents = kernel_inputs(instance, keys)
    return [run_result(*css_lucb_plus_kernel(
        means, threshold, keys, exponents, int(model), np.int64(max_samples),
        _CONFIDENCE_CODES[options["confidence"]], options["arm_radius"] == "average",
        options["sampling"] == "targeted", plus_logs(instance.n_arms, instance.n_attributes, one_level(deltas),
                                                     options["confidence"])))]
