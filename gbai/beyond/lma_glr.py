"""LMA-GLR: lazy mirror ascent sampling with a mixture-GLR stop (notebook 11).

Asymptotically optimal for the characteristic time ``T*`` (Garivier & Kaufmann 2016).
Sampling tracks (C-tracking) an allocation learned online by lazy mirror ascent
(Ménard 2019), an exponential-weights learner with AdaHedge step sizes (de Rooij et
al. 2014) and forced exploration; the learner is updated, and the stopping rule
checked, whenever the samples have grown by :data:`LMA_UPDATE_RATE`.

Stopping: every alternative of the empirical answer (:func:`gbai.alternative_values`)
is rejected by a Krichevsky-Trofimov mixture e-value (:mod:`.mixtures`) above
``ln(N/delta)`` (:func:`stopping_level`). (A) an attribute of the answer at or
below the threshold: the one-sided KT mixture of that pair; (B) arm ``b`` feasible
and at least as good as the answer: the product of the KT mixtures of the ``2M``
pairs of both arms over the largest likelihood under (B), i.e. the GLR minus their
KT regrets, or else the feasibility test of ``b``; (C) arm ``b`` feasible, for an
infeasible answer: the feasibility test of ``b``, the average over its attributes of
one-sided KT mixtures against ``mu_bj >= th``. Each is a nonnegative supermartingale
under its null for every reward law on [0, 1], and a wrong answer needs one of at
most ``N`` of them, fixed by the true means, to cross ``N/delta``: notebook 11
(section 2) derives it. Both engines stop by :func:`weakest_evidence` (the step engine
through :func:`glr_decide`) and sample by :func:`lma_step` and :func:`track`. The
sampling never looks at delta, so :func:`run_lma_glr` runs once for a list of deltas
and records the stop of each.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..fast.levels import first_round, kernel_inputs, level_results, new_stops, record_stops
from ..fast.rewards import draw
from ..limits.alternatives import (
    KIND_BEST_INFEASIBLE,
    KIND_OVERTAKE,
    alternative_values_kernel,
    answer_kernel,
    best_response_kernel,
    overtake_value_kernel,
)
from ..limits.divergences import divergence_scalar
from ..paper.engine import Decision, RoundState
from ..paper.model import CONTINUE, NO_ANSWER
from .mixtures import kt_regret, one_sided_above, one_sided_below

__all__ = ["LMAGLR", "LMA_UPDATE_RATE", "alternative_evidence", "glr_decide", "lma_glr_kernel", "run_lma_glr",
           "stopping_level", "weakest_evidence"]

#: LMA-GLR updates its learner and checks the stopping rule at every 1% growth of the samples.
LMA_UPDATE_RATE = 0.01


def stopping_level(n_arms: int, delta: float) -> float:
    """``ln(N/delta)``: the log e-value every alternative's test must exceed (notebook 11, section 2)."""
    return math.log(n_arms / delta)


@njit(cache=True)
def _feasibility_evidence(mu_hat, counts, threshold, b):
    """ln ``(1/M) sum_j E_bj``, ``E_bj`` the one-sided KT e-value against ``mu_bj >= th``: arm ``b`` is infeasible."""
    m = mu_hat.shape[1]
    logs = np.empty(m)
    top = -math.inf
    for j in range(m):
        n = float(counts[b, j])
        logs[j] = one_sided_below(mu_hat[b, j] * n, n, threshold)
        if logs[j] > top:
            top = logs[j]
    if not top > -math.inf:
        return top  # -inf, or NaN when a tail could not be evaluated
    total = 0.0
    for j in range(m):
        total += math.exp(logs[j] - top)
    return top + math.log(total / m)


@njit(cache=True)
def _kt_regrets(mu_hat, weights):
    """The KT regret of each arm: the sum over its attributes of :func:`.mixtures.kt_regret`."""
    n, m = mu_hat.shape
    regret = np.zeros(n)
    for i in range(n):
        for j in range(m):
            regret[i] += kt_regret(mu_hat[i, j] * weights[i, j], weights[i, j])
    return regret


