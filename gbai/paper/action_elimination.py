"""Action Elimination with attribute elimination: the paper's first baseline (Section VI, reading note 6).

Every round samples all attributes of every active arm. An arm leaves when one of
its attributes has ``U_ij < mu_TH``, or when its ``U_i`` falls below the largest
``L_k`` of the active, perfectly feasible arms. The run stops with "infeasible"
when no arm is active, and with the last arm when it alone is active and
perfectly feasible.
"""

from __future__ import annotations

import numpy as np

from .engine import Decision, RoundState
from .model import INFEASIBLE

__all__ = ["ActionElimination"]


class ActionElimination:
    """Action Elimination as a step-engine policy; ``active`` holds the arms still in play."""

    name = "ae"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.active = np.ones(n_arms, dtype=bool)

    def decide(self, state: RoundState) -> Decision:
        sets, bounds = state.sets, state.bounds
        self.active &= sets.feasible_set  # attribute elimination: some U_ij < mu_TH
        certified = self.active & sets.perfectly_feasible_set
        if certified.any():  # mean elimination against the best certified lower bound
            self.active &= ~(bounds.arm_upper < bounds.arm_lower[certified].max())
        if not self.active.any():
            return Decision.stop(INFEASIBLE)
        if self.active.sum() == 1 and (self.active & sets.perfectly_feasible_set).any():
            return Decision.stop(int(np.flatnonzero(self.active)[0]))
        return Decision.sample(np.repeat(self.active[:, None], state.n_attributes, axis=1))
