"""The compiled draw of :mod:`gbai.paper.rewards`: the same SplitMix64 stream and inversion, bit for bit."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..paper.rewards import BERNOULLI

__all__ = ["draw", "uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def uniform(key: np.uint64, k: int) -> float:
    """The ``k``-th uniform of the stream with this key (:func:`gbai.paper.rewards.uniform`)."""
    z = key + np.uint64(k + 1) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * _TO_UNIT


@njit(cache=True)
def draw(key: np.uint64, k: int, mean: float, exponent: float, model: int) -> float:
    """The ``k``-th reward of a pair with this key and mean (``exponent = mu/(1-mu)``)."""
    u = uniform(key, k)
    if model == BERNOULLI:
        return 1.0 if u < mean else 0.0
    if mean <= 0.0:
        return 0.0
    if mean >= 1.0:
        return 1.0
    return 1.0 - (1.0 - u) ** exponent
