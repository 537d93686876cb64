"""The paper's experiments as sweeps: one call per experiment, with its limit and paired comparisons.

:func:`get_experiment` finds a family of instances by name, the paper's tables
(:data:`gbai.paper.instances.EXPERIMENTS`) or the published figures' instances
(:data:`gbai.asrun.instances.PUBLISHED_EXPERIMENTS`); :func:`sweep_experiment` runs
one over its x grid and joins each instance's facts (H_id, the limit
``T* kl(delta, 1 - delta)`` matching the reward model, kept by :func:`stored_limit`
in the result cache); :func:`paired_comparison` compares algorithms run by run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .asrun.instances import PUBLISHED_EXPERIMENTS
from .cache import cached
from .limits.characteristic_time import characteristic_time, matching_divergence
from .limits.divergences import kl_bernoulli_scalar
from .paper.instances import EXPERIMENTS, PAPER_DELTA, Experiment
from .paper.model import NO_ANSWER, Instance, check_delta
from .simulation import delta_list, sweep

__all__ = ["error_rates", "experiment_grid", "get_experiment", "paired_comparison", "paired_difference",
           "paper_instance", "stored_limit", "summarize", "sweep_experiment"]


def get_experiment(name: str) -> Experiment:
    """The paper's experiment or published-figure family called ``name``."""
    for table in (EXPERIMENTS, PUBLISHED_EXPERIMENTS):
        if name in table:
            return table[name]
    raise ValueError(f"unknown experiment {name!r}; choose from {sorted(EXPERIMENTS) + sorted(PUBLISHED_EXPERIMENTS)}")


def paper_instance(name: str, x: float | None = None, size: int | None = None) -> Instance:
    """The instance of a paper experiment (``example``, ``exp1``-``exp3``, ``vary-n``, ``vary-m``) or of a
    published figure (``fig1a``-``fig1c``, ``fig2a``, ``fig2b``) at ``x``; ``size`` is N or M for the varying ones."""
    return get_experiment(name).instance(x, size)


def experiment_grid(name: str) -> tuple[float, ...]:
    """The x values of experiment ``name`` (reading note 10)."""
    return get_experiment(name).x_grid


def stored_limit(instance: Instance, delta: float, divergence: str = "bernoulli",
                 cache_dir: str | Path | None = "default") -> float:
    """``T*(mu) kl(delta, 1 - delta)`` (:func:`gbai.lower_bound_tstar`), with ``T*`` kept in the result cache.

    ``K_inf`` limits take seconds each and every experiment notebook needs them. ``T*``
    does not depend on delta, so it is stored once per instance and divergence and
    multiplied by ``kl`` as :func:`gbai.lower_bound_tstar` does (the same float);
    ``cache_dir=None`` computes without the cache.
    """
    delta = check_delta(delta)
    payload = {"means": instance.means.tolist(), "threshold": float(instance.threshold), "divergence": divergence}
    stored = cached("limits", payload, ("gbai.limits.characteristic_time",),
                    lambda: {"T_star": np.array(characteristic_time(instance, divergence).T_star)}, cache_dir)
    return float(stored["T_star"]) * kl_bernoulli_scalar(delta, 1.0 - delta)


