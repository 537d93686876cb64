"""The published figures as data, and how to judge a reproduction of them (issue 9).

The paper's Figures 1 and 2 were drawn by the authors' research notebooks. Their
points, read off the figure files, ship with the package as
``gbai/data/published_figures.csv`` (a copy of ``published_figures.csv`` in the
project's shared paper folder; columns ``figure, series, x, x_plotted,
mean_samples``): :func:`published_figures` loads them. What the authors' code ran
(``AUTHORS-CODE.md`` there) is available as algorithm options: :data:`AS_RUN_SPECS`
names, per figure, the spec that runs each algorithm as the authors ran it, and
:data:`gbai.instances.PUBLISHED_EXPERIMENTS` holds the instances they ran it on.

Verdict: is a published point reproduced?
-----------------------------------------
A published point ``P`` is the plain average of the authors' ``n_a`` runs
(:data:`AUTHORS_RUNS`; no seeds). We run the as-run variant ``n`` times and get the
mean ``m`` and the sample standard deviation ``s`` of the sample counts. If our
variant is the authors' algorithm, ``P`` and ``m`` are two independent averages of
the same law, so ``P - m`` has mean 0 and standard deviation
``sigma sqrt(1/n_a + 1/n)``. The point is **reproduced** when ``P`` lies in the 95%
prediction interval

    m +/- t_{0.975, n-1} s sqrt(1/n_a + 1/n),

(Student's t because ``s`` is estimated from our ``n`` runs; the interval treats
the mean of ``n_a`` runs as normal, which for ``n_a = 1`` is a statement about a
single run's spread). Otherwise the verdict says which side ``P`` falls on. With
``n_a`` unknown (Figure 1a's Action Elimination) we take ``n_a = 1``, the widest
interval, and flag it. Runs that hit the sample budget or end where the authors'
code would crash have no published counterpart: a point whose runs did not all
finish is judged "not reproduced: runs did not finish" and the shares are reported.
About 1 point in 20 falls outside its interval by chance even when the variant is
exact; :func:`verdict` also returns the standardised distance ``z`` so that a
reader can tell a near miss from a gross one.
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "AS_RUN_SPECS",
    "AUTHORS_RUNS",
    "FIGURES",
    "published_figures",
    "reproduction_interval",
    "verdict",
]

#: The published figures and the instance family (gbai.instances) each was drawn on.
FIGURES = {
    "fig1a": "fig1a",
    "fig1b": "fig1b",
    "fig1c": "fig1c",
    "fig2a": "fig2a",
    "fig2b": "fig2b",
}

#: Runs the authors averaged per point (AUTHORS-CODE.md, "Runs per point").
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
    # "probably 10" in AUTHORS-CODE.md: taken as 10.
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
