"""What the compiled algorithms share: answer codes, pulling arms, the first round and the run loop.

The paper's three algorithms sample *every* attribute of the arms they choose, so
all pairs of an arm share one count ``T_i`` and one radius, and one round is
described by five numbers per arm: the empirical mean, the bounds ``L_i``, ``U_i``
(eq. (4)) and whether the arm is in ``F_t`` (all ``U_ij >= mu_TH``) or in ``F_Pt``
(all ``L_ij >= mu_TH``). Each of these algorithms is therefore one compiled
*arm rule* (:data:`ARM_RULE`) that reads those numbers and either returns an answer
or marks the arms to sample; it keeps what it must remember between rounds in an
integer ``memory`` array.

Both engines drive the same rule. :func:`run_arm_rounds` is the fast engine's
loop: it refreshes the per-arm numbers only for the arms just sampled, and tests
``U_ij >= mu_TH`` for a whole arm as ``min_j mu_hat_ij + alpha_i >= mu_TH``: since
floating-point rounding is monotone, that gives bit-identical answers to the
pairwise test. :class:`ArmRulePolicy` is the step-engine side: it reads the same
numbers from :class:`gbai.engine.RoundState`. Rewards come from the compiled
:func:`gbai.rewards.draw` in both, so the two engines return the same runs
(``tests/test_engines.py``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numba import njit, types

from ..confidence import log_constant, log_term_from, radius
from ..engine import Decision, RoundState
from ..rewards import draw, reward_exponents

__all__ = [
    "ARM_RULE",
    "CONTINUE",
    "INFEASIBLE",
    "NO_ANSWER",
    "ArmRulePolicy",
    "arm_rule",
    "arm_rule_runner",
    "first_round",
    "pull_arm",
    "run_arm_rounds",
    "run_result",
]

#: A rule's return value meaning "no answer yet: sample what it marked".
CONTINUE = -3
#: The run hit its sample budget (:data:`gbai.model.NO_ANSWER`).
NO_ANSWER = -2
#: The answer "no arm is feasible" (:data:`gbai.model.INFEASIBLE`).
INFEASIBLE = -1

_F8 = types.float64[::1]
_B1 = types.boolean[::1]
_I8 = types.int64[::1]
#: The signature of an arm rule:
#: ``rule(arm_mean, lower, upper, feasible, perfect, memory, chosen) -> answer or CONTINUE``.
#: The rule fills the boolean ``chosen`` with the arms to sample (every attribute).
ARM_RULE = types.FunctionType(types.int64(_F8, _F8, _F8, _B1, _B1, _I8, _B1))

#: Compiles an arm rule with its fixed signature, so that :func:`run_arm_rounds` can
#: take it as an argument and still be cached on disk.
arm_rule = njit(ARM_RULE.signature, cache=True)


@njit(cache=True)
def pull_arm(i, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean):
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
def first_round(keys, means, exponents, model):
    """The initial round: every pair sampled once. Returns the statistics the loop keeps."""
    n_arms, n_attributes = means.shape
    sums = np.zeros((n_arms, n_attributes))
    counts = np.zeros((n_arms, n_attributes), dtype=np.int64)
    pair_means = np.zeros((n_arms, n_attributes))
    arm_mean = np.zeros(n_arms)
    min_mean = np.zeros(n_arms)
    for i in range(n_arms):
        pull_arm(i, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
    return sums, counts, pair_means, arm_mean, min_mean


_C2F8 = types.float64[:, ::1]


@njit(types.Tuple((types.int64, types.int64, types.int64, types.int64[:, ::1], types.boolean))(
    ARM_RULE, _I8, _C2F8, types.float64, types.float64, types.uint64[:, ::1], _C2F8, types.int64, types.int64),
    cache=True)
def run_arm_rounds(rule, memory, means, threshold, delta, keys, exponents, model, max_samples):
    """Run an arm rule to completion; returns ``(answer, samples, rounds, counts, stopped)``.

    Round ``t`` (from 2, after the initial round) computes the radius
    ``alpha(t, T_i)`` of eq. (3) for every arm, asks the rule, and samples every
    attribute of the chosen arms, unless that would exceed ``max_samples``.
    """
    n_arms, n_attributes = means.shape
    sums, counts, pair_means, arm_mean, min_mean = first_round(keys, means, exponents, model)
    samples = n_arms * n_attributes
    rounds = 1
    constant = log_constant(n_arms * n_attributes, delta)
    lower = np.empty(n_arms)
    upper = np.empty(n_arms)
    feasible = np.zeros(n_arms, dtype=np.bool_)
    perfect = np.zeros(n_arms, dtype=np.bool_)
    chosen = np.zeros(n_arms, dtype=np.bool_)
    while True:
        log_value = log_term_from(constant, rounds + 1)
        for i in range(n_arms):
            a = radius(log_value, counts[i, 0])
            lower[i] = arm_mean[i] - a
            upper[i] = arm_mean[i] + a
            feasible[i] = min_mean[i] + a >= threshold
            perfect[i] = min_mean[i] - a >= threshold
        answer = rule(arm_mean, lower, upper, feasible, perfect, memory, chosen)
        if answer != CONTINUE:
            return answer, samples, rounds, counts, True
        n_new = 0
        for i in range(n_arms):
            if chosen[i]:
                n_new += n_attributes
        if samples + n_new > max_samples:
            return NO_ANSWER, samples, rounds, counts, False
        # Arm by arm here: a helper taking all these arrays costs as much as a round of CSS-LUCB.
        for i in range(n_arms):
            if chosen[i]:
                pull_arm(i, keys, means, exponents, model, sums, counts, pair_means, arm_mean, min_mean)
        samples += n_new
        rounds += 1


#: ``memory_for(n_arms)`` gives a rule's memory at the start of a run.
MemoryFactory = Callable[[int], np.ndarray]


def run_result(answer, samples, rounds, counts, stopped) -> tuple:
    """A kernel's ``(answer, samples, rounds, counts, stopped)`` as Python numbers."""
    return int(answer), int(samples), int(rounds), counts, bool(stopped)


