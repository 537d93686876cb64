"""The divergences of the lower bounds and the per-pair operations every solver shares.

Three divergences ``d(mu, q)`` of one arm-attribute pair, selected by an integer code
(:data:`DIVERGENCES`): the Bernoulli KL (the paper's model), the KL of Gaussians of
variance 1/4, ``2 (mu - q)^2`` (means on the whole real line), and ``K_inf`` of the
pair's reward law (:mod:`gbai.limits.reward_laws`). The compiled pair operations take
the pair ``(i, j)`` and ``laws``, the support, complement and probabilities of every
pair's law stacked in a 3 x N x M x K array (K = 0 for the parametric codes): :func:`pair_divergence`, the
point of the answer moving down :func:`lower_point`, of a challenger moving up
:func:`upper_point` (Lagrangian minimisers of the overtake alternative) and
:func:`level_point`. The scalar kernels take no validation; :func:`kl_bernoulli` and
:func:`kl_gaussian` are the checked, broadcasting versions.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from numba import njit, vectorize
from numpy.typing import ArrayLike

from .reward_laws import kinf_kernel, kinf_point, law_arrays, law_mean, law_variance

__all__ = [
    "BERNOULLI", "DIVERGENCES", "GAUSSIAN", "KINF", "divergence_code", "divergence_scalar", "kl_bernoulli",
    "kl_bernoulli_complements", "kl_bernoulli_scalar", "kl_gaussian", "kl_gaussian_scalar", "level_point",
    "lower_point", "pair_divergence", "pair_laws", "upper_point",
]

#: Divergence names and the integer codes the kernels take.
DIVERGENCES = {"bernoulli": 0, "gaussian": 1, "kinf": 2}
BERNOULLI = 0
GAUSSIAN = 1
KINF = 2
_ROOT_MAX_ITER = 200


@njit(cache=True)
def _phi(t):
    """``t ln t - t + 1`` for ``t >= 0``, accurate near ``t = 1``."""
    if t == 0.0:
        return 1.0
    u = t - 1.0
    if abs(u) < 1e-2:
        # Taylor series sum_{k>=2} (-1)^k u^k / (k (k-1)); the first omitted term is
        # below 1e-14 of the sum for |u| < 1e-2.
        u2 = u * u
        return u2 * (0.5 - u / 6.0 + u2 / 12.0 - u2 * u / 20.0 + u2 * u2 / 30.0 - u2 * u2 * u / 42.0
                     + u2 * u2 * u2 / 56.0)
    if abs(u) < 0.5:
        return t * math.log1p(u) - u
    return t * math.log(t) - u


@njit(cache=True)
def kl_bernoulli_complements(p: float, p_c: float, q: float, q_c: float) -> float:
    """Bernoulli KL ``d(p, q)`` given ``p_c = 1 - p`` and ``q_c = 1 - q`` separately.

    Written ``q phi(p/q) + (1-q) phi((1-p)/(1-q))`` with ``phi(t) = t ln t - t + 1 >= 0``,
    two non-negative terms: no cancellation near ``p = q``, and finite when ``q`` is
    within an ulp of 1 but ``q_c`` is known. ``+inf`` for ``q`` in {0, 1} and ``p != q``.
    """
    if p == q:
        return 0.0
    if q <= 0.0:
        return 0.0 if p <= 0.0 else math.inf
    if q_c <= 0.0:
        return 0.0 if p_c <= 0.0 else math.inf
    return q * _phi(p / q) + q_c * _phi(p_c / q_c)


@njit(cache=True)
def kl_bernoulli_scalar(p: float, q: float) -> float:
    """Bernoulli KL ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`` for p, q in [0, 1]."""
    return kl_bernoulli_complements(p, 1.0 - p, q, 1.0 - q)


@njit(cache=True)
def kl_gaussian_scalar(p: float, q: float) -> float:
    """KL divergence of Gaussians with variance 1/4: ``(p - q)^2 / (2 * 1/4)``."""
    diff = p - q
    return 2.0 * diff * diff


@njit(cache=True)
def divergence_scalar(p: float, q: float, code: int) -> float:
    """``d(p, q)`` for the parametric codes (Bernoulli, Gaussian)."""
    if code == BERNOULLI:
        return kl_bernoulli_scalar(p, q)
    return kl_gaussian_scalar(p, q)


# The pair operations are inlined where they are called: a call that passes the laws
# array costs two atomic reference-count updates, per pair and per iteration.
@njit(cache=True, inline="always")
def pair_divergence(mu: float, q: float, q_c: float, code: int, laws: np.ndarray, i: int, j: int) -> float:
    """``d(mu, q)`` of pair ``(i, j)``, with ``q_c = 1 - q`` (used by the Bernoulli KL only)."""
    if code == BERNOULLI:
        return kl_bernoulli_complements(mu, 1.0 - mu, q, q_c)
    if code == GAUSSIAN:
        return kl_gaussian_scalar(mu, q)
    return kinf_kernel(laws, i, j, q)[0]


@njit(cache=True)
def _bernoulli_lower_root(mu, mu_c, w, eta):
    """``argmin_{x <= mu} w kl(mu, x) + eta x`` for ``w, eta > 0``: ``(x, 1 - x, dx/deta)``.

    ``x`` is the smaller root of ``eta x^2 - (w + eta) x + w mu = 0`` in rationalised
    form, ``1 - x`` the larger root of the reflected equation, each written so that
    nothing cancels: both are accurate to a few ulps even within an ulp of 0 or 1.
    """
    diff = w - eta
    s = math.sqrt(diff * diff + 4.0 * eta * w * mu_c)
    x = 2.0 * w * mu / ((w + eta) + s)
    if diff > 0.0:
        x_c = 2.0 * w * mu_c / (diff + s)
    elif diff < 0.0:
        x_c = (s - diff) / (2.0 * eta)
    else:
        x_c = math.sqrt(mu_c)
    if x >= mu:
        return mu, mu_c, 0.0
    if x > 0.0 and x_c > 0.0:
        second = mu_c / (x_c * x_c)
        if mu > 0.0:
            second += mu / (x * x)
        return x, x_c, -1.0 / (w * second)
    return x, x_c, 0.0


@njit(cache=True, inline="always")
def lower_point(mu: float, w: float, eta: float, code: int, laws: np.ndarray, i: int,
                j: int) -> tuple[float, float, float]:
    """``x(eta) = argmin_{x <= mu} w d(mu, x) + eta x`` for ``eta > 0``: ``(x, 1 - x, dx/deta)``.

    A pair of zero weight drops to 0 for free (Bernoulli, ``K_inf``); Gaussian
    weights must be positive.
    """
    if code == GAUSSIAN:
        x = mu - eta / (4.0 * w)
        return x, 1.0 - x, -1.0 / (4.0 * w)
    if w == 0.0:
        return 0.0, 1.0, 0.0
    if code == BERNOULLI:
        return _bernoulli_lower_root(mu, 1.0 - mu, w, eta)
    x, _, curvature = kinf_point(laws, i, j, law_mean(laws, i, j), -eta / w)
    return x, 1.0 - x, (-1.0 / (w * curvature) if curvature > 0.0 else 0.0)


@njit(cache=True, inline="always")
def upper_point(mu: float, w: float, eta: float, threshold: float, code: int, laws: np.ndarray, i: int,
                j: int) -> tuple[float, float, float]:
    """``y(eta) = max(th, argmin_{y >= mu} w d(mu, y) - eta y)`` for ``eta > 0``: ``(y, 1 - y, dy/deta)``.

    A pair of zero weight rises to 1 for free (Bernoulli, ``K_inf``). The Bernoulli
    point uses the symmetry ``d(mu, y) = d(1 - mu, 1 - y)``.
    """
    if code == GAUSSIAN:
        y = mu + eta / (4.0 * w)
        y_c = 1.0 - y
        dy = 1.0 / (4.0 * w)
    elif w == 0.0:
        y, y_c, dy = 1.0, 0.0, 0.0
    elif code == BERNOULLI:
        y_c, y, dy_c = _bernoulli_lower_root(1.0 - mu, mu, w, eta)
        dy = -dy_c
    else:
        y, _, curvature = kinf_point(laws, i, j, law_mean(laws, i, j), eta / w)
        y_c = 1.0 - y
        dy = 1.0 / (w * curvature) if curvature > 0.0 else 0.0
    if y < threshold:
        return threshold, 1.0 - threshold, 0.0
    return y, y_c, dy


@njit(cache=True)
def _value_slope(mu, y, code, laws, i, j):
    """``(d(mu, y), d'(mu, y))`` for Bernoulli or ``K_inf``."""
    if code == BERNOULLI:
        return kl_bernoulli_complements(mu, 1.0 - mu, y, 1.0 - y), (y - mu) / (y * (1.0 - y))
    value, slope, _ = kinf_kernel(laws, i, j, y)
    return value, slope


@njit(cache=True)
def level_point(mu: float, level: float, code: int, laws: np.ndarray, i: int, j: int) -> tuple[float, float]:
    """``(y, d'(mu, y))`` for the point ``y > mu`` with ``d(mu, y) = level > 0``.

    Newton on the convex increasing ``d(mu, .)`` on ``[mu, 1]``, safeguarded by
    bisection, from the local quadratic model ``d ~ (y - mu)^2 / (2 var)``.
    """
    if code == GAUSSIAN:
        y = mu + math.sqrt(0.5 * level)
        return y, 4.0 * (y - mu)
    if code == BERNOULLI:
        mean, variance = mu, mu * (1.0 - mu)
    else:
        mean = law_mean(laws, i, j)
        variance = law_variance(laws, i, j, mean)
    lo = mean
    hi = 1.0
    y = min(mean + math.sqrt(2.0 * variance * level), 0.5 * (mean + 1.0))
    for _ in range(_ROOT_MAX_ITER):
        value, slope = _value_slope(mu, y, code, laws, i, j)
        if value < level:
            lo = y
        else:
            hi = y
        candidate = y - (value - level) / slope if slope > 0.0 and math.isfinite(value) else math.nan
        if not (lo < candidate < hi):
            candidate = 0.5 * (lo + hi)
        if abs(candidate - y) <= 1e-15 * y or hi - lo <= 1e-15:
            y = candidate
            break
        y = candidate
    return y, _value_slope(mu, y, code, laws, i, j)[1]


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


def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> float | np.ndarray:
    """Bernoulli KL divergence ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``.

    Broadcasts like a numpy ufunc and returns a float for scalar input. ``0 ln 0 = 0``;
    ``+inf`` when ``q`` is 0 or 1 and ``p != q``. Arguments outside [0, 1] or NaN
    raise ValueError (nothing is clipped).
    """
    result = _kl_bernoulli_ufunc(_as_probabilities(p, "p"), _as_probabilities(q, "q"))
    return float(result) if np.ndim(result) == 0 else result


def kl_gaussian(p: ArrayLike, q: ArrayLike) -> float | np.ndarray:
    """KL divergence of two Gaussians of variance 1/4: ``d(p, q) = 2 (p - q)^2``.

    Broadcasts like a numpy ufunc; NaN raises ValueError. Any real means are allowed.
    """
    p_arr = np.asarray(p, dtype=np.float64)
    q_arr = np.asarray(q, dtype=np.float64)
    if np.isnan(p_arr).any() or np.isnan(q_arr).any():
        raise ValueError("kl_gaussian: arguments contain NaN")
    result = _kl_gaussian_ufunc(p_arr, q_arr)
    return float(result) if np.ndim(result) == 0 else result


def divergence_code(divergence: str) -> int:
    """The kernel code of a divergence name (any case); a ValueError names the valid ones."""
    if not isinstance(divergence, str) or divergence.lower() not in DIVERGENCES:
        raise ValueError(f"unknown divergence {divergence!r}; choose from {sorted(DIVERGENCES)}")
    return DIVERGENCES[divergence.lower()]


def pair_laws(means: np.ndarray, code: int, laws: str | Sequence = "beta") -> np.ndarray:
    """The ``laws`` array the kernels take: :func:`law_arrays` stacked (3 x N x M x K), K = 0 but for ``K_inf``.

    ``laws`` is used by ``K_inf`` only; see :func:`gbai.limits.reward_laws.law_arrays`.
    """
    if code == KINF:
        return np.stack(law_arrays(means, laws))
    return np.zeros((3,) + np.shape(means) + (0,))
