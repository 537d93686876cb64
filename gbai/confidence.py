"""Confidence bounds (Section IV) and the confidence sets that CSS-LUCB is built on.

The paper's radius (reading note 2) is

    alpha(t, T) = sqrt( ln(4 N M t^4 / delta) / (2 T) ),

with ``T = T_ij(t)`` for a pair and ``T = T_i(t) = min_j T_ij(t)`` for an arm. We
evaluate the logarithm as ``ln(4NM/delta) + 4 ln t``, which is the same number
without the overflow of ``t^4`` in integer arithmetic. The scalar kernels below are
compiled with numba and shared by the step engine and the fast engine, so both
engines compute identical floating-point bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = [
    "ConfidenceSets",
    "EmpiricalBounds",
    "confidence_radius",
    "confidence_sets",
    "empirical_bounds",
    "log_term",
]


@njit(cache=True)
def log_constant(n_pairs: int, delta: float) -> float:
    """``ln(4 N M / delta)``, the part of the log term that does not change with ``t``."""
    return math.log(4.0 * n_pairs / delta)


@njit(cache=True)
def log_term_from(constant: float, t: int) -> float:
    """``constant + 4 ln t``; with ``constant = log_constant(N M, delta)`` this is ``ln(4NMt^4/delta)``."""
    return constant + 4.0 * math.log(t)


@njit(cache=True)
def log_term(t: int, n_pairs: int, delta: float) -> float:
    """``ln(4 N M t^4 / delta)`` evaluated as ``ln(4NM/delta) + 4 ln t`` (``n_pairs = N M``)."""
    return log_term_from(log_constant(n_pairs, delta), t)


@njit(cache=True)
def radius(log_value: float, count: float) -> float:
    """``sqrt(log_value / (2 T))``: the radius for a count ``T`` given the log term."""
    return math.sqrt(log_value / (2.0 * count))


def confidence_radius(t: int, count: np.ndarray | float, n_pairs: int, delta: float) -> np.ndarray | float:
    """The paper's ``alpha(t, T)`` for round ``t``, count(s) ``T`` and ``n_pairs = N M``."""
    if t < 1:
        raise ValueError(f"round index t must be >= 1, got {t}")
    value = log_term(int(t), int(n_pairs), float(delta))
    return np.sqrt(value / (2.0 * np.asarray(count, dtype=np.float64)))


def arm_means_from(means: np.ndarray) -> np.ndarray:
    """Average each row of attribute means, summing attributes left to right.

    The explicit order matches the compiled kernels exactly (numpy's pairwise
    reductions may sum in another order and differ in the last bit).
    """
    total = means[:, 0].copy()
    for j in range(1, means.shape[1]):
        total += means[:, j]
    return total / means.shape[1]


@dataclass(frozen=True)
class EmpiricalBounds:
    """Empirical means and the paper's confidence bounds at round ``t``.

    ``pair_lower``/``pair_upper`` are ``L_ij(t)``/``U_ij(t)`` (eq. (3)), and
    ``arm_lower``/``arm_upper`` are ``L_i(t)``/``U_i(t)`` (eq. (4)).
    """

    means: np.ndarray
    arm_means: np.ndarray
    pair_radius: np.ndarray
    arm_radius: np.ndarray
    pair_lower: np.ndarray
    pair_upper: np.ndarray
    arm_lower: np.ndarray
    arm_upper: np.ndarray


def empirical_bounds(sums: np.ndarray, counts: np.ndarray, t: int, delta: float) -> EmpiricalBounds:
    """Means ``mu_hat_ij(t)``, ``mu_hat_i(t)`` (eq. (2)) and the bounds of eqs. (3)-(4)."""
    counts_f = counts.astype(np.float64)
    means = sums / counts_f
    arm_means = arm_means_from(means)
    value = log_term(int(t), int(counts.size), float(delta))
    pair_radius = np.sqrt(value / (2.0 * counts_f))
    arm_radius = np.sqrt(value / (2.0 * counts_f.min(axis=1)))
    return EmpiricalBounds(
        means=means,
        arm_means=arm_means,
        pair_radius=pair_radius,
        arm_radius=arm_radius,
        pair_lower=means - pair_radius,
        pair_upper=means + pair_radius,
        arm_lower=arm_means - arm_radius,
        arm_upper=arm_means + arm_radius,
    )


