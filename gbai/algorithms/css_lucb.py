"""CSS-LUCB: Confidence Set Sampling LUCB, Algorithm 1 of the paper (Section IV).

As reading notes 3-5 resolve it. At round ``t``, with the bounds of eqs. (3)-(4)
(radius ``alpha(t, T) = sqrt(ln(4NMt^4/delta) / (2T))``) and the sets of
:func:`gbai.confidence.confidence_sets`:

* ``F_t``: arms whose every pair has ``U_ij >= mu_TH``; ``F_Pt``: arms whose every
  pair has ``L_ij >= mu_TH``; ``i*_t``: the empirically best arm of ``F_Pt``;
* ``P_t``: the arms other than ``i*_t`` with ``U_i >= L_{i*_t}`` (every arm when
  ``F_Pt`` is empty);
* stop when ``F_t`` and ``P_t`` are disjoint; output ``i_t`` (the best arm of
  ``F_t``, then equal to ``i*_t``) when ``F_t`` is non-empty, else "infeasible";
* otherwise, with ``|F_t| = 1`` pull the pairs of ``i_t`` in ``F_t^A``; with more
  feasible-looking arms pull the pairs of ``i_t`` and of the competitor ``c_t``
  (the largest ``U_i`` in ``F_t`` other than ``i_t``) that lie in ``F_t^A``.

:func:`css_lucb_sets` is that rule on per-arm numbers; CSS-LUCB+
(:mod:`gbai.algorithms.css_lucb_plus`) reuses it with its own bounds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine import RoundState
from .base import Algorithm
from .kernels import CONTINUE, INFEASIBLE, ArmRulePolicy, arm_rule, arm_rule_runner

__all__ = ["ALGORITHM", "CSSLUCB", "css_lucb_rule", "css_lucb_sets"]


@njit(cache=True)
def css_lucb_sets(arm_mean, lower, upper, feasible, perfect):
    """CSS-LUCB's stopping rule and choice of arms from per-arm bounds and set memberships.

    Returns ``(answer, leader, competitor)``: ``answer`` is the output when ``F_t``
    and ``P_t`` are disjoint (an arm, or -1 for infeasible) and :data:`CONTINUE`
    otherwise; ``leader`` is ``i_t`` and ``competitor`` is ``c_t`` (-1 when ``F_t``
    has no other arm).
    """
    n = arm_mean.size
    best_perfect = -1
    best_feasible = -1
    n_feasible = 0
    for i in range(n):
        if feasible[i]:
            n_feasible += 1
            if best_feasible < 0 or arm_mean[i] > arm_mean[best_feasible]:
                best_feasible = i
            if perfect[i] and (best_perfect < 0 or arm_mean[i] > arm_mean[best_perfect]):
                best_perfect = i
    # F_t and P_t overlap? (P_t is every arm when F_Pt is empty.)
    overlap = False
    if best_perfect < 0:
        overlap = n_feasible > 0
    else:
        for i in range(n):
            if feasible[i] and i != best_perfect and upper[i] >= lower[best_perfect]:
                overlap = True
                break
    if not overlap:
        return (best_feasible if n_feasible > 0 else INFEASIBLE), best_feasible, -1
    competitor = -1
    for i in range(n):
        if feasible[i] and i != best_feasible and (competitor < 0 or upper[i] > upper[competitor]):
            competitor = i
    return CONTINUE, best_feasible, competitor


@arm_rule
def css_lucb_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    """CSS-LUCB as an arm rule: stop, or choose ``i_t`` and ``c_t`` (it keeps no memory)."""
    answer, leader, competitor = css_lucb_sets(arm_mean, lower, upper, feasible, perfect)
    if answer != CONTINUE:
        return answer
    for i in range(chosen.size):
        chosen[i] = i == leader or i == competitor
    return CONTINUE


def _no_memory(n_arms: int) -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


class CSSLUCB(ArmRulePolicy):
    """CSS-LUCB as a step-engine policy (the rule is in the module docstring).

    It pulls the pairs of the chosen arms that lie in ``F_t^A``: all of them when
    every attribute of an arm has the same count, as in CSS-LUCB's own runs.
    """

    name = "css-lucb"
    rule = css_lucb_rule
    memory_for = _no_memory

    def pulls(self, state: RoundState, chosen: np.ndarray) -> np.ndarray:
        return chosen[:, None] & state.sets.feasible_attribute_set


ALGORITHM = Algorithm(
    name="css-lucb",
    title="CSS-LUCB",
    reference="Algorithm 1, Section IV",
    make_policy=CSSLUCB,
    run_fast=arm_rule_runner(css_lucb_rule, _no_memory),
    modules=("algorithms/css_lucb.py",),
)
