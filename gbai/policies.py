"""The paper's three algorithms as step-engine policies (Section IV and Section VI).

Each class follows :class:`gbai.engine.Policy`; the fast engine (:mod:`gbai.fast`)
runs the same rules compiled, and a test checks that both give identical runs.
All three sample every attribute of the arms they choose, so within an arm all
attributes have the same count and ``T_i(t) = T_ij(t)``.
"""

from __future__ import annotations

import numpy as np

from .engine import Decision, RoundState
from .model import INFEASIBLE

__all__ = ["ActionElimination", "CSSLUCB", "FeasibilityThenBAI"]


class CSSLUCB:
    """Confidence Set Sampling LUCB, Algorithm 1 of the paper, as reading notes 3-5 resolve it.

    At round ``t`` (the sets come from :func:`gbai.confidence.confidence_sets`):

    * stop when ``F_t`` and ``P_t`` are disjoint; output ``i_t`` (the best arm of
      ``F_t``, then equal to ``i*_t``) when ``F_t`` is non-empty, else "infeasible";
    * otherwise, with ``|F_t| = 1`` pull the pairs of ``i_t`` in ``F_t^A``; with more
      feasible-looking arms pull the pairs of ``i_t`` and of the competitor ``c_t``
      (largest ``U_i`` in ``F_t`` other than ``i_t``) that lie in ``F_t^A``.

    The bounds use the paper's radius ``alpha(t, T)`` (eqs. (3)-(4)).
    """

    name = "css-lucb"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        """CSS-LUCB keeps no state between rounds beyond the samples."""

    def decide(self, state: RoundState) -> Decision:
        sets = state.sets
        if not (sets.feasible_set & sets.potential_set).any():
            if sets.feasible_set.any():
                return Decision.stop(sets.best_feasible_arm)
            return Decision.stop(INFEASIBLE)
        pulls = np.zeros_like(sets.feasible_attribute_set)
        leader = sets.best_feasible_arm
        pulls[leader] = sets.feasible_attribute_set[leader]
        if sets.feasible_set.sum() > 1:
            competitor = sets.competitor_arm
            pulls[competitor] = sets.feasible_attribute_set[competitor]
        return Decision.sample(pulls)


class ActionElimination:
    """Action Elimination with attribute elimination (baseline 1, reading note 6).

    Every round samples all attributes of every active arm. At round ``t``:

    * an active arm with some ``U_ij < mu_TH`` is eliminated;
    * with ``B`` the active arms that are perfectly feasible (all ``L_ij >= mu_TH``),
      if ``B`` is non-empty every active arm with ``U_i < max_{k in B} L_k`` is
      eliminated;
    * the run stops with "infeasible" when no arm is active, and with the last arm
      when exactly one arm is active and it is perfectly feasible.
    """

    name = "ae"

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.active = np.ones(n_arms, dtype=bool)

    def decide(self, state: RoundState) -> Decision:
        threshold = state.threshold
        self.active &= (state.pair_upper >= threshold).all(axis=1)
        perfect = self.active & (state.pair_lower >= threshold).all(axis=1)
        if perfect.any():
            self.active &= ~(state.arm_upper < state.arm_lower[perfect].max())
        if not self.active.any():
            return Decision.stop(INFEASIBLE)
        if self.active.sum() == 1:
            (last,) = np.flatnonzero(self.active)
            if perfect[last]:
                return Decision.stop(int(last))
        return Decision.sample(np.repeat(self.active[:, None], state.n_attributes, axis=1))


class FeasibilityThenBAI:
    """Feasibility first, then best-arm identification (baseline 2, reading note 7).

    Phase 1 samples every attribute of each arm whose feasibility is unresolved. An
    arm is resolved infeasible once some ``U_ij < mu_TH`` and feasible once all
    ``L_ij >= mu_TH``; a resolution is final. When every arm is resolved, the run
    declares "infeasible" if no arm is feasible; otherwise phase 2 starts in the same
    round: Action Elimination on the feasible arms (keeping all samples and the round
    counter) samples every attribute of the active arms, eliminates ``i`` when
    ``U_i < max_k L_k`` over the active arms, and stops at one active arm.
    """

    name = "feasibility-then-bai"

    UNRESOLVED, FEASIBLE, INFEASIBLE_ARM = 0, 1, -1

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.status = np.zeros(n_arms, dtype=np.int8)
        self.active: np.ndarray | None = None

    def decide(self, state: RoundState) -> Decision:
        threshold = state.threshold
        if self.active is None:
            unresolved = self.status == self.UNRESOLVED
            ruled_out = unresolved & (state.pair_upper < threshold).any(axis=1)
            certified = unresolved & (state.pair_lower >= threshold).all(axis=1)
            self.status[ruled_out] = self.INFEASIBLE_ARM
            self.status[certified] = self.FEASIBLE
            unresolved = self.status == self.UNRESOLVED
            if unresolved.any():
                return Decision.sample(np.repeat(unresolved[:, None], state.n_attributes, axis=1))
            self.active = self.status == self.FEASIBLE
            if not self.active.any():
                return Decision.stop(INFEASIBLE)
        self.active &= ~(state.arm_upper < state.arm_lower[self.active].max())
        if self.active.sum() == 1:
            return Decision.stop(int(np.flatnonzero(self.active)[0]))
        return Decision.sample(np.repeat(self.active[:, None], state.n_attributes, axis=1))
