"""The divergences of the lower bounds: Bernoulli KL and Gaussian KL (variance 1/4).

``"bernoulli"`` (default) is the Bernoulli KL divergence, the model of the paper's
appendix. Its ``T*`` is the limit for Bernoulli rewards. For other rewards in
[0, 1] it is *not* a lower bound: an algorithm that is delta-correct for every law
on [0, 1] faces the divergence ``K_inf`` of the actual laws
(:mod:`~gbai.limits.reward_laws`), and ``K_inf(nu, q) >= kl(mean(nu), q)`` for every
law ``nu`` on [0, 1] (the Bernoulli law is the hardest one with a given mean),
so ``T*_Kinf <= T*_Bernoulli``: the Bernoulli ``T*`` is the largest limit over the
reward laws with the given means. Alternatives stay in [0, 1].
``"gaussian"`` is the KL divergence of Gaussians with variance 1/4,
``d(p, q) = 2 (p - q)^2``; Gaussian means range over the whole real line, so the
alternatives are not confined to [0, 1] in that case.


The compiled scalar functions (:func:`kl_bernoulli_scalar`, :func:`kl_gaussian_scalar`,
:func:`divergence_scalar`) take no validation and are callable from other numba
kernels; :func:`kl_bernoulli` and :func:`kl_gaussian` are the checked, broadcasting
versions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, vectorize

__all__ = [
    "BERNOULLI",
    "DIVERGENCES",
    "GAUSSIAN",
    "divergence_code",
    "divergence_scalar",
    "kl_bernoulli",
    "kl_bernoulli_complements",
    "kl_bernoulli_scalar",
    "kl_gaussian",
    "kl_gaussian_scalar",
]

#: Divergence names and the integer codes the kernels take.
DIVERGENCES = {"bernoulli": 0, "gaussian": 1}
BERNOULLI = 0
GAUSSIAN = 1


@njit(cache=True)
def _phi(t):
    """``t ln t - t + 1`` for ``t >= 0`` (0 at t = 1, 1 at t = 0), accurate near t = 1."""
    if t == 0.0:
        return 1.0
    u = t - 1.0
    if abs(u) < 1e-2:
        # Taylor series sum_{k>=2} (-1)^k u^k / (k (k-1)); the first omitted term is
        # u^9/72, below 1e-14 of the sum u^2/2 for |u| < 1e-2.
        u2 = u * u
        return u2 * (
            0.5
            - u / 6.0
            + u2 / 12.0
            - u2 * u / 20.0
            + u2 * u2 / 30.0
            - u2 * u2 * u / 42.0
            + u2 * u2 * u2 / 56.0
        )
    if abs(u) < 0.5:
        return t * math.log1p(u) - u
    return t * math.log(t) - u


@njit(cache=True)
def kl_bernoulli_complements(p, p_c, q, q_c):
    """Bernoulli KL ``d(p, q)`` given ``p_c = 1 - p`` and ``q_c = 1 - q`` separately.

    Passing the complements lets a caller that knows ``1 - q`` more accurately than
    ``1.0 - q`` (e.g. ``q = 1 - 1e-30``) get a finite, accurate value. For
    ``0 < q < 1`` it is ``q phi(p/q) + (1-q) phi((1-p)/(1-q))`` with
    ``phi(t) = t ln t - t + 1 >= 0``: both terms are non-negative, so there is no
    cancellation when ``p`` is close to ``q``. It is ``+inf`` when ``q`` is 0 or 1
    and ``p != q``; ``0 ln 0 = 0``.
    """
    if p == q:
        return 0.0
    if q <= 0.0:
        return 0.0 if p <= 0.0 else math.inf
    if q_c <= 0.0:
        return 0.0 if p_c <= 0.0 else math.inf
    return q * _phi(p / q) + q_c * _phi(p_c / q_c)


@njit(cache=True)
def kl_bernoulli_scalar(p, q):
    """Bernoulli KL ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`` for p, q in [0, 1]."""
    return kl_bernoulli_complements(p, 1.0 - p, q, 1.0 - q)


@njit(cache=True)
def kl_gaussian_scalar(p, q):
    """KL divergence of Gaussians with variance 1/4: ``(p - q)^2 / (2 * 1/4)``."""
    diff = p - q
    return 2.0 * diff * diff


@njit(cache=True)
def divergence_scalar(p, q, code):
    if code == BERNOULLI:
        return kl_bernoulli_scalar(p, q)
    return kl_gaussian_scalar(p, q)


@vectorize(["float64(float64, float64)"], cache=True)
def _kl_bernoulli_ufunc(p, q):
    return kl_bernoulli_scalar(p, q)


@vectorize(["float64(float64, float64)"], cache=True)
def _kl_gaussian_ufunc(p, q):
    return kl_gaussian_scalar(p, q)


def _as_probabilities(value, name):
    array = np.asarray(value, dtype=np.float64)
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN")
    if ((array < 0.0) | (array > 1.0)).any():
        raise ValueError(f"{name} must lie in [0, 1] for the Bernoulli divergence")
    return array


def kl_bernoulli(p, q):
    """Bernoulli KL divergence ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``.

    Broadcasts like a numpy ufunc and returns a float for scalar input. Conventions:
    ``0 ln 0 = 0``; the value is ``+inf`` when ``q`` is 0 or 1 and ``p != q``.
    Arguments outside [0, 1] or NaN raise ValueError (nothing is clipped).
    """
    p_arr = _as_probabilities(p, "p")
    q_arr = _as_probabilities(q, "q")
    result = _kl_bernoulli_ufunc(p_arr, q_arr)
    return float(result) if np.ndim(result) == 0 else result


def kl_gaussian(p, q):
    """KL divergence of two Gaussians of variance 1/4: ``d(p, q) = 2 (p - q)^2``.

    Broadcasts like a numpy ufunc; NaN raises ValueError. Any real means are allowed.
    """
    p_arr = np.asarray(p, dtype=np.float64)
    q_arr = np.asarray(q, dtype=np.float64)
    if np.isnan(p_arr).any() or np.isnan(q_arr).any():
        raise ValueError("kl_gaussian: arguments contain NaN")
    result = _kl_gaussian_ufunc(p_arr, q_arr)
    return float(result) if np.ndim(result) == 0 else result


def divergence_code(divergence) -> int:
    """The kernel code of a divergence name; a ValueError names the valid ones."""
    if not isinstance(divergence, str) or divergence.lower() not in DIVERGENCES:
        raise ValueError(
            f"unknown divergence {divergence!r}; choose from {sorted(DIVERGENCES)}"
        )
    return DIVERGENCES[divergence.lower()]
