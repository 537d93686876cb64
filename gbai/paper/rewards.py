"""Rewards (reading note 8) with common random numbers.

An attribute with mean ``mu`` draws ``Beta(1, 1/mu - 1)`` by default, by inversion
``x = 1 - (1 - u)^(mu/(1 - mu))`` (``mu = 0`` always gives 0, ``mu = 1`` always 1),
or Bernoulli(``mu``). A seed gives every pair ``(i, j)`` a 64-bit key
(:func:`pair_keys`), and the uniform ``u`` of its ``k``-th reward is the SplitMix64
output for counter ``k``: the ``k``-th reward of a pair is the same whichever
algorithm asks for it and in whatever order, so runs on one seed are paired.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BERNOULLI", "BETA", "REWARD_MODELS", "RewardStream", "pair_keys", "reward_code", "reward_exponents",
           "reward_variance", "seed_sequence", "uniform"]

BETA = 0
BERNOULLI = 1
#: Reward model names and their codes in the compiled engine.
REWARD_MODELS = {"beta": BETA, "bernoulli": BERNOULLI}

_MASK = (1 << 64) - 1
_GOLDEN, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def reward_code(model: str) -> int:
    """The code of a reward model name (``"beta"`` or ``"bernoulli"``)."""
    try:
        return REWARD_MODELS[model]
    except (KeyError, TypeError):
        raise ValueError(f"unknown reward model {model!r}; choose from {sorted(REWARD_MODELS)}") from None


def seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    """A SeedSequence from a non-negative integer seed (a SeedSequence passes through)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def pair_keys(seed: int | np.random.SeedSequence, n_arms: int, n_attributes: int) -> np.ndarray:
    """The stream key of every pair, an ``N x M`` uint64 matrix, read row by row.

    ``generate_state`` returns prefixes of one sequence, so with M fixed arm ``i``
    keeps its stream whatever the number of arms.
    """
    state = seed_sequence(seed).generate_state(n_arms * n_attributes, dtype=np.uint64)
    return state.reshape(n_arms, n_attributes)


def reward_exponents(means: np.ndarray) -> np.ndarray:
    """``mu / (1 - mu)``, the inversion exponent of ``Beta(1, 1/mu - 1)`` (``inf`` at ``mu = 1``)."""
    means = np.asarray(means, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(means < 1.0, means / np.where(means < 1.0, 1.0 - means, 1.0), np.inf)


def reward_variance(means: np.ndarray, model: str = "beta") -> np.ndarray:
    """The variance of one reward with mean ``mu``: ``mu^2 (1-mu)/(1+mu)`` (Beta) or ``mu (1-mu)``."""
    means = np.asarray(means, dtype=np.float64)
    if reward_code(model) == BERNOULLI:
        return means * (1.0 - means)
    return means**2 * (1.0 - means) / (1.0 + means)


def uniform(key: int, k: int) -> float:
    """The ``k``-th uniform in [0, 1) of the stream with this key (SplitMix64, 53 bits)."""
    z = (int(key) + (k + 1) * _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    z ^= z >> 31
    return (z >> 11) * 2.0**-53


class RewardStream:
    """The rewards of one run: ``stream.sample(i, j, k)`` is the ``k``-th reward of pair ``(i, j)``."""

    def __init__(self, means: np.ndarray, seed: int | np.random.SeedSequence, model: str = "beta"):
        self.means = np.asarray(means, dtype=np.float64)
        if self.means.ndim != 2:
            raise ValueError("means must be an N x M matrix")
        self.model = model
        self.code = reward_code(model)
        self.keys = pair_keys(seed, *self.means.shape)
        self.exponents = reward_exponents(self.means)
        self._pairs = [[(int(key), float(mean), float(exponent)) for key, mean, exponent in zip(*row)]
                       for row in zip(self.keys, self.means, self.exponents)]  # Python numbers: fast to read

    def sample(self, i: int, j: int, k: int) -> float:
        """The ``k``-th (0-based) reward of arm ``i``, attribute ``j``."""
        key, mean, exponent = self._pairs[i][j]
        u = uniform(key, k)
        if self.code == BERNOULLI:
            return 1.0 if u < mean else 0.0
        if mean <= 0.0 or mean >= 1.0:
            return mean
        return 1.0 - (1.0 - u) ** exponent

    def samples(self, i: int, j: int, count: int, start: int = 0) -> np.ndarray:
        """Rewards ``start, ..., start + count - 1`` of pair ``(i, j)``."""
        if count < 0 or start < 0:
            raise ValueError("count and start must be non-negative")
        return np.array([self.sample(i, j, k) for k in range(start, start + count)], dtype=np.float64)
