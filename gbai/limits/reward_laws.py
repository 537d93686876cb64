"""``K_inf``: the divergence of the non-parametric model of rewards in [0, 1].

An algorithm that is delta-correct for every law on [0, 1] faces the lower bound of
Garivier & Kaufmann (2016) with ``d(mu, x)`` replaced by ``K_inf(nu, x)``, the
smallest ``KL(nu, nu')`` over laws ``nu'`` on [0, 1] with mean beyond ``x`` (Honda &
Takemura 2010; Agrawal, Juneja & Glynn 2020, Section 2). ``K_inf >= kl(mean, x)``,
with equality for Bernoulli laws, so ``T*_Kinf <= T*_Bernoulli``. It is computed
through its one-dimensional concave dual (Honda & Takemura 2010, Theorem 8).
Laws are discrete (:class:`RewardLaw`): the simulated ``Beta(1, 1/mu - 1)`` by
tanh-sinh quadrature of its inverse CDF, or the empirical law of any sampler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

__all__ = ["RewardLaw", "kinf", "kinf_beta", "law_arrays"]

_NEWTON_MAX_ITER = 100
#: tanh-sinh step and half-width: 97 nodes, 86 whose atom stays inside (0, 1). Halving
#: the step changes K_inf by less than 1e-9 relative (tested).
_TANH_SINH_STEP = 1.0 / 12.0
_TANH_SINH_HALF_WIDTH = 4.0


# Kernels on the law of pair (i, j) in laws[0] (support), laws[1] (1 - support), laws[2] (probabilities).
@njit(cache=True)
def law_mean(laws: np.ndarray, i: int, j: int) -> float:
    """The mean of the law of pair ``(i, j)``."""
    total = 0.0
    for k in range(laws.shape[3]):
        total += laws[2, i, j, k] * laws[0, i, j, k]
    return total


@njit(cache=True)
def law_variance(laws: np.ndarray, i: int, j: int, mean: float) -> float:
    """The variance of the law of pair ``(i, j)``, whose mean is ``mean``."""
    total = 0.0
    for k in range(laws.shape[3]):
        total += laws[2, i, j, k] * (laws[0, i, j, k] - mean) ** 2
    return total


@njit(cache=True)
def kinf_kernel(laws: np.ndarray, i: int, j: int, x: float) -> tuple[float, float, float]:
    """``(K_inf(nu, x), dK/dx, d2K/dx2)`` for the law ``nu`` of pair ``(i, j)``.

    By the dual in ``t`` in [0, 1] (derivation notes, "K_inf").

    The curvature is NaN at ``x = mean``; ``x`` at 0 or 1 beyond the support's reach
    gives ``(inf, +-inf, nan)``.
    """
    mean = law_mean(laws, i, j)
    if x == mean:
        return 0.0, 0.0, math.nan
    up = x > mean
    scale = (1.0 - x) if up else x
    if scale <= 0.0:
        for k in range(laws.shape[3]):
            if laws[2, i, j, k] > 0.0 and (laws[1, i, j, k] if up else laws[0, i, j, k]) > 0.0:
                return math.inf, (math.inf if up else -math.inf), math.nan
        return 0.0, 0.0, math.nan
    # t = 1 is optimal when E[1/R] <= 1 (which needs R > 0 on the support).
    inv_mean = 0.0
    for k in range(laws.shape[3]):
        if laws[2, i, j, k] > 0.0:
            r = (laws[1, i, j, k] if up else laws[0, i, j, k]) / scale
            if r <= 0.0:
                inv_mean = math.inf
                break
            inv_mean += laws[2, i, j, k] / r
    t = 1.0
    if not inv_mean <= 1.0:
        lo = 0.0
        hi = 1.0
        t = 0.5
        for _ in range(_NEWTON_MAX_ITER):
            d1 = 0.0
            d2 = 0.0
            for k in range(laws.shape[3]):
                if laws[2, i, j, k] > 0.0:
                    r = (laws[1, i, j, k] if up else laws[0, i, j, k]) / scale
                    denominator = (1.0 - t) + t * r
                    if denominator <= 0.0:
                        d1 = -math.inf
                        break
                    ratio = (r - 1.0) / denominator
                    d1 += laws[2, i, j, k] * ratio
                    d2 -= laws[2, i, j, k] * ratio * ratio
            if d1 > 0.0:
                lo = t
            else:
                hi = t
            step = -d1 / d2 if (d2 < 0.0 and math.isfinite(d1)) else math.nan
            candidate = t + step
            if not (lo < candidate < hi):
                candidate = 0.5 * (lo + hi)
            if abs(candidate - t) <= 1e-16 * max(t, 1e-300) or hi - lo <= 1e-16 * hi:
                t = candidate
                break
            t = candidate
        # An atom with R = 0 keeps the optimum below 1, perhaps by less than an ulp:
        # its term p log(1 - t) must stay finite.
        t = min(t, 1.0 - 1e-16)
    value = 0.0
    inv_d = 0.0
    inv_d2 = 0.0
    z2_d2 = 0.0
    lam = (t / (1.0 - x)) if up else (-t / x)
    for k in range(laws.shape[3]):
        if laws[2, i, j, k] > 0.0:
            r = (laws[1, i, j, k] if up else laws[0, i, j, k]) / scale
            arg = t * (r - 1.0)
            # D = (1 - t) + t R keeps its digits when D is tiny, log1p(arg) near D = 1.
            denominator = (1.0 - t) + t * r
            value += laws[2, i, j, k] * (math.log1p(arg) if arg > -0.5 else math.log(denominator))
            inv_d += laws[2, i, j, k] * r / denominator
            inv_d2 += laws[2, i, j, k] / (denominator * denominator)
            z = laws[0, i, j, k] - x
            z2_d2 += laws[2, i, j, k] * z * z / (denominator * denominator)
    slope = lam * inv_d
    if t < 1.0:
        curvature = inv_d2 / z2_d2 if z2_d2 > 0.0 else math.nan
    else:
        curvature = 1.0 / (scale * scale)
    return max(value, 0.0), slope, curvature


@njit(cache=True)
def kinf_point(laws: np.ndarray, i: int, j: int, mean: float, slope: float) -> tuple[float, float, float]:
    """``(z, K_inf(nu, z), d2K/dz2)`` at the point with ``dK_inf/dz = slope``.

    ``z < mean`` for a negative slope, ``z > mean`` for a positive one (``K_inf`` is
    convex with slope 0 at the mean): Newton on the slope, safeguarded by bisection.
    """
    if slope == 0.0:
        return mean, 0.0, math.nan
    lo, hi = (0.0, mean) if slope < 0.0 else (mean, 1.0)
    # Start from the local quadratic model K ~ (z - m)^2 / (2 var).
    z = mean + slope * law_variance(laws, i, j, mean)
    if not (lo < z < hi):
        z = 0.5 * (lo + hi)
    value, s, curvature = kinf_kernel(laws, i, j, z)
    for _ in range(2 * _NEWTON_MAX_ITER):
        if s == slope:
            break
        if s < slope:
            lo = z
        else:
            hi = z
        candidate = z - (s - slope) / curvature if curvature > 0.0 else math.nan
        if not (lo < candidate < hi):
            candidate = 0.5 * (lo + hi)
        if abs(candidate - z) <= 1e-15 * max(abs(z), 1e-300):
            break
        z = candidate
        value, s, curvature = kinf_kernel(laws, i, j, z)
    return z, value, curvature


def _tanh_sinh_uniform():
    """Nodes ``u`` in (0, 1), their complements ``1 - u`` and weights for E over U(0, 1)."""
    steps = np.arange(-_TANH_SINH_HALF_WIDTH, _TANH_SINH_HALF_WIDTH + 1e-12, _TANH_SINH_STEP)
    g = 0.5 * math.pi * np.sinh(steps)
    u = 0.5 * (1.0 + np.tanh(g))
    u_c = 1.0 / (1.0 + np.exp(2.0 * g))  # 1 - u without cancellation near u = 1
    weights = _TANH_SINH_STEP * 0.5 * math.pi * np.cosh(steps) * 2.0 * u * u_c
    keep = weights > 0.0
    return u[keep], u_c[keep], weights[keep] / weights[keep].sum()


@dataclass(frozen=True, eq=False)
class RewardLaw:
    """A discrete reward law on [0, 1]: ``support``, ``complement = 1 - support``, ``probabilities``.

    The complements are stored apart so that atoms within an ulp of 1 keep their accuracy.
    """

    support: np.ndarray
    complement: np.ndarray
    probabilities: np.ndarray

    def __post_init__(self):
        for name in ("support", "complement", "probabilities"):
            array = np.ascontiguousarray(getattr(self, name), dtype=np.float64)
            if array.ndim != 1 or array.size == 0:
                raise ValueError(f"RewardLaw.{name} must be a non-empty 1-D array")
            if not np.isfinite(array).all() or (array < 0.0).any() or (array > 1.0).any():
                raise ValueError(f"RewardLaw.{name} must lie in [0, 1]")
            object.__setattr__(self, name, array)
        if not (self.support.shape == self.complement.shape == self.probabilities.shape):
            raise ValueError("RewardLaw: support, complement and probabilities differ in length")
        if abs(self.probabilities.sum() - 1.0) > 1e-9:
            raise ValueError("RewardLaw: probabilities must sum to 1")

    @classmethod
    def discrete(cls, support: ArrayLike, probabilities: ArrayLike) -> "RewardLaw":
        """A law with the given atoms in [0, 1] and probabilities summing to 1."""
        support = np.asarray(support, dtype=np.float64)
        return cls(support, 1.0 - support, np.asarray(probabilities, dtype=np.float64))

    @classmethod
    def bernoulli(cls, mean: float) -> "RewardLaw":
        """Bernoulli(mean): atoms 0 and 1."""
        mean = _check_unit(mean, "a reward mean")
        return cls(np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([1.0 - mean, mean]))

    @classmethod
    def beta(cls, mean: float) -> "RewardLaw":
        """``Beta(1, 1/mean - 1)`` (reading note 8) by tanh-sinh quadrature in the uniform ``u``.

        The atoms are ``x(u) = 1 - (1-u)^(mean/(1-mean))`` at the nodes, with ``1 - x``
        computed directly; their mean equals ``mean`` to about 1e-15. Means 0 and 1
        are point masses.
        """
        mean = _check_unit(mean, "a reward mean")
        if mean in (0.0, 1.0):
            return cls(np.array([mean]), np.array([1.0 - mean]), np.array([1.0]))
        _, u_c, weights = _tanh_sinh_uniform()
        exponent = mean / (1.0 - mean)
        complement = np.exp(exponent * np.log(u_c))
        support = -np.expm1(exponent * np.log(u_c))
        # Atoms that underflow onto 0 or 1 carry weights below 1e-30: dropping them
        # keeps the support inside (0, 1), as for the Beta law itself.
        keep = (complement > 0.0) & (support > 0.0)
        weights = weights[keep] / weights[keep].sum()
        return cls(support[keep], complement[keep], weights)

    @classmethod
    def from_sampler(cls, sampler: Callable[[int], ArrayLike], n_samples: int = 100_000) -> "RewardLaw":
        """The empirical law of ``sampler(n_samples)`` (an approximation of the sampler's law)."""
        if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 1):
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        draws = np.asarray(sampler(int(n_samples)), dtype=np.float64).ravel()
        if draws.size != n_samples:
            raise ValueError(f"the sampler returned {draws.size} draws, expected {n_samples}")
        values, counts = np.unique(draws, return_counts=True)
        return cls.discrete(values, counts / counts.sum())

    def as_laws(self) -> np.ndarray:
        """The law as the 3 x 1 x 1 x K ``laws`` array of the kernels (a single pair)."""
        return np.stack([self.support, self.complement, self.probabilities])[:, None, None, :].copy()

    @property
    def mean(self) -> float:
        """The mean of the law."""
        return float(law_mean(self.as_laws(), 0, 0))

    def kinf(self, x: float) -> float:
        """``K_inf(self, x)`` for ``x`` in [0, 1] (0 at the mean)."""
        return float(kinf_kernel(self.as_laws(), 0, 0, _check_unit(x, "K_inf's x"))[0])

    def kinf_slope(self, x: float) -> float:
        """``dK_inf(self, x)/dx`` (envelope theorem)."""
        return float(kinf_kernel(self.as_laws(), 0, 0, _check_unit(x, "K_inf's x"))[1])


