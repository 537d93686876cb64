"""Feasibility first, then best-arm identification: the paper's baseline 2 (Section VI, reading note 7).

Phase 1 samples every attribute of each arm whose feasibility is unresolved. An
arm is resolved infeasible once some ``U_ij < mu_TH`` and feasible once all
``L_ij >= mu_TH``; a resolution is final. When every arm is resolved, the run
declares "infeasible" if no arm is feasible; otherwise phase 2 starts in the same
round: Action Elimination on the feasible arms (keeping all samples and the round
counter) samples every attribute of the active arms, eliminates ``i`` when
``U_i < max_k L_k`` over the active arms, and stops at one active arm.

The memory holds the status of each arm (:data:`UNRESOLVED`, :data:`FEASIBLE`,
:data:`INFEASIBLE_ARM`, or :data:`ELIMINATED` for a feasible arm that phase 2
dropped) and, in its last entry, the phase (1 or 2).
"""

from __future__ import annotations

import numpy as np

from .base import Algorithm
from .kernels import CONTINUE, INFEASIBLE, ArmRulePolicy, arm_rule, arm_rule_runner

__all__ = ["ALGORITHM", "FeasibilityThenBAI", "feasibility_then_bai_rule"]

UNRESOLVED, FEASIBLE, INFEASIBLE_ARM, ELIMINATED = 0, 1, -1, 2


@arm_rule
def feasibility_then_bai_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    """One round of Feasibility then BAI; ``memory[:N]`` are the statuses, ``memory[N]`` the phase."""
    n = chosen.size
    if memory[n] == 1:
        n_unresolved = 0
        for i in range(n):
            if memory[i] == UNRESOLVED:
                if not feasible[i]:
                    memory[i] = INFEASIBLE_ARM
                elif perfect[i]:
                    memory[i] = FEASIBLE
            chosen[i] = memory[i] == UNRESOLVED
            if chosen[i]:
                n_unresolved += 1
        if n_unresolved > 0:
            return CONTINUE
        memory[n] = 2
        n_feasible = 0
        for i in range(n):
            if memory[i] == FEASIBLE:
                n_feasible += 1
        if n_feasible == 0:
            return INFEASIBLE
    best_lower = -np.inf
    for i in range(n):
        if memory[i] == FEASIBLE and lower[i] > best_lower:
            best_lower = lower[i]
    n_active = 0
    last = -1
    for i in range(n):
        if memory[i] == FEASIBLE and upper[i] < best_lower:
            memory[i] = ELIMINATED
        chosen[i] = memory[i] == FEASIBLE
        if chosen[i]:
            n_active += 1
            last = i
    if n_active == 1:
        return last
    return CONTINUE


def _phase_one(n_arms: int) -> np.ndarray:
    memory = np.zeros(n_arms + 1, dtype=np.int64)
    memory[n_arms] = 1
    return memory


class FeasibilityThenBAI(ArmRulePolicy):
    """Feasibility then BAI as a step-engine policy (the rule is in the module docstring)."""

    name = "feasibility-then-bai"
    rule = feasibility_then_bai_rule
    memory_for = _phase_one


ALGORITHM = Algorithm(
    name="feasibility-then-bai",
    title="Feasibility then BAI",
    reference="Section VI, baseline 2 (reading note 7)",
    make_policy=FeasibilityThenBAI,
    run_fast=arm_rule_runner(feasibility_then_bai_rule, _phase_one),
    modules=("algorithms/feasibility_then_bai.py",),
)