@njit(cache=True)
def _answer_test(mu_hat, weights, threshold, answer, j):
    """(A)'s log e-value: the one-sided KT mixture of the answer's pair ``j`` against ``mu <= th``."""
    return one_sided_above(mu_hat[answer, j] * weights[answer, j], weights[answer, j], threshold)


@njit(cache=True)
def _overtake_evidence(mu_hat, counts, threshold, b, glr):
    """(B)'s log e-value: the larger of ``glr`` (the GLR minus the KT regrets) and the feasibility evidence of ``b``."""
    feasibility = _feasibility_evidence(mu_hat, counts, threshold, b)
    return feasibility if feasibility > glr else glr


@njit(cache=True)
def alternative_evidence(mu_hat, threshold, counts):
    """``(answer, kinds, arms, attributes, log_evalues)``: the log e-value against each alternative of the answer.

    Alternatives as :func:`gbai.alternative_values` (its order and kind codes); the
    answer is -1 for an infeasible ``mu_hat``, and CONTINUE for a tie (no alternative to test, no stop).
    (A): :func:`.mixtures.one_sided_above` of the answer's pair; (B): the larger of
    ``GLR - sum R`` over the ``2M`` pairs of the answer and ``b`` (KT regrets ``R``)
    and the feasibility evidence of ``b``; (C): the feasibility evidence of ``b``.
    Sums of rewards are ``mu_hat * counts``. NaN marks a test that could not be
    evaluated (it never rejects).
    """
    answer, tie = answer_kernel(mu_hat, threshold)
    if tie >= 0:
        empty = np.zeros(0, dtype=np.int64)
        return CONTINUE, empty, empty, empty, np.zeros(0)
    weights = counts.astype(np.float64)
    kinds, arms, attributes, values = alternative_values_kernel(mu_hat, threshold, weights, 0)
    regret = _kt_regrets(mu_hat, weights)
    evidence = np.empty(kinds.size)
    for k in range(kinds.size):
        if kinds[k] == KIND_BEST_INFEASIBLE:
            evidence[k] = _answer_test(mu_hat, weights, threshold, answer, attributes[k])
        elif kinds[k] == KIND_OVERTAKE:
            glr = values[k] - regret[answer] - regret[arms[k]]
            evidence[k] = _overtake_evidence(mu_hat, counts, threshold, arms[k], glr)
        else:
            evidence[k] = _feasibility_evidence(mu_hat, counts, threshold, arms[k])
    return answer, kinds, arms, attributes, evidence


@njit(cache=True)
def weakest_evidence(mu_hat, threshold, counts, floor, first=-1):
    """``(answer, weakest, at)``: the smallest log e-value of :func:`alternative_evidence` (-inf if one is NaN).

    Exact whenever it exceeds ``floor``; otherwise only a value at or below ``floor``,
    for the work stops at the first alternative whose e-value is there, returned as
    ``at`` (-1 when none is). Alternatives are numbered ``j`` for (A) on attribute ``j``
    and ``M + b`` for (B) with arm ``b`` (``b`` for (C) when the answer is infeasible);
    ``first`` is computed before the others, which come in :func:`alternative_evidence`'s
    order. A minimum does not depend on the order, so the kernel passes the last check's
    ``at``: while the run goes on, the alternative that held it back usually still does,
    and that check costs one test. Each e-value is computed only when reached (the GLR
    of (B) too); the feasibility test of an overtaking arm ``b`` is skipped when its GLR
    already is at least the smallest value so far, since (B)'s e-value, the larger of
    the two, cannot lower the minimum then. The answer is CONTINUE for a tie (nothing is computed).
    """
    answer, tie = answer_kernel(mu_hat, threshold)
    if tie >= 0:
        return CONTINUE, math.inf, -1
    n, m = mu_hat.shape
    weights = counts.astype(np.float64)
    regret = np.empty(0)  # the KT regrets, computed with the first (B)
    count = n if answer < 0 else m + n
    weakest = math.inf
    for step in range(-1, count):
        k = first if step < 0 else step
        if k < 0 or k >= count or (step >= 0 and k == first):
            continue
        if answer < 0:  # (C)
            value = _feasibility_evidence(mu_hat, counts, threshold, k)
        elif k < m:  # (A)
            value = _answer_test(mu_hat, weights, threshold, answer, k)
        else:  # (B)
            b = k - m
            if b == answer:
                continue
            if regret.size == 0:
                regret = _kt_regrets(mu_hat, weights)
            glr = overtake_value_kernel(mu_hat, threshold, weights, answer, b, 0) - regret[answer] - regret[b]
            if glr >= weakest:
                continue
            value = _overtake_evidence(mu_hat, counts, threshold, b, glr)
        weakest = _lowered(weakest, value)
        if not weakest > floor:
            return answer, weakest, k
    return answer, weakest, -1


