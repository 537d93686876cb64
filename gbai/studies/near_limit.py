"""How close Betting-GBAI (or another spec) comes to the limit: longer measurements than notebooks 11-12.

Five studies, each a function returning a table; ``python -m gbai.tools.near_limit``
runs them (about half an hour on two cores at the defaults for the first four; the
best-arm part adds about 18 minutes, its Track-and-Stop runs on one core), prints
each as a Markdown table and writes it as a CSV file:

* ``bernoulli_ratios.csv``: on every instance of experiments 1-3 and the varying-N
  and varying-M tables, with Bernoulli rewards, mean samples over
  ``T*(mu) kl(delta, 1 - delta)`` (Bernoulli divergence), for each delta of
  :data:`DELTAS`;
* ``beta_comparison.csv``: the paper's Beta rewards, Betting-GBAI against
  CSS-LUCB+ on the same seeds, with the ratio to the ``K_inf`` limit of those laws
  (:func:`gbai.matching_divergence`);
* ``error_rates.csv``: error rates at delta = 0.5 on the adversarial instances of
  :func:`adversarial_instances`, with the exact (Clopper-Pearson) 95% upper limit;
* ``cost.csv``: wall time per run against CSS-LUCB (against Betting-GBAI for
  another ``--algorithm``), and one run of a 500 x 20 instance;
* ``bai_comparison.csv``: plain best-arm instances (``M = 1``) against
  Track-and-Stop with the heuristic threshold (:mod:`gbai.studies.references`),
  and the same sampling with the delta-correct stop told the true means (the oracle
  yardstick: what a proven stop of that form reaches at best).

Runs go through :func:`gbai.sweep` and its cache, so an interrupted measurement
resumes where it stopped, and a second one reads the stored runs.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from tqdm import tqdm

from ..experiments import get_experiment, sweep_experiment
from ..paper.model import Instance
from ..simulation import run, run_seed, sweep

__all__ = ["ALGORITHM", "DELTAS", "adversarial_instances", "bai_comparison", "bai_instances", "bernoulli_ratios", "beta_comparison",
           "cost", "error_rates"]

#: The confidence levels of the Bernoulli table, from the paper's 0.1 down to 1e-10.
DELTAS = (1e-1, 1e-2, 1e-3, 1e-6, 1e-10)
EXPERIMENTS = ("exp1", "exp2", "exp3", "vary-n", "vary-m")
ALGORITHM = "betting"


def adversarial_instances() -> dict[str, Instance]:
    """Six instances built to make a loose rule err (threshold 0.3 except where noted)."""
    return {
        "near tie (arm means 0.600 vs 0.595)": Instance([[0.6, 0.6], [0.59, 0.6], [0.2, 0.9]], 0.3),
        "attributes 0.01 from the threshold": Instance([[0.31, 0.8], [0.29, 0.9], [0.5, 0.5]], 0.3),
        "high-mean infeasible arm": Instance([[0.95, 0.29], [0.5, 0.5], [0.45, 0.45]], 0.3),
        "infeasible instance": Instance([[0.25, 0.8, 0.6], [0.7, 0.29, 0.9], [0.29, 0.29, 0.9]], 0.3),
        "N = 1 (one arm, an attribute at 0.32)": Instance([[0.32, 0.6, 0.5]], 0.3),
        "M = 1 (close second, one arm at 0.31)": Instance([[0.5], [0.49], [0.31], [0.2]], 0.3),
    }


def _all_experiments(algorithms, *, n_runs, delta, seed, reward, workers, cache_dir, experiments):
    parts = [sweep_experiment(name, algorithms, n_runs=n_runs, delta=delta, seed=seed, reward=reward,
                              workers=workers, cache_dir=cache_dir)[1] for name in experiments]
    return pd.concat(parts, ignore_index=True)


def bernoulli_ratios(n_runs: int = 200, deltas: Sequence[float] = DELTAS, seed: int = 2024, workers: int | None = None,
                     cache_dir="default", experiments: Sequence[str] = EXPERIMENTS,
                     algorithm: str = ALGORITHM) -> pd.DataFrame:
    """An algorithm's (default Betting-GBAI) mean samples over ``T* kl(delta, 1-delta)``, Bernoulli rewards.

    One row per instance, one ``ratio at delta`` column per delta, then ``falls``:
    whether the ratio decreases at every step from the largest delta to the smallest.
    """
    rows = []
    for delta in deltas:
        summary = _all_experiments([algorithm], n_runs=n_runs, delta=delta, seed=seed, reward="bernoulli",
                                   workers=workers, cache_dir=cache_dir, experiments=experiments)
        rows.append(summary.assign(delta=delta))
    table = pd.concat(rows, ignore_index=True)
    wide = table.pivot_table(index="instance", columns="delta", values="ratio_to_T_star_kl", sort=False)
    wide = wide[sorted(wide.columns, reverse=True)]
    wide["falls"] = (wide.diff(axis=1).iloc[:, 1:] < 0).all(axis=1)
    wide.columns = [f"ratio at {c:g}" if not isinstance(c, str) else c for c in wide.columns]
    unstopped = table.groupby("instance", sort=False)["unstopped_runs"].sum()
    errors = table.groupby("instance", sort=False)["error_rate"].max()
    return wide.assign(unstopped_runs=unstopped, max_error_rate=errors).reset_index()


def beta_comparison(n_runs: int = 200, deltas: Sequence[float] = (1e-1, 1e-6), seed: int = 2024,
                    workers: int | None = None, cache_dir="default",
                    experiments: Sequence[str] = EXPERIMENTS, algorithm: str = ALGORITHM) -> pd.DataFrame:
    """An algorithm (default Betting-GBAI) against CSS-LUCB+ on the paper's Beta rewards, same seeds."""
    rows = []
    for delta in deltas:
        summary = _all_experiments([algorithm, "css-lucb-plus"], n_runs=n_runs, delta=delta, seed=seed,
                                   reward="beta", workers=workers, cache_dir=cache_dir, experiments=experiments)
        wide = summary.pivot_table(index="instance", columns="algorithm", values="mean_samples", sort=False)
        limits = summary.groupby("instance", sort=False)[["T_star_kl", "T_star_kl_bernoulli"]].first()
        rows.append(pd.DataFrame({
            "delta": delta, "instance": wide.index, algorithm: wide[algorithm].to_numpy(),
            "css-lucb-plus": wide["css-lucb-plus"].to_numpy(),
            f"{algorithm} / css-lucb-plus": (wide[algorithm] / wide["css-lucb-plus"]).to_numpy(),
            f"{algorithm} / K_inf limit": (wide[algorithm] / limits["T_star_kl"]).to_numpy(),
            f"{algorithm} / Bernoulli limit": (wide[algorithm] / limits["T_star_kl_bernoulli"]).to_numpy(),
            "max_error_rate": summary.groupby("instance", sort=False)["error_rate"].max().to_numpy()}))
    return pd.concat(rows, ignore_index=True)


