"""The characteristic time ``T*(mu)``: a certified max-min solver and its LP certificate.

Garivier & Kaufmann (2016, "Optimal best arm identification with fixed
confidence", Theorem 1): every delta-correct algorithm satisfies
``E[tau] >= T*(mu) kl(delta, 1 - delta)`` with

    1 / T*(mu) = max_{w in simplex} inf_{lambda in Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij),

over the N M arm-attribute pairs. The inner infimum is the best response of
:mod:`gbai.limits.alternatives`; here the outer maximum is solved and
certified (:func:`characteristic_time`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..model import Instance, check_delta
from .alternatives import alternative_values_kernel, answer_kernel, is_kinf
from .divergences import divergence_code, kl_bernoulli_scalar
from .pairs import LAW, law_alternatives_kernel, pair_divergence
from .reward_laws import law_arrays
from .structured import solve_structured

__all__ = [
    "CharacteristicTime",
    "characteristic_time",
    "check_instance",
    "lower_bound_tstar",
    "matching_divergence",
]


@dataclass(frozen=True, eq=False)
class CharacteristicTime:
    """``T*(mu)`` and the optimal proportions (Garivier & Kaufmann 2016).

    ``value`` is ``1/T*``, the max-min value achieved by ``w_star`` (a certified lower
    bound on the true max-min); ``value_upper`` is a certified upper bound (weak
    duality, see :func:`characteristic_time`) and ``gap = (value_upper - value) /
    value``. Hence ``T_star = 1/value`` is never below the true ``T*`` and exceeds
    it by a relative amount of at most ``gap``. ``iterations`` counts optimiser plus
    cutting-plane iterations (0 for the closed forms). ``method`` names how it was
    obtained: ``"closed-form"``, ``"structured"`` or ``"degenerate"``
    (``T* = inf``). ``divergence`` is ``"bernoulli"``, ``"gaussian"`` or ``"kinf"``.
    """

    T_star: float
    w_star: np.ndarray
    value: float
    gap: float
    iterations: int
    value_upper: float = math.nan
    method: str = ""
    divergence: str = "bernoulli"


def check_instance(instance) -> Instance:
    """``instance`` itself if it is a :class:`gbai.Instance`, else a ValueError."""
    if not isinstance(instance, Instance):
        raise ValueError(f"expected a gbai.Instance, got {type(instance).__name__}")
    return instance


def characteristic_time(
    instance: Instance,
    divergence: str = "bernoulli",
    *,
    method: str = "auto",
    tol: float = 1e-5,
    max_iter: int = 500,
    laws="beta",
) -> CharacteristicTime:
    """The characteristic time ``T*(mu)`` and optimal proportions ``w*``.

    ``1/T* = max_{w in simplex} min_{lambda in cl Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij)``
    over the N M arm-attribute pairs (Garivier & Kaufmann 2016).

    * Tie for the best feasible arm, or a pair of the best arm exactly at the
      threshold: ``T* = inf`` (value 0 for every ``w``; ``w_star`` is uniform).
    * Infeasible instance (closed form, ``method="auto"``): with
      ``D_b = d(min_j mu_bj, th)``, ``T* = sum_b 1/D_b`` and ``w*`` puts
      ``(1/D_b) / sum_c (1/D_c)`` on the smallest attribute of each arm ``b``.
      Proof: the alternatives are (C), one per arm, with cost
      ``f_b(w) = sum_{j: mu_bj < th} w_bj d(mu_bj, th)``. Given arm ``b``'s total
      weight ``W_b``, ``f_b <= W_b max_j d(mu_bj, th) = W_b D_b`` (``d(., th)``
      decreases on ``[0, th]``, so the largest divergence is at the smallest
      attribute), with equality when all of ``W_b`` sits on that attribute; weight
      elsewhere only lowers some ``f_b``. Then ``max min_b W_b D_b`` over
      ``sum_b W_b = 1`` equalises ``W_b D_b``, giving ``1/sum_b (1/D_b)``.
    * Feasible instance (``method="auto"`` or ``"structured"``): the scalable solver
      of :mod:`~gbai.limits.structured` (an outer problem in the answer's M
      weights, one small problem per other arm; certified by weak duality with the
      KKT multipliers). About 10 ms on the paper's 5 x 5 instances, 2 s for
      100 x 10 and 20 s for 500 x 20 (``python -m gbai.benchmark --scaling``).

    Parameters
    ----------
    instance:
        A :class:`gbai.Instance`.
    divergence:
        ``"bernoulli"`` (default), ``"gaussian"`` (variance 1/4) or ``"kinf"``:
        ``K_inf`` of each pair's reward law, the divergence of the lower bound for
        algorithms that are delta-correct for every law on [0, 1] (Agrawal, Juneja
        & Glynn 2020; :mod:`~gbai.limits.reward_laws`). For Bernoulli laws it equals
        the Bernoulli divergence; for other laws ``T*_kinf <= T*_bernoulli``.
    method:
        ``"auto"`` (closed forms where they exist, else ``"structured"``),
        or ``"structured"``.
    tol, max_iter:
        Target relative gap and cap on the optimiser's iterations. A
        :class:`RuntimeWarning` is issued when the certified gap stays above
        ``tol`` (this happens for near-ties with ``T*`` beyond about 1e10, or when
        ``max_iter`` is too small); the result still carries the gap reached.
    laws:
        Only for ``"kinf"``: ``"beta"`` (default, the simulated
        ``Beta(1, 1/mu - 1)``), ``"bernoulli"`` or an N x M grid of
        :class:`~gbai.limits.reward_laws.RewardLaw`.

    Raises
    ------
    ValueError
        For a non-Instance argument, an unknown divergence or method, or a
        non-positive ``tol`` / ``max_iter``.
    """
    instance = check_instance(instance)
    kinf = is_kinf(divergence)
    code = LAW if kinf else divergence_code(divergence)
    if method not in ("auto", "structured"):
        raise ValueError(f"method must be 'auto' or 'structured', got {method!r}")
    if not (isinstance(tol, (int, float)) and 0.0 < tol < 1.0):
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    th = instance.threshold
    n, m = means.shape
    name = divergence.lower()
    if kinf:
        xs, xcs, ps = law_arrays(means, laws)
    else:
        xs = xcs = ps = np.zeros((n, m, 0))
    a, tie = answer_kernel(means, th)
    if a >= 0 and (tie >= 0 or means[a].min() <= th):
        return CharacteristicTime(
            math.inf, np.full((n, m), 1.0 / (n * m)), 0.0, 0.0, 0, 0.0, "degenerate", name
        )
    if a < 0:
        # Closed form (see above); the largest d(mu_bj, th) over the attributes below
        # th is at the smallest mean for Bernoulli and Gaussian, and found by
        # comparison for K_inf.
        w = np.zeros((n, m))
        inv = np.empty(n)
        worst = np.empty(n, dtype=np.int64)
        for b in range(n):
            below = np.flatnonzero(means[b] < th)
            levels = [pair_divergence(code, means[b, j], xs[b, j], xcs[b, j], ps[b, j], th) for j in below]
            worst[b] = below[int(np.argmax(levels))]
            inv[b] = 1.0 / max(levels)
        total = float(inv.sum())
        for b in range(n):
            w[b, worst[b]] = inv[b] / total
        return CharacteristicTime(total, w, 1.0 / total, 0.0, 0, 1.0 / total, "closed-form", name)
    if kinf:

        def exact_values(weights):
            return law_alternatives_kernel(means, th, np.ascontiguousarray(weights), xs, xcs, ps, a)[3]

    else:

        def exact_values(weights):
            return alternative_values_kernel(means, th, np.ascontiguousarray(weights), code)[3]

    w, value, upper, iterations = solve_structured(
        means, th, a, code, (xs, xcs, ps), exact_values, tol, int(max_iter)
    )
    label = "structured"
    gap = (upper - value) / value
    if not gap <= tol:
        warnings.warn(
            f"characteristic_time({instance!r}): the certified relative gap {gap:.3g} "
            f"exceeds tol = {tol:g}",
            RuntimeWarning,
            stacklevel=2,
        )
    return CharacteristicTime(1.0 / value, w, value, gap, iterations, upper, label, name)


def lower_bound_tstar(
    instance: Instance, delta: float, divergence: str = "bernoulli", *, laws="beta"
) -> float:
    """``T*(mu) kl(delta, 1 - delta)``: Garivier & Kaufmann's bound on ``E[tau]``.

    ``kl`` is always the Bernoulli KL divergence between ``delta`` and ``1 - delta``
    (it comes from the data-processing inequality on the event "answer is right").
    """
    delta = check_delta(delta)
    result = characteristic_time(instance, divergence, laws=laws)
    return result.T_star * kl_bernoulli_scalar(delta, 1.0 - delta)


def matching_divergence(reward: str) -> str:
    """The divergence of the lower bound that matches a reward model of the simulator.

    The package's algorithms are delta-correct for every reward law on [0, 1], so
    the limit for a run uses ``K_inf`` of the laws it draws (Agrawal, Juneja &
    Glynn 2020): ``"kinf"`` (of ``Beta(1, 1/mu - 1)``) for ``reward="beta"``, and
    the Bernoulli divergence, which is ``K_inf`` of Bernoulli laws, for
    ``reward="bernoulli"``.
    """
    if reward not in ("beta", "bernoulli"):
        raise ValueError(f"unknown reward model {reward!r}; choose from ['bernoulli', 'beta']")
    return "kinf" if reward == "beta" else "bernoulli"
