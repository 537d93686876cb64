"""The paper's three algorithms compiled: an optimisation of :mod:`gbai.paper`, tested run for run against it.

Each algorithm samples every attribute of the arms it picks, so all pairs of an arm
share one count ``T_i`` and one radius: an arm is in ``F_t`` exactly when
``min_j mu_hat_ij + alpha_i >= mu_TH`` and in ``F_Pt`` when ``min_j mu_hat_ij -
alpha_i >= mu_TH``. Rounding is monotone, so these tests give bit-identical answers
to the pairwise ones of :mod:`gbai.paper.bounds`, and only the sampled arms' means
are refreshed. Each kernel is one straight loop returning ``(answer, samples,
rounds, counts, stopped)``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..paper.model import CONTINUE, INFEASIBLE, NO_ANSWER
from .levels import kernel_inputs, one_level, run_result
from .rewards import draw

__all__ = ["action_elimination_kernel", "css_lucb_decision", "css_lucb_kernel",
           "feasibility_then_bai_kernel", "paper_log_constant", "paper_radius", "run_kernel"]


@njit(cache=True)
def paper_log_constant(n_pairs, delta):
    """``ln(4 N M / delta)``: the part of the paper's log term that does not grow with ``t``."""
    return math.log(4.0 * n_pairs / delta)


@njit(cache=True)
def paper_radius(constant, t, count):
    """``alpha(t, T) = sqrt((ln(4NM/delta) + 4 ln t) / (2T))`` (:func:`gbai.paper.bounds.confidence_radius`)."""
    return math.sqrt((constant + 4.0 * math.log(t)) / (2.0 * count))


# inline="always" (numba's own inlining) and one loop that draws and refreshes the means: a call per arm
# with its array arguments, or a second pass over the arm's pairs, costs up to half the time of a sample.
@njit(cache=True, inline="always")
def _pull_arm(i, keys, means, exponents, model, sums, counts, arm_mean, min_mean):
    """Sample every attribute of arm ``i`` once and refresh its arm mean and smallest pair mean."""
    m = means.shape[1]
    total = 0.0
    lowest = np.inf
    for j in range(m):
        sums[i, j] += draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
        counts[i, j] += 1
        value = sums[i, j] / counts[i, j]
        total += value
        lowest = min(lowest, value)
    arm_mean[i] = total / m
    min_mean[i] = lowest


@njit(cache=True)
def _paper_first_round(keys, means, exponents, model):
    """The first round: every arm pulled once from empty sums, with its mean and smallest pair mean."""
    n, m = means.shape
    sums = np.zeros((n, m))
    counts = np.zeros((n, m), dtype=np.int64)
    arm_mean = np.zeros(n)
    min_mean = np.zeros(n)
    for i in range(n):
        _pull_arm(i, keys, means, exponents, model, sums, counts, arm_mean, min_mean)
    return sums, counts, arm_mean, min_mean


@njit(cache=True, inline="always")  # called every round: see _pull_arm
def css_lucb_decision(arm_mean, lower, upper, feasible, perfect):
    """Algorithm 1's stopping rule and arms from per-arm means, bounds and memberships of ``F_t``, ``F_Pt``.

    Returns ``(answer, i_t, c_t)``: the output when ``F_t`` and ``P_t`` are disjoint
    (an arm, or INFEASIBLE), :data:`CONTINUE` otherwise; ``c_t`` is -1 when ``F_t``
    holds no other arm. CSS-LUCB+ calls it with its own bounds.
    """
    n = arm_mean.size
    best_perfect = best_feasible = -1
    n_feasible = 0
    for i in range(n):
        if feasible[i]:
            n_feasible += 1
            if best_feasible < 0 or arm_mean[i] > arm_mean[best_feasible]:
                best_feasible = i
            if perfect[i] and (best_perfect < 0 or arm_mean[i] > arm_mean[best_perfect]):
                best_perfect = i
    overlap = n_feasible > 0 if best_perfect < 0 else False  # F_t and P_t share an arm
    for i in range(n):
        if best_perfect >= 0 and feasible[i] and i != best_perfect and upper[i] >= lower[best_perfect]:
            overlap = True
            break
    if not overlap:
        return (best_feasible if n_feasible > 0 else INFEASIBLE), best_feasible, -1
    competitor = -1
    for i in range(n):
        if feasible[i] and i != best_feasible and (competitor < 0 or upper[i] > upper[competitor]):
            competitor = i
    return CONTINUE, best_feasible, competitor


@njit(cache=True)
def css_lucb_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    """CSS-LUCB (:mod:`gbai.paper.css_lucb`)."""
    n, m = means.shape
    sums, counts, arm_mean, min_mean = _paper_first_round(keys, means, exponents, model)
    samples, rounds, t = n * m, 1, 2
    constant = paper_log_constant(n * m, delta)
    lower = np.empty(n)
    upper = np.empty(n)
    feasible = np.zeros(n, dtype=np.bool_)
    perfect = np.zeros(n, dtype=np.bool_)
    while True:
        for i in range(n):
            a = paper_radius(constant, t, counts[i, 0])
            lower[i] = arm_mean[i] - a
            upper[i] = arm_mean[i] + a
            feasible[i] = min_mean[i] + a >= threshold
            perfect[i] = min_mean[i] - a >= threshold
        answer, leader, competitor = css_lucb_decision(arm_mean, lower, upper, feasible, perfect)
        if answer != CONTINUE:
            return answer, samples, rounds, counts, True
        n_new = m if competitor < 0 else 2 * m
        if samples + n_new > max_samples:
            return NO_ANSWER, samples, rounds, counts, False
        _pull_arm(leader, keys, means, exponents, model, sums, counts, arm_mean, min_mean)
        if competitor >= 0:
            _pull_arm(competitor, keys, means, exponents, model, sums, counts, arm_mean, min_mean)
        samples += n_new
        rounds += 1
        t += 1