def error_rates(n_runs: int = 2000, delta: float = 0.5, seed: int = 12, workers: int | None = None,
                cache_dir="default", rewards: Sequence[str] = ("bernoulli", "beta"),
                algorithm: str = ALGORITHM) -> pd.DataFrame:
    """Errors of an algorithm (default Betting-GBAI) on :func:`adversarial_instances`, with a 95% upper limit."""
    rows = []
    for reward in rewards:
        table = sweep(adversarial_instances(), [algorithm], n_runs=n_runs, delta=delta, seed=seed, reward=reward,
                      workers=workers, cache_dir=cache_dir)
        for instance, group in table.groupby("instance", sort=False):
            stopped = int(group["stopped"].sum())
            errors = int(group["error"].sum())
            rows.append({"reward": reward, "instance": instance, "runs": len(group), "stopped": stopped,
                         "errors": errors, "error_rate": errors / max(stopped, 1),
                         "upper_95": float(stats.beta.ppf(0.95, errors + 1, max(stopped - errors, 1))),
                         "mean_samples": float(group["samples"].mean())})
    return pd.DataFrame(rows)


def bai_instances() -> dict[str, Instance]:
    """Classic Bernoulli best-arm instances (Garivier & Kaufmann 2016, Section 6), as ``M = 1`` grouped ones.

    The threshold 0.05 lies below every mean, so every arm is feasible and the
    answer is the best arm; the grouped algorithms still have to show it feasible.
    """
    return {
        "mu1 = (0.5, 0.45, 0.43, 0.4, 0.3)": Instance([[0.5], [0.45], [0.43], [0.4], [0.3]], 0.05),
        "mu2 = (0.3, 0.21, 0.2, 0.19, 0.18)": Instance([[0.3], [0.21], [0.2], [0.19], [0.18]], 0.05),
    }


