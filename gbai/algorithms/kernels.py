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
import math

from ..rewards import draw, reward_exponents

__all__ = [
    "ARM_RULE",
    "CONTINUE",
    "INFEASIBLE",
    "NO_ANSWER",
    "AS_RUN_CONTINUE",
    "RADIUS_AE_AUTHORS",
    "RADIUS_FTB_AUTHORS",
    "RADIUS_SHARED",
    "RADIUS_TEXT",
    "RESTART",
    "ArmRulePolicy",
    "as_run_radius",
    "draw_pulls",
    "with_as_run",
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


# ====================================================================== as run
# The authors' research code, which drew the published figures, differs from the
# paper's text in settings and rules listed in AUTHORS-CODE.md (issue 9). Each
# difference is an option of the algorithm it belongs to, with the text's reading
# as its default; the pieces below are what the three as-run rules share.
#: Codes an as-run decision function returns besides an arm, INFEASIBLE and CRASHED.
AS_RUN_CONTINUE = -10
RESTART = -11

#: Radius formulas (``t`` is the round index for the text, else samples so far + 1):
#: the paper's ``sqrt(ln(4NMt^4/delta)/(2T))``;
RADIUS_TEXT = 0
#: the authors' CSS-LUCB radius ``sqrt(ln(N(M+1)t^3/(2 delta))/(2T))``, ``t`` = samples + 1,
#: also the radius every algorithm shares in the counterfactual ("shared");
RADIUS_SHARED = 1
#: the authors' Action Elimination radius ``sqrt(2 ln(2N(pi^2/6)T^2/delta)/T)``;
RADIUS_AE_AUTHORS = 2
#: the authors' phase-1 radius of Feasibility then BAI ``sqrt(ln(N(M+1)t^3/(2 delta))/(4T))``.
RADIUS_FTB_AUTHORS = 3


@njit(cache=True)
def as_run_radius(mode, count, n_arms, n_attributes, delta, t_round, samples):
    """The radius for ``count`` samples under formula ``mode`` (see the ``RADIUS_*`` codes).

    ``t_round`` is the round index (text radius), ``samples`` the number of samples
    the algorithm has counted so far (the authors' ``t`` is ``samples + 1``). Logs of
    products are evaluated as sums of logs, as :mod:`gbai.confidence` does.
    """
    if mode == RADIUS_TEXT:
        return radius(log_term_from(log_constant(n_arms * n_attributes, delta), t_round), count)
    if mode == RADIUS_AE_AUTHORS:
        value = math.log(2.0 * n_arms * (math.pi * math.pi / 6.0) / delta) + 2.0 * math.log(count)
        return math.sqrt(2.0 * value / count)
    value = math.log(n_arms * (n_attributes + 1) / (2.0 * delta)) + 3.0 * math.log(samples + 1.0)
    if mode == RADIUS_FTB_AUTHORS:
        return math.sqrt(value / (4.0 * count))
    return math.sqrt(value / (2.0 * count))


def check_initial_samples(name: str, per_pair: int, n_pairs: int, max_samples: int) -> None:
    """A ValueError when an as-run initialisation (``per_pair`` samples of each pair) exceeds the budget."""
    if per_pair * n_pairs > max_samples:
        raise ValueError(f"{name}: {per_pair} initial samples per pair exceed max_samples={max_samples}")


@njit(cache=True)
def draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts):
    """Draw ``pulls[i, j]`` rewards of every pair, continuing each pair's stream.

    ``drawn`` counts the rewards drawn so far (the stream index); ``sums``/``counts``
    are the statistics the algorithm currently uses (they differ from ``drawn`` after
    a restart). Returns the number of rewards drawn.
    """
    total = 0
    n_arms, n_attributes = pulls.shape
    for i in range(n_arms):
        for j in range(n_attributes):
            for _ in range(pulls[i, j]):
                sums[i, j] += draw(keys[i, j], drawn[i, j], means[i, j], exponents[i, j], model)
                drawn[i, j] += 1
                counts[i, j] += 1
                total += 1
    return total


@njit(cache=True)
def as_run_pair_means(sums, counts):
    """``sums / counts`` pair by pair (the float division of the step engine)."""
    return sums / counts.astype(np.float64)


@njit(cache=True)
def as_run_arm_mean(means, i):
    """The plain average of arm ``i``'s attribute means, summed left to right."""
    total = means[i, 0]
    for j in range(1, means.shape[1]):
        total += means[i, j]
    return total / means.shape[1]


def with_as_run(text_policy, text_runner, as_run_policy, as_run_runner, choices: dict):
    """``(make_policy, run_fast)`` that run the text's algorithm when every option in
    ``choices`` is at its default (so its runs stay bit for bit what they were), and
    the as-run rule with those options otherwise."""

    def is_text(options: dict) -> bool:
        return all(options.get(key, values[0]) == values[0] for key, values in choices.items())

    def make_policy(**options):
        return text_policy() if is_text(options) else as_run_policy(**options)

    def run_fast(instance, delta, keys, model, max_samples, options):
        if is_text(options):
            return text_runner(instance, delta, keys, model, max_samples, options)
        return as_run_runner(instance, delta, keys, model, max_samples, options)

    return make_policy, run_fast
