"""Feasibility first, then best-arm identification: the paper's second baseline (Section VI, reading note 7).

Phase 1 samples every attribute of each arm whose feasibility is open; an arm is
settled infeasible at some ``U_ij < mu_TH`` and feasible at all ``L_ij >= mu_TH``.
Once every arm is settled the run declares "infeasible" if none is feasible;
otherwise phase 2 starts in the same round, keeping samples and round counter:
Action Elimination on the feasible arms (drop ``i`` when ``U_i < max_k L_k`` over
the active arms, sample every attribute of the active arms) until one is left.
"""

from __future__ import annotations

import numpy as np

from .engine import Decision, RoundState
from .model import INFEASIBLE

__all__ = ["FeasibilityThenBAI"]


class FeasibilityThenBAI:
    """Feasibility then BAI as a step-engine policy.

    ``open``: arms whose feasibility is unsettled; ``active``: the arms found
    feasible and not yet eliminated.
    """

    name = "feasibility-then-bai"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.open = np.ones(n_arms, dtype=bool)
        self.active = np.zeros(n_arms, dtype=bool)

    def decide(self, state: RoundState) -> Decision:
        sets, bounds = state.sets, state.bounds
        if self.open.any():  # phase 1
            settled = self.open & (~sets.feasible_set | sets.perfectly_feasible_set)
            self.active |= settled & sets.feasible_set
            self.open &= ~settled
            if self.open.any():
                return Decision.sample(np.repeat(self.open[:, None], state.n_attributes, axis=1))
            if not self.active.any():
                return Decision.stop(INFEASIBLE)
        self.active &= ~(bounds.arm_upper < bounds.arm_lower[self.active].max())  # phase 2
        if self.active.sum() == 1:
            return Decision.stop(int(np.flatnonzero(self.active)[0]))
        return Decision.sample(np.repeat(self.active[:, None], state.n_attributes, axis=1))