def bai_comparison(n_runs: int = 200, deltas: Sequence[float] = (1e-1, 1e-2), seed: int = 2024,
                   algorithms: Sequence[str] = (ALGORITHM,), workers: int | None = None,
                   cache_dir="default") -> pd.DataFrame:
    """Mean samples on :func:`bai_instances` against Track-and-Stop with the heuristic threshold (same seeds).

    The reference (:mod:`gbai.studies.references`) is not delta-correct; its runs
    are not cached. ``/ TaS`` columns divide each algorithm's mean by the reference's.
    ``TaS (oracle stop)`` is the same sampling stopped by the delta-correct yardstick
    that is told the true means.
    """
    from .references import run_track_and_stop

    instances = bai_instances()
    rows = []
    for delta in deltas:
        table = sweep(instances, list(algorithms), n_runs=n_runs, delta=delta, seed=seed, reward="bernoulli",
                      workers=workers, cache_dir=cache_dir)
        for name, instance in instances.items():
            row = {"delta": delta, "instance": name}
            for stopping, column, errors in (("heuristic", "TaS (heuristic)", "TaS errors"),
                                             ("oracle", "TaS (oracle stop)", "oracle stop errors")):
                reference = [run_track_and_stop(instance, delta=delta, seed=run_seed(seed, r), stopping=stopping)
                             for r in tqdm(range(n_runs), desc=f"Track-and-Stop, {stopping} stop", unit="run",
                                           smoothing=0.05)]
                row[column] = float(np.mean([samples for _, samples, _, _ in reference]))
                row[errors] = int(sum(answer != instance.answer for answer, _, _, _ in reference))
            tas = row["TaS (heuristic)"]
            row["TaS (oracle stop) / TaS"] = row["TaS (oracle stop)"] / tas
            for algorithm in algorithms:
                group = table[(table["instance"] == name) & (table["algorithm"] == algorithm)]
                mean = float(group["samples"].mean())
                row[algorithm] = mean
                row[f"{algorithm} / TaS"] = mean / tas
                row[f"{algorithm} errors"] = int(group["error"].sum())
            rows.append(row)
    return pd.DataFrame(rows)


def _seconds_per_run(instance, algorithm, n_runs, seed, reward):
    run(instance, algorithm, seed=run_seed(seed, 0), reward=reward)  # compile and warm up first
    start = time.perf_counter()
    for r in range(n_runs):
        run(instance, algorithm, seed=run_seed(seed, r), reward=reward)
    return (time.perf_counter() - start) / n_runs


def cost(n_runs: int = 10, seed: int = 2024, reward: str = "beta", big: tuple[int, int] = (500, 20),
         experiments: Sequence[str] = EXPERIMENTS, algorithm: str = ALGORITHM,
         baseline: str = "css-lucb") -> pd.DataFrame:
    """Seconds per run of an algorithm and a baseline (same seeds) on every paper instance, plus a big one.

    The big instance has means uniform in [0.35, 0.9] and threshold 0.4 (seed 0),
    the workload of ``gbai benchmark --scaling``; the baseline is not run on it.
    Columns keep the default names (``betting``, ``css-lucb``) for any pair.
    """

    rows = []
    for name in experiments:
        experiment = get_experiment(name)
        for size in (experiment.sizes or [None]):
            for x in experiment.x_grid:
                instance = experiment.instance(x, size)
                betting = _seconds_per_run(instance, algorithm, n_runs, seed, reward)
                paper = _seconds_per_run(instance, baseline, n_runs, seed, reward)
                rows.append({"instance": instance.label, "betting_seconds": betting, "css-lucb_seconds": paper,
                             "betting / css-lucb": betting / paper})
    means = np.random.default_rng(0).uniform(0.35, 0.9, size=big)
    instance = Instance(means, 0.4)
    start = time.perf_counter()
    result = run(instance, algorithm, seed=run_seed(seed, 0), reward=reward)
    rows.append({"instance": f"random {big[0]} x {big[1]} (samples {result.samples}, stopped {result.stopped})",
                 "betting_seconds": time.perf_counter() - start, "css-lucb_seconds": np.nan,
                 "betting / css-lucb": np.nan})
    return pd.DataFrame(rows)