@njit(cache=True)
def _lowered(weakest, value):
    """The running minimum after ``value``: -inf for a NaN (a test that could not be evaluated never rejects)."""
    return -math.inf if math.isnan(value) else min(weakest, value)


@njit(cache=True)
def glr_decide(mu_hat, threshold, counts, level):
    """The answer if every alternative's log e-value (:func:`alternative_evidence`) exceeds ``level``, else CONTINUE."""
    answer, weakest, _ = weakest_evidence(mu_hat, threshold, counts, level)
    return answer if weakest > level else CONTINUE


@njit(cache=True)
def _adahedge_weights(losses, gap, out):
    """AdaHedge's weights for cumulative ``losses`` and cumulative mixability ``gap``."""
    lowest = losses.min()
    if gap <= 0.0:  # infinite learning rate: follow the leader
        out[:] = 0.0
        for index in range(losses.size):
            if losses.flat[index] == lowest:
                out.flat[index] = 1.0
    else:
        rate = math.log(losses.size) / gap
        for index in range(losses.size):
            out.flat[index] = math.exp(-rate * (losses.flat[index] - lowest))
    out /= out.sum()


@njit(cache=True)
def lma_step(mu_hat, threshold, played, losses, gap, scale, learner):
    """One lazy mirror ascent step; returns the new gap and refreshes ``learner``.

    The gain of pair ``p`` is ``d(mu_hat_p, lambda_p)`` for the best response
    ``lambda`` to the allocation ``played`` (the gradient of the max-min objective),
    times ``scale`` (the samples drawn since the last step); AdaHedge receives the
    negative gains as losses.
    """
    _, lam, _, _, _ = best_response_kernel(mu_hat, threshold, played, 0)
    n, m = mu_hat.shape
    loss = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            if lam[i, j] != mu_hat[i, j]:
                gain = divergence_scalar(mu_hat[i, j], lam[i, j], 0)
                loss[i, j] = -scale * gain if math.isfinite(gain) else 0.0
    _adahedge_weights(losses, gap, learner)
    hedge = 0.0
    for index in range(loss.size):
        hedge += learner.flat[index] * loss.flat[index]
    lowest = loss.min()
    if gap <= 0.0:
        mix = math.inf
        for index in range(loss.size):
            if learner.flat[index] > 0.0:
                mix = min(mix, loss.flat[index])
    else:
        rate = math.log(loss.size) / gap
        total = 0.0
        for index in range(loss.size):
            total += learner.flat[index] * math.exp(-rate * (loss.flat[index] - lowest))
        mix = lowest - math.log(total) / rate
    gap += max(hedge - mix, 0.0)
    losses += loss
    _adahedge_weights(losses, gap, learner)
    return gap


@njit(cache=True)
def _lma_mix(learner, samples, played):
    """Forced exploration: ``(1 - K eps) w + eps`` with ``eps = 1/(2 sqrt(K^2 + n))``."""
    size = learner.size
    eps = 0.5 / math.sqrt(size * size + samples)
    for index in range(size):
        played.flat[index] = (1.0 - size * eps) * learner.flat[index] + eps


@njit(cache=True)
def track(cumulated, counts):
    """C-tracking: the pair whose count lags most behind the cumulated allocation."""
    best = 0
    best_lag = -math.inf
    for index in range(counts.size):
        lag = cumulated.flat[index] - counts.flat[index]
        if lag > best_lag:
            best, best_lag = index, lag
    return best


