"""The paper's claim for each Section VI experiment: sweep the three algorithms, draw the figure, test the claim.

Notebooks 5 to 7 call :func:`replicate_experiment` once each; the claim tested is
Section VI's: CSS-LUCB needs fewer samples than both baselines at every x.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..algorithms import PAPER_ALGORITHMS
from ..experiments import paired_comparison, sweep_experiment
from ..plotting import legend_below, plot_paired_difference, plot_sample_complexity, savefig
from .results import record, record_range

__all__ = ["Replication", "replicate_experiment"]


@dataclass
class Replication:
    """A Section VI experiment rerun with the paper's three algorithms (:func:`replicate_experiment`).

    ``runs`` and ``summary`` are :func:`gbai.sweep_experiment`'s, ``comparison`` is
    :func:`gbai.paired_comparison` of CSS-LUCB against each baseline, and ``holds``
    says, per instance, whether CSS-LUCB needs fewer samples than both (the paper's claim).
    """

    runs: pd.DataFrame
    summary: pd.DataFrame
    comparison: pd.DataFrame
    holds: pd.Series
    name: str = ""
    figure: str = ""

    def report(self) -> str:
        """The claim's test and the ranges behind it, in sentences."""
        lines = [f"CSS-LUCB needs fewer samples than both baselines at {int(self.holds.sum())} of "
                 f"{len(self.holds)} values of x."]
        for other, part in self.comparison.groupby("other", sort=False):
            verdicts = ", ".join(f"{verdict} at {count}" for verdict, count in part["verdict"].value_counts().items())
            lines.append(f"CSS-LUCB / {other}: {part['ratio'].min():.3f} to {part['ratio'].max():.3f} "
                         f"(paired verdict: {verdicts}).")
        for algorithm, part in self.summary.groupby("algorithm", sort=False):
            lines.append(f"{algorithm}: {part['ratio_to_T_star_kl'].min():.0f} to "
                         f"{part['ratio_to_T_star_kl'].max():.0f} times the limit T*·kl(δ, 1−δ).")
        unstopped = int((~self.runs["stopped"].astype(bool)).sum())
        lines.append(f"Largest error rate among the runs that stopped: {self.summary['error_rate'].max():.4f}; runs "
                     f"that hit the sample budget: {unstopped:,} of {len(self.runs):,}.")
        return "\n".join(lines)

    def record(self) -> None:
        """Record the claim's verdict and the ranges of :meth:`report` as headline results, keyed by the experiment."""
        name, figure = self.name, self.figure
        record(f"{name}.claim-holds", int(self.holds.sum()), fmt="d", figure=figure,
               description=f"{name}: values of x where CSS-LUCB needs fewer samples than both baselines")
        record(f"{name}.points", len(self.holds), fmt="d", figure=figure, description=f"{name}: values of x")
        for other, part in self.comparison.groupby("other", sort=False):
            record_range(f"{name}.css-lucb-over-{other}", part["ratio"], fmt=".3f", figure=figure,
                         description=f"{name}: CSS-LUCB's mean samples over {other}'s, same seeds")
        for algorithm, part in self.summary.groupby("algorithm", sort=False):
            record_range(f"{name}.{algorithm}-over-limit", part["ratio_to_T_star_kl"], fmt=".0f", figure=figure,
                         description=f"{name}: {algorithm}'s mean samples over T*·kl(δ, 1−δ) of the Beta rewards")


def replicate_experiment(name: str, figure: str, *, n_runs: int, delta: float, seed: int, workers: int | None,
                         x: Sequence[str] = ("H_id",), title: str = "") -> tuple[Replication, object]:
    """Sweep experiment ``name`` with the paper's three algorithms, draw its figure, test the paper's claim.

    One panel per column of ``x`` (samples against it, with the limit
    ``T*·kl(δ, 1−δ)``); the figure is saved as ``figure`` with the summary as data.
    Returns the :class:`Replication` and the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    runs, summary = sweep_experiment(name, PAPER_ALGORITHMS, n_runs=n_runs, delta=delta, seed=seed, workers=workers)
    comparison = paired_comparison(runs, "css-lucb", ["ae", "feasibility-then-bai"])
    holds = comparison.groupby("instance", sort=False)["verdict"].apply(lambda v: (v == "fewer").all())
    if len(x) == 1:
        fig, grid = plt.subplots(1, 2, figsize=(8.4, 3.5), squeeze=False)
        pairs = [(grid[0, 0], grid[0, 1], x[0])]
    else:
        fig, grid = plt.subplots(2, len(x), figsize=(4.2 * len(x), 6.4), squeeze=False, sharex="col")
        pairs = [(grid[0, k], grid[1, k], column) for k, column in enumerate(x)]
    for top, bottom, column in pairs:
        plot_sample_complexity(summary, x=column, reference="T_star_kl", ax=top)
        plot_paired_difference(comparison, summary, x=column, ax=bottom)
        if len(x) > 1:
            top.set_xlabel("")
    if title:
        fig.suptitle(title)
    legend_below(fig)
    columns = ["x", *dict.fromkeys(x), "algorithm", "mean_samples", "ci95_low", "ci95_high", "T_star_kl",
               "ratio_to_T_star_kl", "error_rate", "unstopped"]
    savefig(fig, figure, data=summary[columns])
    return Replication(runs, summary[columns + ["runs", "unstopped_runs"]], comparison, holds, name, figure), fig
