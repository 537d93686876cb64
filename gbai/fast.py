"""The fast engine: the paper's three algorithms compiled with numba.

The kernels apply exactly the rules of :mod:`gbai.policies` and draw rewards through
the same compiled :func:`gbai.rewards.draw`, so on the same seed they return the
same answer, sample counts and rounds as the step engine (``tests/test_engines.py``
checks this). They are faster because they exploit what the three algorithms have
in common: each round samples *every* attribute of the chosen arms, so all pairs of
an arm share one count ``T_i`` and one radius. An arm's pairs then all satisfy
``U_ij >= mu_TH`` exactly when ``min_j mu_hat_ij + alpha_i >= mu_TH``; since
floating-point rounding is monotone, this test gives bit-identical answers to the
pairwise one. Empirical means are refreshed only for the arms sampled in a round.

Each kernel returns ``(answer, samples, rounds, counts, stopped)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .confidence import log_constant, log_term_from, radius
from .rewards import draw

__all__ = ["KERNELS", "run_kernel"]

_NO_ANSWER = -2
_INFEASIBLE = -1


@njit(cache=True)
def _pull_arm(i, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean):
    """Sample every attribute of arm ``i`` once and refresh its empirical statistics."""
    n_attributes = means.shape[1]
    total = 0.0
    lowest = np.inf
    for j in range(n_attributes):
        sums[i, j] += draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
        counts[i, j] += 1
        value = sums[i, j] / counts[i, j]
        pair_means[i, j] = value
        total += value
        if value < lowest:
            lowest = value
    arm_mean[i] = total / n_attributes
    min_mean[i] = lowest


@njit(cache=True)
def _pull_arms(chosen, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean):
    """Sample every attribute of each arm in the boolean mask ``chosen`` once."""
    for i in range(chosen.size):
        if chosen[i]:
            _pull_arm(i, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)


@njit(cache=True)
def _initial_round(keys, means, exponents, model):
    n_arms, n_attributes = means.shape
    sums = np.zeros((n_arms, n_attributes))
    counts = np.zeros((n_arms, n_attributes), dtype=np.int64)
    pair_means = np.zeros((n_arms, n_attributes))
    arm_mean = np.zeros(n_arms)
    min_mean = np.zeros(n_arms)
    for i in range(n_arms):
        _pull_arm(i, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
    return sums, counts, pair_means, arm_mean, min_mean


@njit(cache=True)
def css_lucb_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    """CSS-LUCB (Algorithm 1; reading notes 3-5). See :class:`gbai.policies.CSSLUCB`."""
    n_arms, n_attributes = means.shape
    n_pairs = n_arms * n_attributes
    sums, counts, pair_means, arm_mean, min_mean = _initial_round(keys, means, exponents, model)
    samples = n_pairs
    rounds = 1
    t = 2
    constant = log_constant(n_pairs, delta)
    lower = np.empty(n_arms)
    upper = np.empty(n_arms)
    feasible = np.zeros(n_arms, dtype=np.bool_)
    while True:
        log_value = log_term_from(constant, t)
        best_perfect = -1
        best_feasible = -1
        n_feasible = 0
        for i in range(n_arms):
            a = radius(log_value, counts[i, 0])
            lower[i] = arm_mean[i] - a
            upper[i] = arm_mean[i] + a
            feasible[i] = min_mean[i] + a >= threshold
            if feasible[i]:
                n_feasible += 1
                if best_feasible < 0 or arm_mean[i] > arm_mean[best_feasible]:
                    best_feasible = i
                if min_mean[i] - a >= threshold:
                    if best_perfect < 0 or arm_mean[i] > arm_mean[best_perfect]:
                        best_perfect = i
        # Stop when F_t and P_t are disjoint.
        overlap = False
        if best_perfect < 0:
            overlap = n_feasible > 0
        else:
            for i in range(n_arms):
                if feasible[i] and i != best_perfect and upper[i] >= lower[best_perfect]:
                    overlap = True
                    break
        if not overlap:
            answer = best_feasible if n_feasible > 0 else _INFEASIBLE
            return answer, samples, rounds, counts, True
        competitor = -1
        if n_feasible > 1:
            for i in range(n_arms):
                if feasible[i] and i != best_feasible:
                    if competitor < 0 or upper[i] > upper[competitor]:
                        competitor = i
        n_new = n_attributes if competitor < 0 else 2 * n_attributes
        if samples + n_new > max_samples:
            return _NO_ANSWER, samples, rounds, counts, False
        _pull_arm(best_feasible, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
        if competitor >= 0:
            _pull_arm(competitor, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
        samples += n_new
        rounds += 1
        t += 1


@njit(cache=True)
def action_elimination_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    """Action Elimination with attribute elimination (reading note 6)."""
    n_arms, n_attributes = means.shape
    n_pairs = n_arms * n_attributes
    sums, counts, pair_means, arm_mean, min_mean = _initial_round(keys, means, exponents, model)
    samples = n_pairs
    rounds = 1
    t = 2
    constant = log_constant(n_pairs, delta)
    active = np.ones(n_arms, dtype=np.bool_)
    perfect = np.zeros(n_arms, dtype=np.bool_)
    lower = np.empty(n_arms)
    upper = np.empty(n_arms)
    while True:
        log_value = log_term_from(constant, t)
        best_lower = -np.inf
        any_perfect = False
        for i in range(n_arms):
            perfect[i] = False
            if not active[i]:
                continue
            a = radius(log_value, counts[i, 0])
            lower[i] = arm_mean[i] - a
            upper[i] = arm_mean[i] + a
            if min_mean[i] + a < threshold:
                active[i] = False
                continue
            if min_mean[i] - a >= threshold:
                perfect[i] = True
                if not any_perfect or lower[i] > best_lower:
                    best_lower = lower[i]
                any_perfect = True
        n_active = 0
        last = -1
        for i in range(n_arms):
            if active[i] and any_perfect and upper[i] < best_lower:
                active[i] = False
            if active[i]:
                n_active += 1
                last = i
        if n_active == 0:
            return _INFEASIBLE, samples, rounds, counts, True
        if n_active == 1 and perfect[last]:
            return last, samples, rounds, counts, True
        n_new = n_active * n_attributes
        if samples + n_new > max_samples:
            return _NO_ANSWER, samples, rounds, counts, False
        _pull_arms(active, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
        samples += n_new
        rounds += 1
        t += 1


@njit(cache=True)
def feasibility_then_bai_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    """Feasibility then BAI (reading note 7)."""
    n_arms, n_attributes = means.shape
    n_pairs = n_arms * n_attributes
    sums, counts, pair_means, arm_mean, min_mean = _initial_round(keys, means, exponents, model)
    samples = n_pairs
    rounds = 1
    t = 2
    constant = log_constant(n_pairs, delta)
    status = np.zeros(n_arms, dtype=np.int8)  # 0 unresolved, 1 feasible, -1 infeasible
    active = np.zeros(n_arms, dtype=np.bool_)
    in_phase_two = False
    lower = np.empty(n_arms)
    upper = np.empty(n_arms)
    while True:
        log_value = log_term_from(constant, t)
        if not in_phase_two:
            n_unresolved = 0
            for i in range(n_arms):
                if status[i] != 0:
                    continue
                a = radius(log_value, counts[i, 0])
                if min_mean[i] + a < threshold:
                    status[i] = -1
                elif min_mean[i] - a >= threshold:
                    status[i] = 1
                else:
                    n_unresolved += 1
            if n_unresolved > 0:
                n_new = n_unresolved * n_attributes
                if samples + n_new > max_samples:
                    return _NO_ANSWER, samples, rounds, counts, False
                _pull_arms(status == 0, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
                samples += n_new
                rounds += 1
                t += 1
                continue
            in_phase_two = True
            n_feasible = 0
            for i in range(n_arms):
                active[i] = status[i] == 1
                if active[i]:
                    n_feasible += 1
            if n_feasible == 0:
                return _INFEASIBLE, samples, rounds, counts, True
        best_lower = -np.inf
        for i in range(n_arms):
            if active[i]:
                a = radius(log_value, counts[i, 0])
                lower[i] = arm_mean[i] - a
                upper[i] = arm_mean[i] + a
                if lower[i] > best_lower:
                    best_lower = lower[i]
        n_active = 0
        last = -1
        for i in range(n_arms):
            if active[i] and upper[i] < best_lower:
                active[i] = False
            if active[i]:
                n_active += 1
                last = i
        if n_active == 1:
            return last, samples, rounds, counts, True
        n_new = n_active * n_attributes
        if samples + n_new > max_samples:
            return _NO_ANSWER, samples, rounds, counts, False
        _pull_arms(active, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
        samples += n_new
        rounds += 1
        t += 1


#: Compiled kernels by algorithm name.
KERNELS = {
    "css-lucb": css_lucb_kernel,
    "ae": action_elimination_kernel,
    "feasibility-then-bai": feasibility_then_bai_kernel,
}


def run_kernel(name, means, threshold, delta, keys, exponents, model, max_samples):
    """Run the compiled kernel ``name``; returns ``(answer, samples, rounds, counts, stopped)``."""
    answer, samples, rounds, counts, stopped = KERNELS[name](
        means, float(threshold), float(delta), keys, exponents, int(model), np.int64(max_samples)
    )
    return int(answer), int(samples), int(rounds), counts, bool(stopped)