@njit(cache=True)
def lma_glr_kernel(means, threshold, keys, exponents, model, max_samples, levels, rate):
    """LMA-GLR at every level of ``levels`` in one pass: the stop records of :func:`~gbai.fast.levels.new_stops`.

    The sampling never looks at the level and the stopping rule is checked at the
    same sample counts whatever it is, so each entry is the run that level alone
    would give; the run ends at the last level to stop (or the budget).
    """
    n, m = means.shape
    stops = new_stops(levels.size, (n, m))
    sums, counts = first_round(keys, means, exponents, model, 1)
    samples = n * m
    rounds = 1
    losses = np.zeros((n, m))
    gap = 0.0
    learner = np.full((n, m), 1.0 / (n * m))
    played = learner.copy()
    cumulated = np.ones((n, m))
    last_update = samples
    next_check = samples
    held = -1  # the alternative that held the last check back, tested first at the next
    while True:
        if samples >= next_check:
            mu_hat = sums / counts
            # glr_decide's rule at every open level: the smallest e-value need be exact only above the lowest.
            lowest = math.inf
            for k in range(levels.size):
                if not stops[4][k]:
                    lowest = min(lowest, levels[k])
            answer, weakest, held = weakest_evidence(mu_hat, threshold, counts, lowest, held)
            if answer != CONTINUE and record_stops(stops, levels < weakest, answer, samples, rounds, counts, True) == 0:
                return stops
            if samples > last_update:
                gap = lma_step(mu_hat, threshold, played, losses, gap, float(samples - last_update), learner)
            _lma_mix(learner, samples, played)
            last_update = samples
            next_check = samples + max(1, int(samples * rate))
        if samples + 1 > max_samples:
            record_stops(stops, np.ones(levels.size, dtype=np.bool_), NO_ANSWER, samples, rounds, counts, False)
            return stops
        cumulated += played
        index = track(cumulated, counts)
        i, j = index // m, index % m
        sums[i, j] += draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
        counts[i, j] += 1
        samples += 1
        rounds += 1


class LMAGLR:
    """LMA-GLR as a step-engine policy: one sample per round (module docstring, notebook 11)."""

    name = "lma-glr"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        shape = (n_arms, n_attributes)
        self.losses = np.zeros(shape)
        self.gap = 0.0
        self.learner = np.full(shape, 1.0 / (n_arms * n_attributes))
        self.played = self.learner.copy()
        self.cumulated = np.ones(shape)
        self.last_update = self.next_check = n_arms * n_attributes
        self.level: float | None = None

    def decide(self, state: RoundState) -> Decision:
        n, m = state.counts.shape
        if self.level is None:
            self.level = stopping_level(n, state.delta)
        samples = state.total_samples
        if samples >= self.next_check:
            mu_hat = state.means
            answer = glr_decide(mu_hat, state.threshold, state.counts, self.level)
            if answer != CONTINUE:
                return Decision.stop(answer)
            if samples > self.last_update:
                self.gap = lma_step(mu_hat, state.threshold, self.played, self.losses, self.gap,
                                     float(samples - self.last_update), self.learner)
            _lma_mix(self.learner, samples, self.played)
            self.last_update = samples
            self.next_check = samples + max(1, int(samples * LMA_UPDATE_RATE))
        self.cumulated += self.played
        index = track(self.cumulated, state.counts)
        pulls = np.zeros((n, m), dtype=bool)
        pulls[index // m, index % m] = True
        return Decision.sample(pulls)


def run_lma_glr(instance, deltas: np.ndarray, keys: np.ndarray, model: int, max_samples: int,
                options: dict) -> list[tuple]:
    """The registry kernel: one pass serving every level of ``deltas``, one run tuple each."""
    levels = np.array([stopping_level(instance.n_arms, delta) for delta in deltas])
    return level_results(lma_glr_kernel(*kernel_inputs(instance, keys), int(model), np.int64(max_samples), levels,
                                        LMA_UPDATE_RATE))
