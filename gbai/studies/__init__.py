"""Studies: sweeps turned into the paper's figures and into our claims, above the runs.

* :mod:`gbai.studies.figures`: the paper's claim for each Section VI experiment
  (:func:`replicate_experiment`, notebooks 5-7);
* :mod:`gbai.studies.beyond`: every paper experiment with the algorithms beyond the
  paper (:func:`every_experiment`, :func:`error_check`, notebooks 10-12);
* :mod:`gbai.studies.published`: the published Figures 1 and 2, their verdicts and
  the analyses that explain them (notebook 9);
* :mod:`gbai.studies.results`: the headline results, recorded by the notebooks
  (:func:`record`; ``notebooks/_tools/run/publish.py`` gathers and quotes them);
* :mod:`gbai.studies.near_limit`: how close an algorithm comes to the limit, against
  the plain best-arm references of :data:`gbai.algorithms.REFERENCES` (notebook 13).

Studies import the runs, the registry and the plots; nothing in the layers below
imports them.
"""

from . import near_limit, published, results
from .beyond import EveryExperiment, error_check, every_experiment
from .figures import Replication, replicate_experiment
from .results import record, record_range

__all__ = ["EveryExperiment", "Replication", "error_check", "every_experiment", "near_limit", "published", "record",
           "record_range", "replicate_experiment", "results"]
