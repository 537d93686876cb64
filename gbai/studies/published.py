"""The published figures: their points, the verdict on each, and the analyses that explain them.

The points of Figures 1 and 2, read off the figure files, ship as
``gbai/data/published_figures.csv`` (:func:`published_figures`). A point is
*reproduced* when it lies in the 95% prediction interval for an average of the
authors' ``n_a`` runs built from ours (:func:`verdict`; notebook 9 derives it).
:func:`published_runs` runs every point as run and as the text states it,
:func:`verdict_table` judges them, :func:`staircase` adds the authors' settings one
at a time, and :func:`counterfactual` gives all three algorithms one radius.
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
from scipy import stats

from ..algorithms import resolve
from ..asrun.instances import PUBLISHED_EXPERIMENTS
from ..experiments import get_experiment
from ..paper.engine import DEFAULT_MAX_SAMPLES
from ..simulation import sweep

__all__ = ["AS_RUN_SPECS", "AUTHORS_RUNS", "COUNTERFACTUAL_SPECS", "FIGURES", "STAIRCASE_POINTS", "STAIRCASE_STEPS",
           "counterfactual", "published_figures", "published_runs", "reproduction_interval", "staircase", "verdict",
           "verdict_table"]

#: The published figures, in the paper's order.
FIGURES = ("fig1a", "fig1b", "fig1c", "fig2a", "fig2b")

#: Runs the authors averaged per point (the as-run facts).
#: ``None``: unknown (judged as 1 run, the most lenient reading).
AUTHORS_RUNS: dict[tuple[str, str], int | None] = {
    ("fig1a", "css-lucb"): 1,
    ("fig1a", "ae"): None,
    ("fig1a", "feasibility-then-bai"): 1,
    ("fig1b", "css-lucb"): 10,
    ("fig1b", "ae"): 50,
    ("fig1b", "feasibility-then-bai"): 10,
    ("fig1c", "css-lucb"): 10,
    ("fig1c", "ae"): 10,
    ("fig1c", "feasibility-then-bai"): 10,
    # "probably 10" in the as-run facts: taken as 10.
    ("fig2a", "css-lucb"): 10,
    ("fig2b", "css-lucb"): 10,
}

#: The spec that runs each algorithm as the authors' notebooks ran it for each figure.
AS_RUN_SPECS: dict[str, dict[str, str]] = {
    **{
        figure: {
            "css-lucb": "css-lucb:as=fig1",
            "ae": "ae:as=published",
            "feasibility-then-bai": "feasibility-then-bai:as=published",
        }
        for figure in ("fig1a", "fig1b", "fig1c")
    },
    "fig2a": {"css-lucb": "css-lucb:as=fig2"},
    "fig2b": {"css-lucb": "css-lucb:as=fig2"},
}


def published_figures() -> pd.DataFrame:
    """The published points: one row per (figure, series, x).

    Columns: ``figure``, ``series`` (as in the CSV), ``algorithm`` (the package's
    name), ``size`` (N for fig2a, M for fig2b, else missing), ``x``, ``x_plotted``,
    ``mean_samples``, ``authors_runs`` (judged value, see :data:`AUTHORS_RUNS`) and
    ``authors_runs_known``.
    """
    with resources.files("gbai").joinpath("data/published_figures.csv").open("r", encoding="utf-8") as stream:
        table = pd.read_csv(stream)
    algorithm = table["series"].str.split(" ").str[0]
    size = table["series"].str.extract(r"[NM]=(\d+)")[0].astype("Int64")
    runs = [AUTHORS_RUNS[(figure, name)] for figure, name in zip(table["figure"], algorithm)]
    table.insert(2, "algorithm", algorithm)
    table.insert(3, "size", size)
    table["authors_runs"] = [1 if value is None else value for value in runs]
    table["authors_runs_known"] = [value is not None for value in runs]
    return table


def reproduction_interval(mean: float, std: float, n: int, authors_runs: int,
                          level: float = 0.95) -> tuple[float, float]:
    """The ``level`` prediction interval for the average of ``authors_runs`` runs,
    given ``n`` runs of ours with this mean and sample standard deviation."""
    if n < 2:
        raise ValueError(f"a prediction interval needs at least 2 runs, got {n}")
    if authors_runs < 1:
        raise ValueError(f"authors_runs must be at least 1, got {authors_runs}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    half = stats.t.ppf(0.5 + level / 2.0, n - 1) * std * np.sqrt(1.0 / authors_runs + 1.0 / n)
    return mean - half, mean + half


def verdict(published: float, samples: np.ndarray, finished: np.ndarray | None = None,
            authors_runs: int = 1, level: float = 0.95) -> dict:
    """Compare a published point with our runs of the as-run variant.

    ``samples`` are our per-run sample counts, ``finished`` flags the runs that
    stopped with an answer (default: all). Returns ``runs``, ``finished_share``,
    ``mean``, ``sem``, ``low``/``high`` (the prediction interval of
    :func:`reproduction_interval`), ``ratio`` (our mean / published), ``z`` (the
    distance in standard deviations of ``P - m``) and ``verdict``.
    """
    samples = np.asarray(samples, dtype=np.float64)
    finished = np.ones(samples.size, dtype=bool) if finished is None else np.asarray(finished, dtype=bool)
    if samples.ndim != 1 or samples.size != finished.size:
        raise ValueError("samples and finished must be 1-d arrays of the same length")
    n = samples.size
    mean = float(samples.mean()) if n else np.nan
    std = float(samples.std(ddof=1)) if n > 1 else np.nan
    result = {
        "runs": n,
        "finished_share": float(finished.mean()) if n else np.nan,
        "mean": mean,
        "sem": std / np.sqrt(n) if n > 1 else np.nan,
        "low": np.nan,
        "high": np.nan,
        "ratio": mean / published,
        "z": np.nan,
    }
    if n < 2:
        result["verdict"] = "too few runs"
        return result
    if not finished.all():
        result["verdict"] = "not reproduced: runs did not finish"
        return result
    low, high = reproduction_interval(mean, std, n, authors_runs, level)
    scale = std * np.sqrt(1.0 / authors_runs + 1.0 / n)
    result.update(low=low, high=high, z=(published - mean) / scale if scale > 0 else np.nan)
    if low <= published <= high:
        result["verdict"] = "reproduced"
    elif published < low:
        result["verdict"] = "not reproduced: published lower"
    else:
        result["verdict"] = "not reproduced: published higher"
    return result


def _figure_instances(figure: str, points: pd.DataFrame) -> tuple[dict, dict]:
    """The instances of a figure's published points, by label, and each label's ``(x, size)``."""
    instances, keys = {}, {}
    for x, size in points[points["figure"] == figure].drop_duplicates(["x", "size"])[["x", "size"]].itertuples(
            index=False):
        size = None if pd.isna(size) else int(size)
        instance = PUBLISHED_EXPERIMENTS[figure].instance(x, size)
        instances[instance.label] = instance
        keys[instance.label] = (x, size)
    return instances, keys


def published_runs(n_runs: dict[str, int], *, delta: float, seed: int, budget_fig1a: int, workers: int | None = None,
                   progress: bool = False) -> pd.DataFrame:
    """Every published point run as the authors ran it and as the text states it (paired runs).

    ``n_runs`` gives the runs a point per figure; Figure 1a's runs stop at
    ``budget_fig1a`` samples. One row per run: the sweep's columns plus ``figure``,
    ``x``, ``size``, ``variant`` ("as run" or "text") and ``name`` (the algorithm).
    """
    points = published_figures()
    tables = []
    for figure in FIGURES:
        instances, keys = _figure_instances(figure, points)
        as_run = AS_RUN_SPECS[figure]
        budget = budget_fig1a if figure == "fig1a" else DEFAULT_MAX_SAMPLES
        table = sweep(instances, list(as_run.values()) + list(as_run), n_runs=n_runs[figure], delta=delta, seed=seed,
                      workers=workers, max_samples=budget, progress=progress)
        canonical = {resolve(spec).spec: name for name, spec in as_run.items()}
        table["figure"] = figure
        table["x"] = table["instance"].map(lambda label, keys=keys: keys[label][0])
        table["size"] = table["instance"].map(lambda label, keys=keys: keys[label][1]).astype("Int64")
        table["variant"] = np.where(table["algorithm"].isin(list(canonical)), "as run", "text")
        table["name"] = table["algorithm"].map(lambda spec, canonical=canonical: canonical.get(spec, spec))
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def verdict_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per published point: the published value, our as-run mean with its interval and verdict,
    and the text's mean (``runs`` from :func:`published_runs`)."""
    rows = []
    for row in published_figures().itertuples(index=False):
        mask = (runs["figure"] == row.figure) & np.isclose(runs["x"], row.x) & (runs["name"] == row.algorithm)
        if not pd.isna(row.size):
            mask &= runs["size"] == row.size
        mine, text = runs[mask & (runs["variant"] == "as run")], runs[mask & (runs["variant"] == "text")]
        result = verdict(row.mean_samples, mine["samples"].to_numpy(), mine["stopped"].to_numpy(), row.authors_runs)
        rows.append({"figure": row.figure, "x": row.x, "x_plotted": row.x_plotted, "algorithm": row.series,
                     "published": row.mean_samples,
                     "authors runs": row.authors_runs if row.authors_runs_known else "?",
                     "as-run mean": result["mean"], "as-run SE": result["sem"], "low": result["low"],
                     "high": result["high"], "ratio as-run/published": result["ratio"], "z": result["z"],
                     "finished": result["finished_share"], "verdict": result["verdict"],
                     "text mean": text["samples"].mean(),
                     "ratio text/published": text["samples"].mean() / row.mean_samples})
    return pd.DataFrame(rows)


