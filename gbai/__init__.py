"""gbai: constrained best arm identification in grouped bandits.

A reproduction package for *Constrained Best Arm Identification in Grouped Bandits*
(Dharod, Sravani, Heda, Moharir; arXiv 2412.08031), in layers by who reads them:

* :mod:`gbai.paper`: the paper in plain NumPy (model, instances, bounds, the step
  engine, CSS-LUCB and the two baselines, Theorem 1);
* :mod:`gbai.fast`: the same algorithms compiled, tested run for run against it;
* :mod:`gbai.limits`: divergences, the alternatives and the characteristic time ``T*``;
* :mod:`gbai.beyond`: algorithms beyond the paper (CSS-LUCB+, LMA-GLR, Betting-GBAI) and
  the plain best-arm references (Track-and-Stop, Top Two);
  :data:`RECOMMENDED` names the one the package recommends;
* :mod:`gbai.asrun`: the authors' as-run variants and the published figures' instances;
* the registry (:mod:`gbai.algorithms`), runs and sweeps (:mod:`gbai.simulation`,
  :mod:`gbai.experiments`) with one result cache (:mod:`gbai.cache`), and plots
  (:mod:`gbai.plotting`, drawing only);
* :mod:`gbai.studies`: sweeps turned into figures and claims (the paper's
  experiments, the published figures, the near-limit study), imported on its own:
  ``import gbai`` does not load it (nor scipy.stats).
"""

from .algorithms import ALGORITHMS, PAPER_ALGORITHMS, RECOMMENDED, Algorithm, get_algorithm, resolve
from .asrun.instances import PUBLISHED_EXPERIMENTS
from .beyond.betting import BettingGBAI
from .beyond.css_lucb_plus import CSSLUCBPlus
from .beyond.lma_glr import LMAGLR
from .cache import default_cache_dir
from .experiments import (
    error_rates,
    experiment_grid,
    get_experiment,
    paired_comparison,
    paper_instance,
    stored_limit,
    summarize,
    sweep_experiment,
)
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
from .limits.characteristic_time import matching_divergence
from .paper import (
    CSSLUCB,
    DEFAULT_MAX_SAMPLES,
    EXPERIMENT_TITLES,
    EXPERIMENTS,
    INFEASIBLE,
    NO_ANSWER,
    PAPER_DELTA,
    REWARD_MODELS,
    ActionElimination,
    ConfidenceSets,
    Decision,
    EmpiricalBounds,
    Experiment,
    FeasibilityThenBAI,
    HardnessWarning,
    Instance,
    Policy,
    RewardStream,
    Round,
    RoundState,
    RunResult,
    StepEngine,
    check_delta,
    confidence_radius,
    confidence_sets,
    empirical_bounds,
    load_instance,
    reward_variance,
    table1_example,
    theorem1_bound,
    theorem1_constants,
)
from .paper.model import CRASHED
from .simulation import code_fingerprint, run, run_deltas, run_seed, sweep
from .version import __version__  # noqa: F401 (gbai.__version__, read by pip and the book)

__all__ = [
    "ALGORITHMS", "ActionElimination", "Algorithm", "BestResponse", "BettingGBAI", "CRASHED", "CSSLUCB", "CSSLUCBPlus",
    "CharacteristicTime", "ConfidenceSets", "DEFAULT_MAX_SAMPLES", "Decision", "EXPERIMENT_TITLES", "EXPERIMENTS",
    "EmpiricalBounds", "Experiment", "FeasibilityThenBAI", "HardnessWarning", "INFEASIBLE", "Instance", "LMAGLR",
    "NO_ANSWER", "PAPER_ALGORITHMS", "PAPER_DELTA", "PUBLISHED_EXPERIMENTS", "Policy", "RECOMMENDED", "REWARD_MODELS",
    "RewardLaw", "RewardStream", "Round", "RoundState", "RunResult", "StepEngine", "alternative_values",
    "best_response", "characteristic_time", "check_delta", "code_fingerprint", "confidence_radius", "confidence_sets",
    "default_cache_dir", "empirical_bounds", "error_rates", "experiment_grid", "get_algorithm", "get_experiment",
    "kinf", "kl_bernoulli", "load_instance", "lower_bound_tstar", "matching_divergence", "paired_comparison",
    "paper_instance", "resolve", "reward_variance", "run", "run_deltas", "run_seed", "stored_limit", "summarize",
    "sweep", "sweep_experiment", "table1_example", "theorem1_bound", "theorem1_constants",
]
