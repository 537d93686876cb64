"""Reward models and common random numbers.

Two reward models are available for an attribute with mean ``mu``:

* ``"beta"`` (default, reading note 8): ``Beta(1, 1/mu - 1)``, whose mean is exactly
  ``mu``. It is drawn by inversion, ``x = 1 - (1 - u)^(mu / (1 - mu))``; ``mu = 0``
  always gives 0 and ``mu = 1`` always gives 1. Its variance is
  ``mu^2 (1 - mu) / (1 + mu)``.
* ``"bernoulli"``: ``x = 1`` with probability ``mu``; variance ``mu (1 - mu)``.

**Common random numbers.** A run is driven by one seed. Through numpy's
:class:`~numpy.random.SeedSequence` the seed gives every arm-attribute pair
``(i, j)`` its own 64-bit key, and the ``k``-th sample of that pair (``k = 0, 1,
...``) is a pure function of the key and ``k``: the uniform variate is the SplitMix64
output for counter ``k``, then inverted through the reward model. So the ``k``-th
sample of a pair is the same whichever algorithm asks for it, and in whatever order
the pairs are pulled; two algorithms run on the same seed are compared on the same
draws (a paired comparison). The same compiled :func:`draw` serves the readable step
engine and the fast engine, so their rewards agree bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "BERNOULLI",
    "BETA",
    "REWARD_MODELS",
    "RewardStream",
    "draw",
    "pair_keys",
    "reward_code",
    "reward_exponents",
    "reward_variance",
    "seed_sequence",
    "uniform",
]

BETA = 0
BERNOULLI = 1
#: Reward model names and their codes in the compiled kernels.
REWARD_MODELS = {"beta": BETA, "bernoulli": BERNOULLI}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def reward_code(model: str) -> int:
    """The kernel code of a reward model name (``"beta"`` or ``"bernoulli"``)."""
    try:
        return REWARD_MODELS[model]
    except (KeyError, TypeError):
        raise ValueError(f"unknown reward model {model!r}; choose from {sorted(REWARD_MODELS)}") from None


def seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    """Turn a non-negative integer seed into a SeedSequence (a SeedSequence passes through)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return np.random.SeedSequence(int(seed))


def pair_keys(seed: int | np.random.SeedSequence, n_arms: int, n_attributes: int) -> np.ndarray:
    """The 64-bit stream key of every arm-attribute pair, an ``N x M`` uint64 matrix.

    Keys are read row by row from ``SeedSequence.generate_state``, whose output for a
    shorter request is a prefix of a longer one: with M fixed, arm ``i`` gets the same
    stream whatever the number of arms.
    """
    sequence = seed_sequence(seed)
    state = sequence.generate_state(n_arms * n_attributes, dtype=np.uint64)
    return state.reshape(n_arms, n_attributes)


def reward_exponents(means: np.ndarray) -> np.ndarray:
    """``mu / (1 - mu)``, the inversion exponent of ``Beta(1, 1/mu - 1)`` (``inf`` at ``mu = 1``)."""
    means = np.asarray(means, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(means < 1.0, means / np.where(means < 1.0, 1.0 - means, 1.0), np.inf)


def reward_variance(means: np.ndarray, model: str = "beta") -> np.ndarray:
    """The variance of a single reward with mean ``mu`` under ``model``."""
    means = np.asarray(means, dtype=np.float64)
    if reward_code(model) == BERNOULLI:
        return means * (1.0 - means)
    return means**2 * (1.0 - means) / (1.0 + means)


@njit(cache=True)
def uniform(key: np.uint64, k: int) -> float:
    """The ``k``-th uniform variate in [0, 1) of the stream with this key (SplitMix64)."""
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
    # The inverse CDF of reading note 8; 1 - u is exact for u on the 2**-53 grid, and
    # one pow is about twice as fast as the log1p/expm1 pair (absolute error ~1e-16).
    return 1.0 - (1.0 - u) ** exponent


@njit(cache=True)
def _draw_many(key, start, count, mean, exponent, model):
    out = np.empty(count)
    for k in range(count):
        out[k] = draw(key, start + k, mean, exponent, model)
    return out


class RewardStream:
    """The reward streams of one run: ``stream.sample(i, j, k)`` is the k-th reward of pair (i, j).

    Parameters
    ----------
    means:
        The N x M attribute means.
    seed:
        A non-negative integer or a :class:`numpy.random.SeedSequence`.
    model:
        ``"beta"`` (default) or ``"bernoulli"``.
    """

    def __init__(self, means: np.ndarray, seed: int | np.random.SeedSequence, model: str = "beta"):
        self.means = np.asarray(means, dtype=np.float64)
        if self.means.ndim != 2:
            raise ValueError("means must be an N x M matrix")
        self.model = model
        self.code = reward_code(model)
        self.keys = pair_keys(seed, *self.means.shape)
        self.exponents = reward_exponents(self.means)

    def sample(self, i: int, j: int, k: int) -> float:
        """The ``k``-th (0-based) reward of arm ``i``, attribute ``j``."""
        return float(draw(self.keys[i, j], k, self.means[i, j], self.exponents[i, j], self.code))

    def samples(self, i: int, j: int, count: int, start: int = 0) -> np.ndarray:
        """Rewards number ``start, ..., start + count - 1`` of pair ``(i, j)``."""
        if count < 0 or start < 0:
            raise ValueError("count and start must be non-negative")
        return _draw_many(self.keys[i, j], start, count, self.means[i, j], self.exponents[i, j], self.code)