def arm_rule_runner(rule, memory_for: MemoryFactory) -> Callable[..., tuple]:
    """The fast engine's ``run_fast`` for an arm rule (see :class:`gbai.algorithms.Algorithm`)."""

    def run_fast(instance, delta, keys, model, max_samples, options):
        means = np.array(instance.means, dtype=np.float64, order="C")
        return run_result(*run_arm_rounds(
            rule, memory_for(instance.n_arms), means, float(instance.threshold), float(delta),
            np.ascontiguousarray(keys, dtype=np.uint64), np.ascontiguousarray(reward_exponents(means)),
            int(model), int(max_samples),
        ))

    return run_fast


class ArmRulePolicy:
    """A step-engine policy that drives an arm rule with the engine's bounds and sets.

    Subclasses set ``name``, ``rule`` and ``memory_for``; :meth:`pulls` turns the
    chosen arms into pairs (every attribute by default).
    """

    name: str
    rule: Callable
    memory_for: MemoryFactory
    memory: np.ndarray | None = None

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.memory = type(self).memory_for(n_arms)

    def pulls(self, state: RoundState, chosen: np.ndarray) -> np.ndarray:
        return np.repeat(chosen[:, None], state.n_attributes, axis=1)

    def decide(self, state: RoundState) -> Decision:
        if self.memory is None:  # asked without a reset, e.g. for CSS-LUCB's stopping rule in notebook 3
            self.reset(state.n_arms, state.n_attributes)
        chosen = np.zeros(state.n_arms, dtype=bool)
        answer = type(self).rule(
            np.ascontiguousarray(state.arm_means, dtype=np.float64),
            np.ascontiguousarray(state.arm_lower, dtype=np.float64),
            np.ascontiguousarray(state.arm_upper, dtype=np.float64),
            np.ascontiguousarray(state.sets.feasible_set, dtype=bool),
            np.ascontiguousarray(state.sets.perfectly_feasible_set, dtype=bool),
            self.memory,
            chosen,
        )
        if answer != CONTINUE:
            return Decision.stop(answer)
        return Decision.sample(self.pulls(state, chosen))
