"""The paper's experiments as sweeps: one call per experiment, with its limit and paired comparisons.

:func:`sweep_experiment` runs an experiment of Section VI (Tables III-IV) or a
published figure's family over its x grid with :func:`gbai.simulation.sweep` and
joins each instance's facts (H_id, the limit ``T* kl(delta, 1 - delta)`` that
matches the reward model); :func:`paired_comparison` compares algorithms run by run
on their common random numbers; :func:`stored_limit` keeps the limits on disk
beside the cached runs. Nothing here changes a simulated run, so this module is not
part of the runs' cache keys (:data:`gbai.simulation.CORE_MODULES`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from . import __version__
from .instances import PAPER_DELTA, get_experiment
from .limits.characteristic_time import lower_bound_tstar, matching_divergence
from .model import Instance
from .simulation import default_cache_dir, summarize, sweep

__all__ = ["paired_comparison", "stored_limit", "sweep_experiment"]


def stored_limit(instance: Instance, delta: float, divergence: str = "bernoulli",
                 cache_dir: str | Path | None = "default") -> float:
    """``T*(mu) kl(delta, 1 - delta)`` (:func:`gbai.limits.lower_bound_tstar`), kept on disk.

    ``K_inf`` limits take seconds each and every experiment notebook needs them, so
    each value is stored as a one-line text file under ``cache_dir/limits`` (the
    sweep cache's folder; ``None`` keeps it in memory only). The key hashes the
    package version, the source of the lower-bound modules, the instance, δ and the
    divergence, so editing the solver never reuses a stale value. ``repr`` of a float
    reads back bit for bit, so a stored value equals a recomputed one.
    """
    if cache_dir is None:
        return lower_bound_tstar(instance, delta, divergence)
    folder = (default_cache_dir() if cache_dir == "default" else Path(cache_dir)) / "limits"
    digest = hashlib.sha256(__version__.encode())
    for source in sorted((Path(__file__).parent / "limits").glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    digest.update(instance.means.tobytes())
    digest.update(repr((instance.means.shape, float(instance.threshold), float(delta), divergence)).encode())
    path = folder / f"{digest.hexdigest()[:32]}.txt"
    if path.exists():
        return float(path.read_text())
    value = lower_bound_tstar(instance, delta, divergence)
    folder.mkdir(parents=True, exist_ok=True)
    # Written aside, then renamed: an interrupted or concurrent run never leaves half a number.
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(repr(float(value)))
    os.replace(partial, path)
    return value


def sweep_experiment(
    name: str,
    algorithms: Sequence[str],
    *,
    n_runs: int,
    delta: float = PAPER_DELTA,
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
    """
    experiment = get_experiment(name)
    xs = list(experiment.x_grid if x_values is None else x_values)
    if not xs:
        raise ValueError(f"experiment {name!r} has no x grid to sweep")
    size_list = list(sizes) if sizes is not None else (list(experiment.sizes) or [None])
    reward = options.get("reward", "beta")
    divergence = matching_divergence(reward)
    cache_dir = options.get("cache_dir", "default")
    instances: dict[str, Instance] = {}
    facts = []
    for size in size_list:
        for x in xs:
            instance = experiment.instance(x, size)
            instances[instance.label] = instance
            facts.append({"instance": instance.label, "experiment": name, "x": x, "size": size,
                          "n_arms": instance.n_arms, "n_attributes": instance.n_attributes,
                          "H_id": instance.hardness_index(),
                          "H_id_feasible_competitor": instance.hardness_index(competitor="feasible"),
                          "limit_divergence": divergence,
                          "T_star_kl": stored_limit(instance, delta, divergence, cache_dir),
                          "T_star_kl_bernoulli": stored_limit(instance, delta, "bernoulli", cache_dir)})
    table = sweep(instances, algorithms, n_runs=n_runs, delta=delta, seed=seed, **options)
    summary = summarize(table).merge(pd.DataFrame(facts), on="instance", how="left")
    summary["ratio_to_T_star_kl"] = summary["mean_samples"] / summary["T_star_kl"]
    first = ["experiment", "x", "size", "H_id", "algorithm"]
    summary = summary[first + [column for column in summary.columns if column not in first]]
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
            difference = (group[reference] - group[other]).to_numpy(dtype=np.float64)
            half = 1.96 * difference.std(ddof=1) / np.sqrt(difference.size) if difference.size > 1 else np.nan
            low, high = difference.mean() - half, difference.mean() + half
            rows.append(
                {
                    "instance": instance,
                    "other": other,
                    "runs": difference.size,
                    f"mean {reference}": group[reference].mean(),
                    "mean other": group[other].mean(),
                    "ratio": group[reference].mean() / group[other].mean(),
                    "difference": difference.mean(),
                    "ci95_low": low,
                    "ci95_high": high,
                    "wins": float((difference < 0).mean()),
                    "verdict": "fewer" if high < 0 else ("more" if low > 0 else "undecided"),
                }
            )
    return pd.DataFrame(rows)
