"""Information-theoretic lower bounds for constrained best-arm identification.

Two kinds of lower bound on the expected sample complexity are provided.

1. The *characteristic time* ``T*(mu)`` of Garivier & Kaufmann (2016, "Optimal best
   arm identification with fixed confidence", Theorem 1): every delta-correct
   algorithm satisfies ``E[tau] >= T*(mu) kl(delta, 1 - delta)`` with

       1 / T*(mu) = max_{w in simplex} inf_{lambda in Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij),

   where the simplex has one entry per arm-attribute pair (a sample is one draw of
   one pair, reading note 1) and ``Alt(mu)`` is the set of mean matrices whose
   answer differs from that of ``mu``. The inner infimum, the *best response*, is
   also the generalised likelihood ratio (GLR) statistic when ``w`` holds sample
   counts and ``mu`` empirical means, so it is implemented as a numba kernel that a
   compiled stopping rule can call every round.

2. The constant of Theorem 1 of the paper (Section III, proved in the appendix
   "PROOF OF LOWER BOUND"): ``E[tau] >= ln(1/(2.4 delta)) C(nu, mu_TH) H_id``.

The package is split by concept, each module depending only on those before it:

* :mod:`~gbai.limits.divergences`: the Bernoulli and Gaussian divergences;
* :mod:`~gbai.limits.reward_laws` and :mod:`~gbai.limits.pairs`: ``K_inf`` of a
  reward law (``divergence="kinf"``), the limit for algorithms that are
  delta-correct for every law on [0, 1], and one interface for all divergences;
* :mod:`~gbai.limits.overtake` and :mod:`~gbai.limits.alternatives`: the
  answer, the alternatives, the best response (also the GLR statistic);
* :mod:`~gbai.limits.characteristic_time`: ``T*`` and its certificate, with
  the scalable solver of :mod:`~gbai.limits.structured`;
* :mod:`~gbai.limits.theorem1`: the paper's Theorem 1.

The timing of these functions is in :func:`gbai.benchmark.benchmark_lower_bounds`.
Arm and attribute indices are 0-based, as everywhere in the package.
"""

from .alternatives import KIND_NAMES, BestResponse, alternative_values, best_response
from .characteristic_time import CharacteristicTime, characteristic_time, lower_bound_tstar
from .divergences import DIVERGENCES, kl_bernoulli, kl_bernoulli_scalar, kl_gaussian, kl_gaussian_scalar
from .reward_laws import RewardLaw, kinf, kinf_beta

__all__ = [
    "DIVERGENCES",
    "KIND_NAMES",
    "BestResponse",
    "RewardLaw",
    "CharacteristicTime",
    "alternative_values",
    "best_response",
    "characteristic_time",
    "kinf",
    "kinf_beta",
    "kl_bernoulli",
    "kl_bernoulli_scalar",
    "kl_gaussian",
    "kl_gaussian_scalar",
    "lower_bound_tstar",
]

