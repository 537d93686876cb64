"""The confidence bounds of Section IV, eqs. (2)-(4), and the confidence sets of Algorithm 1.

The radius (reading note 2) is ``alpha(t, T) = sqrt(ln(4 N M t^4 / delta) / (2 T))``
with ``T = T_ij`` for a pair and ``T = T_i = min_j T_ij`` for an arm; the logarithm
is evaluated as ``ln(4NM/delta) + 4 ln t``, the same number without the overflow of
``t^4``. The sets follow reading notes 3 and 5. This module is the only place where
the paper's radius and sets are written; the compiled engine repeats them, tested
against this module run for run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["ConfidenceSets", "EmpiricalBounds", "confidence_radius", "confidence_sets", "empirical_bounds",
           "log_term"]


def log_term(t: int, n_pairs: int, delta: float) -> float:
    """``ln(4 N M t^4 / delta)``, as ``ln(4NM/delta) + 4 ln t`` (``n_pairs = N M``)."""
    return math.log(4.0 * n_pairs / delta) + 4.0 * math.log(t)


def confidence_radius(t: int, count: np.ndarray | float, n_pairs: int, delta: float) -> np.ndarray | float:
    """``alpha(t, T)`` of eq. (3) for round ``t`` and count(s) ``T``."""
    if t < 1:
        raise ValueError(f"round index t must be >= 1, got {t}")
    return np.sqrt(log_term(int(t), int(n_pairs), float(delta)) / (2.0 * np.asarray(count, dtype=np.float64)))


@dataclass(frozen=True)
class EmpiricalBounds:
    """Means ``mu_hat_ij``, ``mu_hat_i`` (eq. (2)) and bounds ``L, U`` of pairs (eq. (3)) and arms (eq. (4))."""

    means: np.ndarray
    arm_means: np.ndarray
    pair_radius: np.ndarray
    arm_radius: np.ndarray
    pair_lower: np.ndarray
    pair_upper: np.ndarray
    arm_lower: np.ndarray
    arm_upper: np.ndarray


def empirical_bounds(sums: np.ndarray, counts: np.ndarray, t: int, delta: float) -> EmpiricalBounds:
    """The means and bounds at round ``t`` from the reward sums and counts ``T_ij``."""
    counts = counts.astype(np.float64)
    means = sums / counts
    arm_means = means[:, 0].copy()
    for j in range(1, means.shape[1]):  # left to right, as the compiled engine sums
        arm_means += means[:, j]
    arm_means /= means.shape[1]
    pair_radius = confidence_radius(t, counts, counts.size, delta)
    arm_radius = confidence_radius(t, counts.min(axis=1), counts.size, delta)
    return EmpiricalBounds(means, arm_means, pair_radius, arm_radius, means - pair_radius, means + pair_radius,
                           arm_means - arm_radius, arm_means + arm_radius)


def _best(values: np.ndarray, members: np.ndarray) -> int:
    """The member with the largest value (the first on ties), or -1 for no member."""
    return int(np.argmax(np.where(members, values, -np.inf))) if members.any() else -1


@dataclass(frozen=True)
class ConfidenceSets:
    """The sets of Algorithm 1 at round ``t``: N x M masks for pairs, length-N masks for arms.

    An arm index is -1 when the set it is taken from is empty.
    """

    #: ``F_Pt^A``: pairs with ``L_ij >= mu_TH``.
    perfectly_feasible_attribute_set: np.ndarray
    #: ``dF_t^A``: pairs with ``L_ij < mu_TH <= U_ij``.
    almost_feasible_attribute_set: np.ndarray
    #: ``F_t^A``: pairs with ``U_ij >= mu_TH``.
    feasible_attribute_set: np.ndarray
    #: ``F_Pt``: arms whose every pair is in ``F_Pt^A``.
    perfectly_feasible_set: np.ndarray
    #: ``F_t``: arms whose every pair is in ``F_t^A``.
    feasible_set: np.ndarray
    #: ``dF_t = F_t minus F_Pt``.
    almost_feasible_set: np.ndarray
    #: ``P_t`` (reading note 3): the arms other than ``i*_t`` with ``U_i >= L_i*_t``; every arm if ``F_Pt`` is empty.
    potential_set: np.ndarray
    #: ``i*_t``: the empirically best arm of ``F_Pt``.
    best_perfectly_feasible_arm: int
    #: ``i_t``: the empirically best arm of ``F_t``.
    best_feasible_arm: int
    #: ``c_t``: the arm of ``F_t`` other than ``i_t`` with the largest ``U_i``.
    competitor_arm: int


def confidence_sets(bounds: EmpiricalBounds, threshold: float) -> ConfidenceSets:
    """The sets of Section IV from the bounds (reading notes 3 and 5)."""
    perfect_pairs = bounds.pair_lower >= threshold
    feasible_pairs = bounds.pair_upper >= threshold
    perfect, feasible = perfect_pairs.all(axis=1), feasible_pairs.all(axis=1)
    best_perfect = _best(bounds.arm_means, perfect)
    potential = np.ones_like(feasible)
    if best_perfect >= 0:
        potential = bounds.arm_upper >= bounds.arm_lower[best_perfect]
        potential[best_perfect] = False
    best_feasible = _best(bounds.arm_means, feasible)
    others = feasible.copy()
    if best_feasible >= 0:
        others[best_feasible] = False
    return ConfidenceSets(perfect_pairs, feasible_pairs & ~perfect_pairs, feasible_pairs, perfect, feasible,
                          feasible & ~perfect, potential, best_perfect, best_feasible,
                          _best(bounds.arm_upper, others))
