"""The paper as it states it, in plain NumPy: read it beside arXiv 2412.08031.

``model`` (Section II, the sets and ``H_id`` of Section V), ``instances`` (Tables
I, III, IV), ``rewards`` (reading note 8), ``bounds`` (eqs. (2)-(4) and the sets of
Algorithm 1), ``engine`` (rounds, reading note 1), ``css_lucb`` (Algorithm 1),
``action_elimination`` and ``feasibility_then_bai`` (the baselines of Section VI)
and ``theorem1`` (Section III). Nothing here imports numba or the rest of ``gbai``.
"""

from .action_elimination import ActionElimination
from .bounds import ConfidenceSets, EmpiricalBounds, confidence_radius, confidence_sets, empirical_bounds
from .css_lucb import CSSLUCB, css_lucb
from .engine import DEFAULT_MAX_SAMPLES, Decision, Policy, Round, RoundState, RunResult, StepEngine
from .feasibility_then_bai import FeasibilityThenBAI
from .instances import EXPERIMENT_TITLES, EXPERIMENTS, PAPER_DELTA, Experiment, table1_example
from .model import INFEASIBLE, NO_ANSWER, HardnessWarning, Instance, check_delta, load_instance
from .rewards import REWARD_MODELS, RewardStream, reward_variance
from .theorem1 import theorem1_bound, theorem1_constants

__all__ = ["ActionElimination", "CSSLUCB", "ConfidenceSets", "DEFAULT_MAX_SAMPLES", "Decision", "EXPERIMENT_TITLES",
           "EXPERIMENTS", "EmpiricalBounds", "Experiment", "FeasibilityThenBAI", "HardnessWarning", "INFEASIBLE",
           "Instance", "NO_ANSWER", "PAPER_DELTA", "Policy", "REWARD_MODELS", "Round", "RoundState", "RewardStream",
           "RunResult", "StepEngine", "check_delta", "confidence_radius", "confidence_sets", "css_lucb",
           "empirical_bounds", "load_instance", "reward_variance", "table1_example", "theorem1_bound",
           "theorem1_constants"]