@njit(cache=True)
def action_elimination_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    """Action Elimination (:mod:`gbai.paper.action_elimination`)."""
    n, m = means.shape
    sums, counts, arm_mean, min_mean = _paper_first_round(keys, means, exponents, model)
    samples, rounds, t = n * m, 1, 2
    constant = paper_log_constant(n * m, delta)
    active = np.ones(n, dtype=np.bool_)
    perfect = np.zeros(n, dtype=np.bool_)
    upper = np.empty(n)
    while True:
        best_lower = -np.inf
        any_perfect = False
        for i in range(n):
            perfect[i] = False
            if not active[i]:
                continue
            a = paper_radius(constant, t, counts[i, 0])
            upper[i] = arm_mean[i] + a
            if min_mean[i] + a < threshold:
                active[i] = False
            elif min_mean[i] - a >= threshold:
                perfect[i] = True
                best_lower = max(best_lower, arm_mean[i] - a) if any_perfect else arm_mean[i] - a
                any_perfect = True
        n_active, last = 0, -1
        for i in range(n):
            if active[i] and any_perfect and upper[i] < best_lower:
                active[i] = False
            if active[i]:
                n_active += 1
                last = i
        if n_active == 0:
            return INFEASIBLE, samples, rounds, counts, True
        if n_active == 1 and perfect[last]:
            return last, samples, rounds, counts, True
        if samples + n_active * m > max_samples:
            return NO_ANSWER, samples, rounds, counts, False
        for i in range(n):
            if active[i]:
                _pull_arm(i, keys, means, exponents, model, sums, counts, arm_mean, min_mean)
        samples += n_active * m
        rounds += 1
        t += 1


@njit(cache=True)
def feasibility_then_bai_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    """Feasibility then BAI (:mod:`gbai.paper.feasibility_then_bai`)."""
    n, m = means.shape
    sums, counts, arm_mean, min_mean = _paper_first_round(keys, means, exponents, model)
    samples, rounds, t = n * m, 1, 2
    constant = paper_log_constant(n * m, delta)
    open_ = np.ones(n, dtype=np.bool_)  # feasibility unsettled (phase 1)
    active = np.zeros(n, dtype=np.bool_)  # feasible and not eliminated (phase 2)
    upper = np.empty(n)
    n_open = n
    chosen = open_
    while True:
        if n_open > 0:
            n_open = 0
            for i in range(n):
                if open_[i]:
                    a = paper_radius(constant, t, counts[i, 0])
                    if min_mean[i] + a < threshold:
                        open_[i] = False
                    elif min_mean[i] - a >= threshold:
                        open_[i] = False
                        active[i] = True
                    else:
                        n_open += 1
            chosen = open_
            if n_open == 0:
                if not active.any():
                    return INFEASIBLE, samples, rounds, counts, True
        if n_open == 0:
            best_lower = -np.inf
            for i in range(n):
                if active[i]:
                    a = paper_radius(constant, t, counts[i, 0])
                    upper[i] = arm_mean[i] + a
                    best_lower = max(best_lower, arm_mean[i] - a)
            n_active, last = 0, -1
            for i in range(n):
                if active[i] and upper[i] < best_lower:
                    active[i] = False
                if active[i]:
                    n_active += 1
                    last = i
            if n_active == 1:
                return last, samples, rounds, counts, True
            chosen = active
        n_new = 0
        for i in range(n):
            if chosen[i]:
                n_new += m
        if samples + n_new > max_samples:
            return NO_ANSWER, samples, rounds, counts, False
        for i in range(n):
            if chosen[i]:
                _pull_arm(i, keys, means, exponents, model, sums, counts, arm_mean, min_mean)
        samples += n_new
        rounds += 1
        t += 1


_KERNELS = {"css-lucb": css_lucb_kernel, "ae": action_elimination_kernel,
            "feasibility-then-bai": feasibility_then_bai_kernel}


def run_kernel(name: str, instance, deltas: np.ndarray, keys: np.ndarray, model: int, max_samples: int,
               options: dict | None = None) -> list[tuple]:
    """Run the compiled paper algorithm ``name`` at the one level of ``deltas``: a list of one run tuple.

    Its confidence radii, hence its sampling, read delta (:func:`~gbai.fast.levels.one_level`).
    ``options`` is the registry's uniform kernel argument: the text's reading has none.
    """
    means, threshold, keys, exponents = kernel_inputs(instance, keys)
    return [run_result(*_KERNELS[name](means, threshold, one_level(deltas), keys, exponents, int(model),
                                       int(max_samples)))]
