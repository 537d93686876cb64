"""Every paper experiment with an algorithm beyond the paper: the study notebooks 10 to 12 share.

Each of those notebooks runs its algorithm on every instance of experiments 1 to 3
and of the varying-N and varying-M tables, beside CSS-LUCB and CSS-LUCB+ on the same
seeds, draws them against the limit in one figure (:func:`gbai.plotting.plot_every_experiment`)
and compares the mean samples instance by instance. :func:`every_experiment` does all
of that once; :meth:`EveryExperiment.ratios` gives the comparison tables. Each then
checks its error rate on more runs of two instances (:func:`error_check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from ..experiments import error_rates, paper_instance, sweep_experiment
from ..paper.instances import EXPERIMENT_TITLES
from ..plotting import plot_every_experiment, savefig
from ..simulation import sweep

__all__ = ["ERROR_CHECK", "EVERY_EXPERIMENT", "EveryExperiment", "error_check", "every_experiment"]

#: The paper's experiments, in the order of its tables (Table III, then Table IV).
EVERY_EXPERIMENT = tuple(EXPERIMENT_TITLES)
#: The columns of the figure's data file.
FIGURE_COLUMNS = ["instance", "experiment", "x", "size", "algorithm", "mean_samples", "ci95_low", "ci95_high",
                  "T_star_kl", "ratio_to_T_star_kl", "error_rate", "unstopped"]
#: The error-rate check's instances, by label: (experiment, x) of a feasible one and of one
#: whose highest-mean arm is infeasible.
ERROR_CHECK = {"exp1 x=0.35 (feasible)": ("exp1", 0.35), "exp3 x=0.3 (risky highest-mean arm)": ("exp3", 0.3)}


@dataclass
class EveryExperiment:
    """The runs and the per-instance summary of :func:`every_experiment`, every experiment pooled."""

    runs: pd.DataFrame
    summary: pd.DataFrame

    def draw(self, figure: str, columns: Sequence[str] = FIGURE_COLUMNS):
        """Every experiment against the limit (:func:`gbai.plotting.plot_every_experiment`), saved as ``figure``.

        The figure's data file holds the summary's ``columns``. Returns the matplotlib figure.
        """
        fig = plot_every_experiment({name: rows for name, rows in self.summary.groupby("experiment", sort=False)})
        savefig(fig, figure, data=self.summary[list(columns)])
        return fig

    def ratios(self, columns: Mapping[str, tuple[str, str]], values: str = "mean_samples") -> pd.DataFrame:
        """One row per instance (indexed by experiment and instance), one column per entry of ``columns``.

        ``columns`` maps a column name to ``(numerator, denominator)``: two algorithms,
        giving the ratio of their ``values``, or one algorithm and ``"limit"``, giving its
        ``ratio_to_T_star_kl`` (``"bernoulli limit"``: its ratio to the Bernoulli line).
        """
        wide = self.summary.pivot_table(index=["experiment", "instance"], columns="algorithm",
                                        values=["mean_samples", "ratio_to_T_star_kl", "ratio_to_bernoulli"],
                                        sort=False)
        known = set(self.summary["algorithm"])
        table = {}
        for name, (numerator, denominator) in columns.items():
            if numerator not in known or denominator not in known | {"limit", "bernoulli limit"}:
                raise ValueError(f"{name}: {numerator!r} / {denominator!r}: the study ran {sorted(known)}")
            if denominator == "limit":
                table[name] = wide["ratio_to_T_star_kl"][numerator]
            elif denominator == "bernoulli limit":
                table[name] = wide["ratio_to_bernoulli"][numerator]
            else:
                table[name] = wide[values][numerator] / wide[values][denominator]
        return pd.DataFrame(table)


def every_experiment(algorithms: Sequence[str], *, n_runs: int, delta: float | Sequence[float], seed: int,
                     workers: int | None = None, experiments: Sequence[str] = EVERY_EXPERIMENT,
                     **options) -> EveryExperiment:
    """Run ``algorithms`` on every instance of ``experiments`` (:func:`gbai.sweep_experiment`, given ``options``).

    The summary gains ``ratio_to_bernoulli``, the mean samples over the Bernoulli
    line ``T*·kl(δ, 1−δ)``; :meth:`EveryExperiment.draw` draws the figure.
    """
    if not algorithms:
        raise ValueError("every_experiment needs at least one algorithm")
    parts = [sweep_experiment(name, list(algorithms), n_runs=n_runs, delta=delta, seed=seed, workers=workers,
                              **options) for name in experiments]
    summary = pd.concat([summary for _, summary in parts], ignore_index=True)
    summary["ratio_to_bernoulli"] = summary["mean_samples"] / summary["T_star_kl_bernoulli"]
    return EveryExperiment(pd.concat([runs for runs, _ in parts], ignore_index=True), summary)


def error_check(algorithm: str, *, n_runs: int, delta: float, seed: int, workers: int | None = None) -> pd.DataFrame:
    """:func:`gbai.error_rates` of ``n_runs`` runs of ``algorithm`` on each instance of :data:`ERROR_CHECK`.

    The runs take the seed ``seed + 1``, so they are new runs, not those of the study
    run with ``seed``.
    """
    instances = {label: paper_instance(*point) for label, point in ERROR_CHECK.items()}
    return error_rates(sweep(instances, [algorithm], n_runs=n_runs, delta=delta, seed=seed + 1, workers=workers))