def _argmax_over(values: np.ndarray, mask: np.ndarray) -> int:
    """Index of the largest value among ``mask`` (lowest index on ties), or -1."""
    if not mask.any():
        return -1
    return int(np.argmax(np.where(mask, values, -np.inf)))


@dataclass(frozen=True)
class ConfidenceSets:
    """The sets of Section IV at round ``t`` (boolean masks), with ``i*_t``, ``i_t``, ``c_t``.

    Attribute sets are N x M masks, arm sets are length-N masks. An index is -1 when
    the set it is taken from is empty.
    """

    #: ``F_Pt^A``: pairs with ``L_ij >= mu_TH``.
    perfectly_feasible_attribute_set: np.ndarray
    #: ``dF_t^A``: pairs with ``L_ij < mu_TH <= U_ij``.
    almost_feasible_attribute_set: np.ndarray
    #: ``F_t^A``: pairs with ``U_ij >= mu_TH`` (union of the two above).
    feasible_attribute_set: np.ndarray
    #: ``F_Pt``: arms whose every pair is in ``F_Pt^A``.
    perfectly_feasible_set: np.ndarray
    #: ``F_t``: arms whose every pair is in ``F_t^A``.
    feasible_set: np.ndarray
    #: ``dF_t = F_t \\ F_Pt``.
    almost_feasible_set: np.ndarray
    #: ``P_t`` (reading note 3): arms other than ``i*_t`` whose ``U_i >= L_{i*_t}``; all arms if ``F_Pt`` is empty.
    potential_set: np.ndarray
    #: ``i*_t``: the empirically best arm of ``F_Pt``.
    best_perfectly_feasible_arm: int
    #: ``i_t``: the empirically best arm of ``F_t``.
    best_feasible_arm: int
    #: ``c_t``: the arm of ``F_t`` other than ``i_t`` with the largest ``U_i``.
    competitor_arm: int


def confidence_sets(bounds: EmpiricalBounds, threshold: float) -> ConfidenceSets:
    """Build the sets of Section IV from the bounds (reading notes 3 and 5)."""
    perfect_pairs = bounds.pair_lower >= threshold
    feasible_pairs = bounds.pair_upper >= threshold
    almost_pairs = feasible_pairs & ~perfect_pairs
    perfect_arms = perfect_pairs.all(axis=1)
    feasible_arms = feasible_pairs.all(axis=1)
    best_perfect = _argmax_over(bounds.arm_means, perfect_arms)
    if best_perfect < 0:
        potential = np.ones_like(feasible_arms)
    else:
        potential = bounds.arm_upper >= bounds.arm_lower[best_perfect]
        potential[best_perfect] = False
    best_feasible = _argmax_over(bounds.arm_means, feasible_arms)
    others = feasible_arms.copy()
    if best_feasible >= 0:
        others[best_feasible] = False
    competitor = _argmax_over(bounds.arm_upper, others)
    return ConfidenceSets(
        perfectly_feasible_attribute_set=perfect_pairs,
        almost_feasible_attribute_set=almost_pairs,
        feasible_attribute_set=feasible_pairs,
        perfectly_feasible_set=perfect_arms,
        feasible_set=feasible_arms,
        almost_feasible_set=feasible_arms & ~perfect_arms,
        potential_set=potential,
        best_perfectly_feasible_arm=best_perfect,
        best_feasible_arm=best_feasible,
        competitor_arm=competitor,
    )
