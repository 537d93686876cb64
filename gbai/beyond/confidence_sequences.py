"""Published time-uniform deviation bounds (notebook 11, section 1).

* Howard, Ramdas, McAuliffe & Sekhon (2021, Ann. Statist. 49(2)), Theorem 1 with the
  polynomial-stitched boundary of their eq. (10), evaluated at ``max(V_t, m)`` so that
  it holds from the first sample on (:func:`stitched`, :func:`stitched_boundary`,
  :func:`stitched_radius`; their defaults ``eta = 2``, ``s = 1.4``).
  CSS-LUCB+ uses them.
* Kaufmann & Koolen (2021, JMLR 22(246)), Theorem 7: the calibration function ``T(x)``
  of a threshold on sums of KL terms (:func:`calibration`, :func:`glr_threshold`). No
  algorithm of the package uses it: LMA-GLR stops with the mixtures of
  :mod:`gbai.beyond.mixtures`, which pay for the unknown means only what the data
  at hand cost.

Both hold for any rewards in [0, 1]: Hoeffding's lemma for the first (notebook 11),
and for the second the Bernoulli likelihood ratios of its proof, whose expectation is
at most 1 for any law on [0, 1] (the ratio is convex in the reward).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import lambertw, zeta

__all__ = [
    "ETA",
    "STITCHING_S",
    "calibration",
    "glr_threshold",
    "stitched",
    "stitched_boundary",
    "stitched_log_constant",
    "stitched_radius",
]

#: Epoch spacing and the exponent of the polynomial stitching (Howard et al.'s defaults).
ETA = 2.0
STITCHING_S = 1.4
K1 = (ETA**0.25 + ETA**-0.25) / math.sqrt(2.0)
K2 = (math.sqrt(ETA) + 1.0) / 2.0


def stitched_log_constant(alpha: float, s: float = STITCHING_S, eta: float = ETA) -> float:
    """``ln(zeta(s) / (alpha (ln eta)^s))``, the part of ``l(v)`` that does not depend on ``v``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return math.log(float(zeta(s)) / (alpha * math.log(eta) ** s))


@njit(cache=True)
def stitched(v, v_min, c, log_constant, k1, k2, s, eta):
    """The polynomial-stitched boundary at intrinsic time ``v`` (held at ``v_min`` below it), compiled.

    ``u(v) = sqrt(k1^2 v l(v) + (k2 c l(v))^2) + k2 c l(v)`` with
    ``l(v) = s ln ln(eta v / v_min) + log_constant``, at ``max(v, v_min)`` (Howard et
    al. 2021, eq. (10) and Theorem 1; notebook 11, section 1). ``log_constant`` is
    :func:`stitched_log_constant`; :func:`stitched_boundary` is the checked version of
    this function.
    """
    use_v = max(v, v_min)
    ell = s * math.log(math.log(eta * use_v / v_min)) + log_constant
    term = k2 * c * ell
    return math.sqrt(k1 * k1 * use_v * ell + term * term) + term


def stitched_boundary(
    v: float, alpha: float, v_min: float = 1.0, c: float = 0.0, s: float = STITCHING_S, eta: float = ETA
) -> float:
    """Howard et al.'s polynomial-stitched boundary ``u(v)`` (eq. (10)) with crossing probability ``alpha``.

    Returns ``u(max(v, v_min))``, the boundary of Howard et al.'s Theorem 1, which
    holds at every time (not only once ``v >= v_min``).
    """
    if v_min <= 0.0 or c < 0.0 or s <= 1.0 or eta <= 1.0:
        raise ValueError("need v_min > 0, c >= 0, s > 1 and eta > 1")
    k1 = (eta**0.25 + eta**-0.25) / math.sqrt(2.0)
    k2 = (math.sqrt(eta) + 1.0) / 2.0
    return float(stitched(float(v), float(v_min), float(c), stitched_log_constant(alpha, s, eta), k1, k2, s, eta))


@njit(cache=True)
def stitched_radius(count: float, variance: float, log_constant: float) -> float:
    """Radius of a mean of ``count`` observations with per-observation variance proxy ``variance``.

    ``u(variance * count) / count`` with ``v_min = variance`` (valid from one
    observation on), ``c = 0``, ``eta = 2``, ``s = 1.4``; ``log_constant`` is
    :func:`stitched_log_constant` of the one-sided crossing probability.
    """
    return stitched(variance * count, variance, 0.0, log_constant, K1, K2, STITCHING_S, ETA) / count


def _h_inverse(y: float) -> float:
    """Inverse of ``h(u) = u - ln u`` on ``u >= 1`` (the lower Lambert-W branch).

    ``h(1) = 1`` is the branch point, where the Lambert-W evaluation is undefined.
    """
    if y <= 1.0:
        return 1.0
    return float(np.real(-lambertw(-math.exp(-y), k=-1)))


def calibration(x: float) -> float:
    """Kaufmann & Koolen's calibration function ``T(x)`` (Theorem 7), for ``x >= 0``.

    ``h~_z(x)`` is the minimum over ``l`` in ``(1, z]`` of ``l (x - ln ln l)``: the free
    minimiser ``l* = exp(1/h^{-1}(x))`` gives ``exp(1/h^{-1}(x)) h^{-1}(x)`` and the end
    point ``l = z`` gives ``z (x - ln ln z)``. We switch to the first form for
    ``x >= h^{-1}(1/ln z)`` (about 3.80 for ``z = 3/2``), as implementations by the
    authors' co-workers do; the free minimiser is admissible from ``h(1/ln z)`` (about
    1.56) on, so in between this takes the end-point value, which is at least the
    minimum. The threshold is therefore valid under either reading of the definition,
    and at most slightly conservative.
    """
    if not x >= 0.0:
        raise ValueError(f"the calibration function needs x >= 0, got {x!r}")
    z = 1.5
    argument = (_h_inverse(1.0 + x) + math.log(2.0 * float(zeta(2.0)))) / 2.0
    if argument >= _h_inverse(1.0 / math.log(z)):
        u = _h_inverse(argument)
        tilde = math.exp(1.0 / u) * u
    else:
        tilde = z * (argument - math.log(math.log(z)))
    return 2.0 * tilde


def glr_threshold(counts: np.ndarray, x: float) -> float:
    """``sum_p 3 ln(1 + ln N_p) + |S| T(x / |S|)`` for the counts ``N_p`` of the pairs in ``S``."""
    counts = np.asarray(counts, dtype=np.float64).ravel()
    if counts.size == 0 or (counts < 1).any():
        raise ValueError("every pair of S needs at least one sample")
    return float(np.sum(3.0 * np.log1p(np.log(counts))) + counts.size * calibration(x / counts.size))
