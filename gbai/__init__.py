"""gbai: constrained best arm identification in grouped bandits.

A reproduction package for *Constrained Best Arm Identification in Grouped Bandits*
(Dharod, Sravani, Heda, Moharir; arXiv 2412.08031). The public API:

* the model: :class:`Instance`, :func:`load_instance`, the paper's instances
  (:func:`paper_instance`, :data:`EXPERIMENTS`);
* rewards with common random numbers: :class:`RewardStream`;
* the paper's algorithms as step-engine policies (:class:`CSSLUCB`,
  :class:`ActionElimination`, :class:`FeasibilityThenBAI`) and as compiled kernels;
* the step engine (:class:`StepEngine`, :class:`RoundState`, :class:`Decision`)
  for round-by-round study and custom policies;
* :func:`run` and :func:`sweep` (cached, parallel) with :func:`summarize`,
  :func:`sweep_experiment` and :func:`paired_comparison`;
* the published figures (issue 9): the authors' as-run settings as algorithm
  options and presets (``css-lucb:as=fig1``, ``ae:as=published``, ...), their
  instances (:data:`PUBLISHED_EXPERIMENTS`) and the published points with the
  verdict statistics (:mod:`gbai.published`);
* lower bounds: Theorem 1 (:func:`theorem1_bound`), the most confusing alternative
  (:func:`best_response`, also the GLR statistic) and the characteristic time
  (:func:`characteristic_time`, :func:`lower_bound_tstar`).
"""

__version__ = "0.1.0"

from .algorithms import ALGORITHMS, PAPER_ALGORITHMS, Algorithm, get_algorithm, resolve
from .algorithms.action_elimination import ActionElimination
from .algorithms.betting import BettingGBAI
from .algorithms.css_lucb import CSSLUCB
from .algorithms.css_lucb_plus import CSSLUCBPlus
from .algorithms.feasibility_then_bai import FeasibilityThenBAI
from .algorithms.lma_glr import LMAGLR
from .confidence import ConfidenceSets, EmpiricalBounds, confidence_radius, confidence_sets, empirical_bounds
from .engine import DEFAULT_MAX_SAMPLES, Decision, Policy, Round, RoundState, RunResult, StepEngine
from .limits import (
    BestResponse,
    CharacteristicTime,
    RewardLaw,
    alternative_values,
    best_response,
    characteristic_time,
    kinf,
    kl_bernoulli,
    lower_bound_tstar,
)
from .theorem1 import theorem1_bound, theorem1_constants
from .instances import (
    EXPERIMENTS,
    PAPER_DELTA,
    PUBLISHED_EXPERIMENTS,
    Experiment,
    experiment_grid,
    get_experiment,
    paper_instance,
    table1_example,
)
from .model import CRASHED, INFEASIBLE, NO_ANSWER, HardnessWarning, Instance, check_delta, load_instance
from . import published
from .rewards import REWARD_MODELS, RewardStream, reward_variance
from .simulation import code_fingerprint, default_cache_dir, run, run_seed, summarize, sweep
from .experiments import paired_comparison, stored_limit, sweep_experiment
from .limits.characteristic_time import matching_divergence

__all__ = [
    "ALGORITHMS",
    "BestResponse",
    "BettingGBAI",
    "CSSLUCBPlus",
    "LMAGLR",
    "CharacteristicTime",
    "RewardLaw",
    "alternative_values",
    "kinf",
    "matching_divergence",
    "best_response",
    "characteristic_time",
    "kl_bernoulli",
    "lower_bound_tstar",
    "paired_comparison",
    "stored_limit",
    "sweep_experiment",
    "theorem1_bound",
    "theorem1_constants",
    "ActionElimination",
    "Algorithm",
    "CRASHED",
    "PUBLISHED_EXPERIMENTS",
    "get_experiment",
    "published",
    "CSSLUCB",
    "ConfidenceSets",
    "DEFAULT_MAX_SAMPLES",
    "Decision",
    "EXPERIMENTS",
    "EmpiricalBounds",
    "Experiment",
    "FeasibilityThenBAI",
    "HardnessWarning",
    "INFEASIBLE",
    "Instance",
    "NO_ANSWER",
    "PAPER_ALGORITHMS",
    "PAPER_DELTA",
    "Policy",
    "REWARD_MODELS",
    "RewardStream",
    "Round",
    "RoundState",
    "RunResult",
    "StepEngine",
    "check_delta",
    "code_fingerprint",
    "confidence_radius",
    "confidence_sets",
    "default_cache_dir",
    "empirical_bounds",
    "experiment_grid",
    "get_algorithm",
    "load_instance",
    "paper_instance",
    "resolve",
    "reward_variance",
    "run",
    "run_seed",
    "summarize",
    "sweep",
    "table1_example",
]