def _check_unit(value, name: str) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def kinf(law: RewardLaw, x: float) -> float:
    """``K_inf(law, x)`` (Honda & Takemura 2010) for a :class:`RewardLaw` and ``x`` in [0, 1]."""
    if not isinstance(law, RewardLaw):
        raise ValueError(f"expected a RewardLaw, got {type(law).__name__}")
    return law.kinf(x)


def kinf_beta(mean: float, x: float) -> float:
    """``K_inf`` of the simulated ``Beta(1, 1/mean - 1)`` law at ``x``."""
    return RewardLaw.beta(mean).kinf(x)


def law_arrays(means: ArrayLike, laws: str | Sequence = "beta") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The laws of an N x M instance as ``(support, complement, probabilities)`` arrays (N, M, K).

    ``laws`` is ``"beta"`` (the simulated ``Beta(1, 1/mu - 1)`` of each mean),
    ``"bernoulli"``, or an N x M nested sequence of :class:`RewardLaw` whose means
    match ``means`` to 1e-9. Shorter supports are padded with atoms of probability 0.
    """
    means = np.asarray(means, dtype=np.float64)
    n, m = means.shape
    if isinstance(laws, str):
        if laws not in ("beta", "bernoulli"):
            raise ValueError(f"laws must be 'beta', 'bernoulli' or an N x M grid of RewardLaw, got {laws!r}")
        make = RewardLaw.beta if laws == "beta" else RewardLaw.bernoulli
        grid = [[make(means[i, j]) for j in range(m)] for i in range(n)]
    else:
        grid = laws
        if len(grid) != n or any(len(row) != m for row in grid):
            raise ValueError(f"laws must be an {n} x {m} grid of RewardLaw")
        for (i, j), mean in np.ndenumerate(means):
            if not isinstance(grid[i][j], RewardLaw):
                raise ValueError(f"laws[{i}][{j}] is not a RewardLaw")
            if abs(grid[i][j].mean - mean) > 1e-9:
                raise ValueError(f"laws[{i}][{j}] has mean {grid[i][j].mean!r}, the instance says {float(mean)!r}")
    size = max(law.support.size for row in grid for law in row)
    arrays = (np.zeros((n, m, size)), np.ones((n, m, size)), np.zeros((n, m, size)))
    for (i, j), _ in np.ndenumerate(means):
        law = grid[i][j]
        for array, values in zip(arrays, (law.support, law.complement, law.probabilities)):
            array[i, j, :values.size] = values
    return arrays
