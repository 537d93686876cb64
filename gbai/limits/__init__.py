"""Information-theoretic limits of constrained best-arm identification.

The characteristic time ``T*(mu)`` of Garivier & Kaufmann (2016, Theorem 1): every
delta-correct algorithm has ``E[tau] >= T*(mu) kl(delta, 1 - delta)``. Modules, each
depending only on those before it: :mod:`~gbai.limits.reward_laws` (reward laws and
their ``K_inf``), :mod:`~gbai.limits.divergences` (Bernoulli, Gaussian and ``K_inf``
behind one code), :mod:`~gbai.limits.alternatives` (the answer, the alternatives, the
best response, also the GLR statistic) and :mod:`~gbai.limits.characteristic_time`
(``T*``, ``w*`` and their certificate). Arm and attribute indices are 0-based.
"""

from .alternatives import KIND_NAMES, BestResponse, alternative_values, best_response
from .characteristic_time import CharacteristicTime, characteristic_time, lower_bound_tstar
from .divergences import DIVERGENCES, kl_bernoulli, kl_bernoulli_scalar, kl_gaussian, kl_gaussian_scalar
from .reward_laws import RewardLaw, kinf, kinf_beta

__all__ = [
    "DIVERGENCES", "KIND_NAMES", "BestResponse", "CharacteristicTime", "RewardLaw", "alternative_values",
    "best_response", "characteristic_time", "kinf", "kinf_beta", "kl_bernoulli", "kl_bernoulli_scalar", "kl_gaussian",
    "kl_gaussian_scalar", "lower_bound_tstar",
]
