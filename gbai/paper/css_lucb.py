"""CSS-LUCB, Algorithm 1 of the paper (Section IV), as reading notes 3-5 resolve it.

Each round reads the sets of :mod:`gbai.paper.bounds` and follows the algorithm's
lines 12-20: stop when no feasible-looking arm can still be the best (``F_t`` and
``P_t`` are disjoint), otherwise sample the pairs in ``F_t^A`` of the leader ``i_t``
and, when ``F_t`` holds other arms, of the competitor ``c_t``.
"""

from __future__ import annotations

import numpy as np

from .engine import Decision, RoundState
from .model import INFEASIBLE

__all__ = ["CSSLUCB", "css_lucb"]


def css_lucb(state: RoundState) -> Decision:
    """One round of CSS-LUCB (Algorithm 1, lines 12-20)."""
    sets = state.sets
    if not (sets.feasible_set & sets.potential_set).any():  # F_t and P_t are disjoint
        return Decision.stop(sets.best_feasible_arm if sets.feasible_set.any() else INFEASIBLE)
    arms = [sets.best_feasible_arm]  # i_t
    if sets.feasible_set.sum() > 1:
        arms.append(sets.competitor_arm)  # c_t
    pulls = np.zeros_like(sets.feasible_attribute_set)
    pulls[arms] = sets.feasible_attribute_set[arms]  # their pairs in F_t^A
    return Decision.sample(pulls)


class CSSLUCB:
    """CSS-LUCB as a step-engine policy; it keeps no state between rounds."""

    name = "css-lucb"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        pass

    def decide(self, state: RoundState) -> Decision:
        return css_lucb(state)