def sweep_experiment(
    name: str,
    algorithms: Sequence[str],
    *,
    n_runs: int,
    delta: float | Sequence[float] = PAPER_DELTA,
    seed: int = 0,
    sizes: Sequence[int] | None = None,
    x_values: Sequence[float] | None = None,
    **options,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sweep a paper experiment over its x grid; returns ``(runs, summary)``.

    ``sizes`` lists N (``vary-n``) or M (``vary-m``) values; by default the
    experiment's own sizes, or none for experiments without a size. ``x_values``
    defaults to the experiment's grid. ``options`` go to :func:`sweep`. The summary
    has one row per (instance, algorithm) with the columns of :func:`summarize`
    plus ``experiment``, ``x``, ``size``, ``n_arms``, ``n_attributes``, ``H_id``,
    ``H_id_feasible_competitor`` (the variant of :meth:`gbai.Instance.hardness_terms`),
    ``T_star_kl`` (the bound ``T*(mu) kl(delta, 1 - delta)`` of
    :func:`gbai.limits.lower_bound_tstar` for the reward model of the runs:
    the ``K_inf`` divergence of the simulated laws for ``reward="beta"``, the
    Bernoulli divergence for ``reward="bernoulli"``; named in ``limit_divergence``),
    ``T_star_kl_bernoulli`` (the Bernoulli bound, for comparison) and
    ``ratio_to_T_star_kl`` (mean samples over the matching bound).

    ``delta`` may be a list (:func:`gbai.sweep`): both tables then start with a
    ``delta`` column, and a spec whose sampling does not depend on delta plays each
    seed once for all of them.
    """
    experiment = get_experiment(name)
    xs = list(experiment.x_grid if x_values is None else x_values)
    if not xs:
        raise ValueError(f"experiment {name!r} has no x grid to sweep")
    size_list = list(sizes) if sizes is not None else (list(experiment.sizes) or [None])
    reward = options.get("reward", "beta")
    divergence = matching_divergence(reward)
    cache_dir = options.get("cache_dir", "default")
    points = {}
    for size in size_list:
        for x in xs:
            instance = experiment.instance(x, size)
            points[instance.label] = (instance, x, size)
    # One road for a number and a list: the sweep (which checks delta) always gets a list.
    deltas, listed = delta_list(delta)
    table = sweep({label: point[0] for label, point in points.items()}, algorithms, n_runs=n_runs, delta=deltas,
                  seed=seed, **options)
    facts = pd.DataFrame([
        {"delta": value, "instance": label, "experiment": name, "x": x, "size": size, "n_arms": instance.n_arms,
         "n_attributes": instance.n_attributes, "H_id": instance.hardness_index(),
         "H_id_feasible_competitor": instance.hardness_index(competitor="feasible"), "limit_divergence": divergence,
         "T_star_kl": stored_limit(instance, value, divergence, cache_dir),
         "T_star_kl_bernoulli": stored_limit(instance, value, "bernoulli", cache_dir)}
        for value in map(float, table["delta"].unique()) for label, (instance, x, size) in points.items()])
    summary = summarize(table, by=["delta", "instance", "algorithm"]).merge(facts, on=["delta", "instance"],
                                                                            how="left")
    summary["ratio_to_T_star_kl"] = summary["mean_samples"] / summary["T_star_kl"]
    first = ["delta", "experiment", "x", "size", "H_id", "algorithm"]
    summary = summary[first + [column for column in summary.columns if column not in first]]
    if not listed:
        table, summary = table.drop(columns="delta"), summary.drop(columns="delta")
    return table, summary


def paired_comparison(table: pd.DataFrame, reference: str, others: Sequence[str]) -> pd.DataFrame:
    """Compare ``reference`` with each of ``others`` run by run, per instance.

    Runs with the same index share their reward streams (common random numbers), so
    the per-run difference ``reference - other`` has a much smaller spread than the
    two means. Columns: ``instance``, ``other``, ``runs``, the two mean sample counts,
    ``ratio`` (reference / other), ``difference`` (mean paired difference),
    ``ci95_low``/``ci95_high`` (difference +/- 1.96 standard errors), ``wins`` (share
    of runs where the reference used fewer samples) and ``verdict``: ``"fewer"``
    when the whole interval is below 0, ``"more"`` when it is above 0, else
    ``"undecided"``.
    """
    rows = []
    wide = table.pivot_table(index=["instance", "run"], columns="algorithm", values="samples", sort=False)
    for other in others:
        if reference not in wide.columns or other not in wide.columns:
            raise ValueError(f"the table must hold runs of both {reference!r} and {other!r}")
        for instance, group in wide.groupby(level="instance", sort=False):
            mean, half = paired_difference(group[reference], group[other], 1.96)
            low, high = mean - half, mean + half
            rows.append(
                {
                    "instance": instance,
                    "other": other,
                    "runs": len(group),
                    f"mean {reference}": group[reference].mean(),
                    "mean other": group[other].mean(),
                    "ratio": group[reference].mean() / group[other].mean(),
                    "difference": mean,
                    "ci95_low": low,
                    "ci95_high": high,
                    "wins": float((group[reference] < group[other]).mean()),
                    "verdict": "fewer" if high < 0 else ("more" if low > 0 else "undecided"),
                }
            )
    return pd.DataFrame(rows)


def paired_difference(reference, other, z: float = 1.0) -> tuple[float, float]:
    """The mean of the paired differences ``reference - other`` and ``z`` standard errors of it (NaN for one run)."""
    difference = np.asarray(reference, dtype=np.float64) - np.asarray(other, dtype=np.float64)
    spread = z * difference.std(ddof=1) / np.sqrt(difference.size) if difference.size > 1 else np.nan
    return difference.mean(), spread


def error_rates(table: pd.DataFrame, by: Sequence[str] = ("instance", "algorithm")) -> pd.DataFrame:
    """Wrong answers among the runs that stopped, per group, with the exact 95% upper limit.

    Columns ``runs``, ``stopped``, ``errors``, ``unstopped``, ``error rate`` and
    ``95% upper limit``: the one-sided Clopper-Pearson bound on the probability of a
    wrong answer, the quantity that delta-correctness bounds (1 when every stopped run
    was wrong, or none stopped).
    """
    from scipy import stats

    rates = table.groupby(list(by)).agg(runs=("error", "size"), stopped=("stopped", "sum"), errors=("error", "sum"))
    rates["unstopped"] = rates["runs"] - rates["stopped"]
    rates["error rate"] = rates["errors"] / rates["stopped"]
    rates["95% upper limit"] = [1.0 if e == n else stats.beta.ppf(0.95, e + 1, n - e)
                                for e, n in zip(rates["errors"], rates["stopped"])]
    return rates


def summarize(table: pd.DataFrame, by: Sequence[str] = ("instance", "algorithm")) -> pd.DataFrame:
    """Per-group statistics of a sweep table.

    Columns: ``runs``, ``mean_samples``, ``sem_samples`` (standard error of the mean),
    ``ci95_low``/``ci95_high`` (mean +/- 1.96 standard errors, a normal approximation
    that is accurate for the hundreds of runs a point averages), ``median_samples``,
    ``error_rate``, ``unstopped``, ``unstopped_runs`` and ``crashed``.

    A run that hits the sample budget gives no answer, so it is neither right nor
    wrong: ``error_rate`` is the share of wrong answers among the runs that *stopped*
    (NaN when none stopped), and ``unstopped`` is the share of runs that hit the
    budget (``unstopped_runs`` their number). ``crashed`` is the share of runs that
    ended without stopping and without reaching the budget: where the authors' code
    raises an error (as-run variants only, answer :data:`gbai.CRASHED`); they did not
    stop either, and are counted in neither of the other two. Read the two side by side: an error
    rate of 0 with ``unstopped`` near 1 says the algorithm almost never answered,
    not that it was always right. δ-correctness (Section II of the paper) bounds the
    probability of stopping with a wrong answer; its estimate over all runs,
    ``error_rate * (1 - unstopped)``, is never above ``error_rate``.
    """
    stopped = table["stopped"].astype(bool)
    frame = table.assign(_stopped=stopped, _wrong=stopped & table["error"].astype(bool),
                         _crashed=~stopped & (table["answer"] != NO_ANSWER))
    groups = frame.groupby(list(by), sort=False)
    summary = groups.agg(
        runs=("samples", "size"),
        mean_samples=("samples", "mean"),
        std_samples=("samples", "std"),
        median_samples=("samples", "median"),
        stopped_runs=("_stopped", "sum"),
        wrong_runs=("_wrong", "sum"),
        crashed_runs=("_crashed", "sum"),
    )
    summary["sem_samples"] = summary["std_samples"].fillna(0.0) / np.sqrt(summary["runs"])
    summary["ci95_low"] = summary["mean_samples"] - 1.96 * summary["sem_samples"]
    summary["ci95_high"] = summary["mean_samples"] + 1.96 * summary["sem_samples"]
    summary["error_rate"] = summary["wrong_runs"] / summary["stopped_runs"].where(summary["stopped_runs"] > 0)
    summary["unstopped_runs"] = (summary["runs"] - summary["stopped_runs"] - summary["crashed_runs"]).astype(int)
    summary["unstopped"] = summary["unstopped_runs"] / summary["runs"]
    summary["crashed"] = summary["crashed_runs"] / summary["runs"]
    order = ["runs", "mean_samples", "sem_samples", "ci95_low", "ci95_high", "median_samples", "error_rate",
             "unstopped", "unstopped_runs", "crashed"]
    return summary[order].reset_index()