#: The authors' settings in the order the staircase adds them, per algorithm.
STAIRCASE_STEPS = {
    "css-lucb": ["radius=authors", "init=20", "ties=authors", "count=authors"],
    "ae": ["radius=authors", "delta=authors", "batch=10", "feasibility=authors", "elimination=authors",
           "stopping=authors"],
    "feasibility-then-bai": ["radius=authors", "phase2_radius=authors", "delta=authors", "init=20",
                             "screening=pairs", "restart=yes", "count=authors"],
}
#: One point per experiment: (table experiment, published figure, x).
STAIRCASE_POINTS = {"exp1 / fig1a": ("exp1", "fig1a", 0.35), "exp2 / fig1b": ("exp2", "fig1b", 0.5),
                    "exp3 / fig1c": ("exp3", "fig1c", 0.05)}
#: Every algorithm keeps its as-run rules but takes the authors' CSS-LUCB radius and the given delta.
COUNTERFACTUAL_SPECS = {
    "css-lucb": "css-lucb:as=fig1",
    "ae": "ae:as=published,radius=shared,delta=given",
    "feasibility-then-bai": "feasibility-then-bai:as=published,radius=shared,phase2_radius=shared,delta=given",
}


def _point_options(figure: str, n_runs: int, n_runs_fig1a: int, budget_fig1a: int) -> tuple[int, int]:
    return (n_runs_fig1a, budget_fig1a) if figure == "fig1a" else (n_runs, DEFAULT_MAX_SAMPLES)


