"""Action Elimination with attribute elimination: the paper's baseline 1 (Section VI, reading note 6).

Every round samples all attributes of every active arm. At round ``t``, with the
bounds of eqs. (3)-(4):

* an active arm with some ``U_ij < mu_TH`` (not in ``F_t``) is eliminated;
* with ``B`` the active arms that are perfectly feasible (all ``L_ij >= mu_TH``),
  if ``B`` is non-empty every active arm with ``U_i < max_{k in B} L_k`` is
  eliminated;
* the run stops with "infeasible" when no arm is active, and with the last arm
  when exactly one arm is active and it is perfectly feasible.

The memory holds one flag per arm: 1 while the arm is active.
"""

from __future__ import annotations

import numpy as np

from .base import Algorithm
from .kernels import CONTINUE, INFEASIBLE, ArmRulePolicy, arm_rule, arm_rule_runner

__all__ = ["ALGORITHM", "ActionElimination", "action_elimination_rule"]


@arm_rule
def action_elimination_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    """One round of Action Elimination; ``memory[i]`` is 1 while arm ``i`` is active."""
    n = memory.size
    best_lower = -np.inf
    any_perfect = False
    for i in range(n):
        if memory[i] and not feasible[i]:
            memory[i] = 0
        if memory[i] and perfect[i] and (not any_perfect or lower[i] > best_lower):
            best_lower = lower[i]
            any_perfect = True
    n_active = 0
    last = -1
    for i in range(n):
        if memory[i] and any_perfect and upper[i] < best_lower:
            memory[i] = 0
        chosen[i] = memory[i] != 0
        if chosen[i]:
            n_active += 1
            last = i
    if n_active == 0:
        return INFEASIBLE
    if n_active == 1 and perfect[last]:
        return last
    return CONTINUE


def _all_active(n_arms: int) -> np.ndarray:
    return np.ones(n_arms, dtype=np.int64)


class ActionElimination(ArmRulePolicy):
    """Action Elimination as a step-engine policy (the rule is in the module docstring)."""

    name = "ae"
    rule = action_elimination_rule
    memory_for = _all_active

    @property
    def active(self) -> np.ndarray:
        """The arms still active."""
        return self.memory != 0


ALGORITHM = Algorithm(
    name="ae",
    title="Action Elimination with attribute elimination",
    reference="Section VI, baseline 1 (reading note 6)",
    make_policy=ActionElimination,
    run_fast=arm_rule_runner(action_elimination_rule, _all_active),
    modules=("algorithms/action_elimination.py",),
)
