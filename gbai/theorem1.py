"""Theorem 1 of the paper (Section III, proved in the appendix "PROOF OF LOWER BOUND").

``E[tau] >= ln(1/(2.4 delta)) C(nu, mu_TH) H_id``; :func:`hardness_report` puts it
next to the characteristic time for the command line.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .model import Instance, check_delta
from .limits.characteristic_time import characteristic_time, check_instance
from .limits.divergences import kl_bernoulli_scalar

__all__ = ["hardness_report", "theorem1_bound", "theorem1_constants"]


def theorem1_constants(instance: Instance) -> dict:
    """The constants ``c1, c2, c3`` and ``C(nu, mu_TH)`` of Theorem 1 (appendix).

    Read from the appendix "PROOF OF LOWER BOUND" (0-based arms; the appendix's
    "arm 1" is the best arm ``a``):

    * ``c1`` (case (i) and the infeasible risky arms of the general case). For arm
      ``k`` let ``S_k = {j : mu_kj < th}``, ``z_k = (sum_{j not in S_k} mu_kj +
      |S_k| th) / M`` and ``c_k = min(z_k, 1 - z_k)`` (the reverse-Pinsker constant
      of step (c)). The appendix leaves ``k`` free in ``c``; we take ``c = min_k c_k``
      over the arms concerned, which keeps every per-arm inequality valid, and
      likewise ``max_k |S_k|`` over the same arms: ``c1 = M^2 c / (2 max_k |S_k|^2)``.
      The arms concerned are all arms in case (i) and ``F^c ∩ R`` in the general
      case. ``c1`` is NaN when no arm is concerned.
    * ``c2`` (feasible instances). ``j' = argmin_j mu_aj``, ``z = mu_a - (mu_aj' -
      th)/M``, ``c = min(z, 1 - z)``; ``c2 = min(M^2 c / 2, min(mu_a, 1 - mu_a)/16)``.
      NaN for an infeasible instance.
    * ``c3 = min(mu_a, 1 - mu_a) / 8`` (feasible instances; it enters only when
      ``F^c ∩ S`` is non-empty). NaN for an infeasible instance.
    * ``C``: the minimum of the constants that enter: case (i) ``C = c1``; case (ii)
      (every arm feasible) ``C = c2``; general case ``C = min(c2, c1 if F^c ∩ R is
      non-empty, c3 if F^c ∩ S is non-empty)``.

    Returns a dict with ``case`` ("all infeasible (i)", "all feasible (ii)" or
    "general"), ``c1``, ``c2``, ``c3``, ``C``, ``entering`` (names of the constants
    in ``C``), ``c_attr`` and ``c_best`` (the two ``c``'s), ``best_arm`` and the arm
    sets ``infeasible_risky`` and ``infeasible_suboptimal``.
    """
    instance = check_instance(instance)
    means = instance.means
    th = instance.threshold
    m = instance.n_attributes
    feasible = instance.feasible_mask
    risky = instance.risky_mask
    suboptimal = instance.suboptimal_mask
    infeasible_risky = tuple(int(i) for i in np.flatnonzero(~feasible & risky))
    infeasible_suboptimal = tuple(int(i) for i in np.flatnonzero(~feasible & suboptimal))

    def c1_over(arms):
        if not arms:
            return math.nan, math.nan
        cs = []
        sizes = []
        for k in arms:
            below = means[k] < th
            z = (means[k][~below].sum() + below.sum() * th) / m
            cs.append(min(z, 1.0 - z))
            sizes.append(int(below.sum()))
        c = min(cs)
        return m * m * c / (2.0 * max(sizes) ** 2), c

    if not instance.is_feasible:
        arms = tuple(range(instance.n_arms))
        c1, c_attr = c1_over(arms)
        return {
            "case": "all infeasible (i)",
            "c1": c1,
            "c2": math.nan,
            "c3": math.nan,
            "C": c1,
            "entering": ("c1",),
            "c_attr": c_attr,
            "c_best": math.nan,
            "best_arm": None,
            "infeasible_risky": arms,
            "infeasible_suboptimal": (),
        }
    a = instance.best_arm
    mu_a = float(instance.arm_means[a])
    j_prime = int(np.argmin(means[a]))
    z = mu_a - (means[a, j_prime] - th) / m
    c_best = min(z, 1.0 - z)
    c2 = min(m * m * c_best / 2.0, min(mu_a, 1.0 - mu_a) / 16.0)
    c3 = min(mu_a, 1.0 - mu_a) / 8.0
    c1, c_attr = c1_over(infeasible_risky)
    entering = ["c2"]
    if infeasible_risky:
        entering.insert(0, "c1")
    if infeasible_suboptimal:
        entering.append("c3")
    constants = {"c1": c1, "c2": c2, "c3": c3}
    case = "all feasible (ii)" if feasible.all() else "general"
    return {
        "case": case,
        "c1": c1,
        "c2": c2,
        "c3": c3,
        "C": min(constants[name] for name in entering),
        "entering": tuple(entering),
        "c_attr": c_attr,
        "c_best": c_best,
        "best_arm": a,
        "infeasible_risky": infeasible_risky,
        "infeasible_suboptimal": infeasible_suboptimal,
    }


def theorem1_bound(instance: Instance, delta: float) -> float:
    """Theorem 1 as stated: ``ln(1/(2.4 delta)) C(nu, mu_TH) H_id``.

    ``H_id`` is :meth:`Instance.hardness_index` (the paper's definition; it warns with
    :class:`gbai.HardnessWarning` when infinite). With an infinite ``H_id`` the
    result is ``+inf`` when ``C > 0`` and ``delta < 1/2.4``, NaN otherwise (``0 *
    inf``, or a vacuous sign). For ``delta >= 1/2.4`` the logarithm is <= 0 and the
    bound is vacuous; the stated (non-positive) product is returned.
    """
    delta = check_delta(delta)
    constants = theorem1_constants(instance)
    hardness = instance.hardness_index()
    log_factor = math.log(1.0 / (2.4 * delta))
    C = constants["C"]
    if math.isinf(hardness):
        return math.inf if (C > 0 and log_factor > 0) else math.nan
    return log_factor * C * hardness


def hardness_report(instance: Instance, delta: float) -> dict:
    """The lower-bound quantities of an instance, JSON-ready (used by ``gbai hardness``).

    Keys: ``T_star`` and ``w_star`` (Bernoulli divergence), ``T_star_gap`` (the
    certified relative gap), ``lower_bound_tstar`` (``T* kl(delta, 1 - delta)``),
    ``lower_bound_theorem1`` (Theorem 1 as stated), ``theorem1_C`` and
    ``theorem1_case``. Infinite or undefined numbers are reported as None.
    """
    delta = check_delta(delta)
    result = characteristic_time(instance)
    constants = theorem1_constants(instance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theorem1 = theorem1_bound(instance, delta)

    def number(value):
        return float(value) if value is not None and math.isfinite(value) else None

    return {
        "T_star": number(result.T_star),
        "w_star": result.w_star.tolist(),
        "T_star_gap": number(result.gap),
        "lower_bound_tstar": number(result.T_star * kl_bernoulli_scalar(delta, 1.0 - delta)),
        "lower_bound_theorem1": number(theorem1),
        "theorem1_C": number(constants["C"]),
        "theorem1_case": constants["case"],
    }