def staircase(*, n_runs: int, n_runs_fig1a: int, budget_fig1a: int, delta: float, seed: int,
              workers: int | None = None) -> pd.DataFrame:
    """From the text's rule on the table's instance to the as-run variant, one change a step.

    Step 0 is the text on the paper's table, step 1 the text on the authors' typed
    instance, then one switch of :data:`STAIRCASE_STEPS` each; every step shares its
    reward streams with the others. Columns: ``point``, ``algorithm``, ``step``,
    ``change``, ``runs``, ``mean samples``, ``SE``, ``finished``, ``x previous``.
    """
    rows = []
    for point, (table, figure, x) in STAIRCASE_POINTS.items():
        count, budget = _point_options(figure, n_runs, n_runs_fig1a, budget_fig1a)
        typed = PUBLISHED_EXPERIMENTS[figure].instance(x)
        for name, switches in STAIRCASE_STEPS.items():
            steps = [("text, table instance", get_experiment(table).instance(x), name),
                     ("text, typed instance", typed, name)]
            steps += [(f"+ {switches[k]}", typed, f"{name}:" + ",".join(switches[:k + 1]))
                      for k in range(len(switches))]
            for order, (label, instance, spec) in enumerate(steps):
                runs = sweep({label: instance}, [spec], n_runs=count, delta=delta, seed=seed, workers=workers,
                             max_samples=budget, progress=False)
                rows.append({"point": point, "algorithm": name, "step": order, "change": label, "runs": count,
                             "mean samples": runs["samples"].mean(),
                             "SE": runs["samples"].std(ddof=1) / np.sqrt(count), "finished": runs["stopped"].mean()})
    result = pd.DataFrame(rows)
    result["x previous"] = result.groupby(["point", "algorithm"])["mean samples"].transform(lambda s: s / s.shift(1))
    return result


def counterfactual(*, n_runs: int, n_runs_fig1a: int, budget_fig1a: int, delta: float, seed: int,
                   workers: int | None = None) -> pd.DataFrame:
    """CSS-LUCB against the baselines as run, with one radius and one delta, and as the text states them.

    One row per (point, setting): each algorithm's mean samples and finished share,
    CSS-LUCB's ratio to each baseline and whether it beats it (the paired 95%
    interval of the difference below zero: "yes"; above: "no"; else "undecided").
    """
    rows = []
    for point, (_, figure, x) in STAIRCASE_POINTS.items():
        count, budget = _point_options(figure, n_runs, n_runs_fig1a, budget_fig1a)
        instance = PUBLISHED_EXPERIMENTS[figure].instance(x)
        settings = (("as run", {name: AS_RUN_SPECS[figure][name] for name in COUNTERFACTUAL_SPECS}),
                    ("one radius", COUNTERFACTUAL_SPECS), ("text", {name: name for name in COUNTERFACTUAL_SPECS}))
        for setting, specs in settings:
            runs = sweep({point: instance}, list(specs.values()), n_runs=count, delta=delta, seed=seed,
                         workers=workers, max_samples=budget, progress=False)
            runs["name"] = runs["algorithm"].map({resolve(spec).spec: name for name, spec in specs.items()})
            samples = runs.pivot(index="run", columns="name", values="samples")
            finished = runs.pivot(index="run", columns="name", values="stopped")
            row = {"point": point, "setting": setting, "runs": count}
            for name in COUNTERFACTUAL_SPECS:
                row[f"{name} mean"] = samples[name].mean()
                row[f"{name} finished"] = finished[name].mean()
            for other in ("ae", "feasibility-then-bai"):
                difference = (samples["css-lucb"] - samples[other]).to_numpy(dtype=float)
                half = 1.96 * difference.std(ddof=1) / np.sqrt(count)
                row[f"css/{other}"] = samples["css-lucb"].mean() / samples[other].mean()
                if not finished[other].all():
                    row[f"beats {other}"] = "yes (baseline did not stop)" if finished["css-lucb"].all() else "?"
                else:
                    row[f"beats {other}"] = ("yes" if difference.mean() + half < 0 else
                                             "no" if difference.mean() - half > 0 else "undecided")
            rows.append(row)
    return pd.DataFrame(rows)
