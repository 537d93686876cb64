"""How close Betting-GBAI (or another spec) comes to the limit: longer measurements than notebooks 11-12.

Four studies, each a function returning a table (notebook 13 runs the first and the
last; the runtimes section of the results page times its cells):

* :func:`bernoulli_ratios`: on every instance of experiments 1-3 and the varying-N
  and varying-M tables, with Bernoulli rewards, mean samples over
  ``T*(mu) kl(delta, 1 - delta)`` (Bernoulli divergence), for each delta of
  :data:`DELTAS`;
* :func:`beta_comparison`: the paper's Beta rewards, Betting-GBAI against
  CSS-LUCB+ on the same seeds, with the ratio to the ``K_inf`` limit of those laws
  (:func:`gbai.matching_divergence`);
* :func:`adversarial_errors`: :func:`gbai.error_rates` at delta = 0.5 on the instances of
  :func:`adversarial_instances`, with the exact (Clopper-Pearson) 95% upper limit;
* :func:`bai_comparison` and :func:`bai_summary`: Garivier & Kaufmann's plain
  best-arm instances (``M = 1``) at every delta of :data:`BAI_DELTAS`, against the
  proven references of :mod:`gbai.beyond.references` (Track-and-Stop and Top Two,
  each with the KT stop and with Garivier & Kaufmann's threshold), beside
  Track-and-Stop with the unproven heuristic threshold and with the oracle stop told
  the true means (a yardstick), with standard errors and the best proven reference
  of each (instance, delta).

Every run, the references' too, goes through :func:`gbai.sweep` and its cache, so an
interrupted measurement resumes where it stopped, and a second one reads the stored
runs.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..experiments import error_rates, paired_difference
from ..paper.model import Instance
from ..simulation import sweep
from .beyond import EVERY_EXPERIMENT, every_experiment

__all__ = ["ALGORITHM", "BAI_DELTAS", "DELTAS", "REFERENCES", "adversarial_errors", "adversarial_instances",
           "bai_comparison", "bai_instances", "bai_summary", "bernoulli_ratios", "beta_comparison", "paired_limit"]

#: The confidence levels of the Bernoulli table, from the paper's 0.1 down to 1e-10.
DELTAS = (1e-1, 1e-2, 1e-3, 1e-6, 1e-10)
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


def bernoulli_ratios(n_runs: int = 200, deltas: Sequence[float] = DELTAS, seed: int = 2024, workers: int | None = None,
                     cache_dir="default", experiments: Sequence[str] = EVERY_EXPERIMENT,
                     algorithm: str = ALGORITHM) -> pd.DataFrame:
    """An algorithm's (default Betting-GBAI) mean samples over ``T* kl(delta, 1-delta)``, Bernoulli rewards.

    One row per instance, one ``ratio at delta`` column per delta, then ``falls``:
    whether the ratio decreases at every step from the largest delta to the smallest.
    """
    # One sweep over the list of deltas: a spec whose sampling ignores delta plays each seed once.
    table = every_experiment([algorithm], n_runs=n_runs, delta=list(deltas), seed=seed, reward="bernoulli",
                             workers=workers, cache_dir=cache_dir, experiments=experiments).summary
    wide = table.pivot_table(index="instance", columns="delta", values="ratio_to_T_star_kl", sort=False)
    wide = wide[sorted(wide.columns, reverse=True)]
    wide["falls"] = (wide.diff(axis=1).iloc[:, 1:] < 0).all(axis=1)
    wide.columns = [f"ratio at {c:g}" if not isinstance(c, str) else c for c in wide.columns]
    unstopped = table.groupby("instance", sort=False)["unstopped_runs"].sum()
    errors = table.groupby("instance", sort=False)["error_rate"].max()
    return wide.assign(unstopped_runs=unstopped, max_error_rate=errors).reset_index()


def beta_comparison(n_runs: int = 200, deltas: Sequence[float] = (1e-1, 1e-6), seed: int = 2024,
                    workers: int | None = None, cache_dir="default",
                    experiments: Sequence[str] = EVERY_EXPERIMENT, algorithm: str = ALGORITHM) -> pd.DataFrame:
    """An algorithm (default Betting-GBAI) against CSS-LUCB+ on the paper's Beta rewards, same seeds."""
    rows = []
    every = every_experiment([algorithm, "css-lucb-plus"], n_runs=n_runs, delta=list(deltas), seed=seed,
                             reward="beta", workers=workers, cache_dir=cache_dir, experiments=experiments).summary
    for delta, summary in every.groupby("delta", sort=False):
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


def adversarial_errors(n_runs: int = 2000, delta: float = 0.5, seed: int = 12, workers: int | None = None,
                       cache_dir="default", rewards: Sequence[str] = ("bernoulli", "beta"),
                       algorithm: str = ALGORITHM) -> pd.DataFrame:
    """:func:`gbai.error_rates` of an algorithm (default Betting-GBAI) on :func:`adversarial_instances`, per reward.

    One row per (reward, instance), with the columns of :func:`gbai.error_rates` and ``mean_samples``.
    """
    parts = []
    for reward in rewards:
        table = sweep(adversarial_instances(), [algorithm], n_runs=n_runs, delta=delta, seed=seed, reward=reward,
                      workers=workers, cache_dir=cache_dir).assign(reward=reward)
        parts.append(error_rates(table, by=["reward", "instance"]).assign(
            mean_samples=table.groupby(["reward", "instance"])["samples"].mean()))
    return pd.concat(parts).reset_index()


def bai_instances() -> dict[str, Instance]:
    """The Bernoulli best-arm instances ``mu1``, ``mu2`` of Garivier & Kaufmann's (2016) experiments, with ``M = 1``.

    The threshold 0.05 lies below every mean, so every arm is feasible and the
    answer is the best arm; the grouped algorithms still have to show it feasible.
    """
    return {
        "mu1 = (0.5, 0.45, 0.43, 0.4)": Instance([[0.5], [0.45], [0.43], [0.4]], 0.05),
        "mu2 = (0.3, 0.21, 0.2, 0.19, 0.18)": Instance([[0.3], [0.21], [0.2], [0.19], [0.18]], 0.05),
    }


def paired_limit(instance: Instance) -> float:
    """Samples per nat of ``ln(1/delta)``, as delta -> 0, of a design that pairs rewards one to one (Bernoulli).

    Betting-GBAI's arm test "``a`` above ``b``" bets on ``X_a - X_b`` over complete
    arm-rounds (notebook 12, section 1), so on a one-attribute instance whose arms
    are all feasible each pair test with the best arm ``a`` needs ``1/g_b`` rounds per
    nat, ``g_b = max_lambda E ln(1 + lambda (X_a - X_b))``, and arm ``a`` needs as many
    rounds as its most demanding pair: ``max_b 1/g_b + sum_b 1/g_b``. With Bernoulli
    rewards ``X_a - X_b`` is 1, 0 or -1 with probabilities ``p+ = mu_a (1 - mu_b)``,
    ``1 - p+ - p-``, ``p- = mu_b (1 - mu_a)``, and the best bet is
    ``(p+ - p-)/(p+ + p-)``. Compare with ``T*`` (:func:`gbai.characteristic_time`):
    their ratio is the factor this design loses to the limit, whatever the stop.
    Infinite when the best arm is tied. A ValueError for an instance with several
    attributes or an infeasible arm.
    """
    if not isinstance(instance, Instance) or instance.n_attributes != 1:
        raise ValueError("paired_limit needs a gbai Instance with one attribute (M = 1)")
    means = instance.means[:, 0]
    if not (means > instance.threshold).all():
        raise ValueError("paired_limit needs every arm feasible (every mean above the threshold)")
    a = instance.answer
    rounds = []
    for b in range(means.size):
        if b == a:
            continue
        up, down = means[a] * (1 - means[b]), means[b] * (1 - means[a])
        if not up > down:
            return float("inf")  # a tie: no bet on the difference grows
        bet = (up - down) / (up + down)
        rounds.append(1.0 / (up * np.log1p(bet) + down * np.log1p(-bet)))
    return max(rounds) + sum(rounds)


#: The confidence levels of the best-arm comparison.
BAI_DELTAS = (1e-1, 1e-2, 1e-4, 1e-6, 1e-10)
#: The reference rows of the best-arm comparison: ``(method, spec, status)`` (:mod:`gbai.beyond.references`).
#: Only the ``"proven"`` ones compete for the best reference.
REFERENCES = (
    ("TaS-KT", "track-and-stop", "proven"),
    ("TaS-GK", "track-and-stop:stopping=gk", "proven"),
    ("TopTwo-KT", "top-two", "proven"),
    ("TopTwo-GK", "top-two:stopping=gk", "proven"),
    ("TaS-bets", "track-and-stop:stopping=bets", "proven"),
    ("TaS-heuristic", "track-and-stop:stopping=heuristic", "unproven"),
    ("TaS-oracle", "track-and-stop:stopping=oracle", "yardstick (told the means)"),
)


def bai_comparison(n_runs: int = 200, deltas: Sequence[float] = BAI_DELTAS, seed: int = 2024,
                   algorithms: Sequence[str] = (ALGORITHM,), workers: int | None = None,
                   cache_dir="default") -> pd.DataFrame:
    """Mean samples on :func:`bai_instances` of the references of :data:`REFERENCES` and of ``algorithms``, same seeds.

    One row per (delta, instance, method), Bernoulli rewards: ``status`` (``proven``,
    ``unproven``, ``yardstick (told the means)`` or ``algorithm``), ``mean_samples`` and
    its standard error ``se``, ``errors`` (wrong answers among stopped runs) and
    ``unstopped``; ``best proven reference`` names the proven reference with the
    fewest mean samples at that (delta, instance), ``/ best proven`` divides by its
    mean, and ``paired se of the difference`` is :func:`gbai.experiments.paired_difference`'s
    standard error of the mean difference of paired runs to it (run ``r`` of every method
    uses the rewards of :func:`gbai.run_seed` ``(seed, r)``). One :func:`gbai.sweep` over
    the references and ``algorithms``, spread over ``workers`` processes (default: all cores).
    """
    instances = bai_instances()
    deltas = [float(delta) for delta in deltas]
    # The references' sampling never looks at delta: sweep plays each of their seeds once for every delta.
    every = sweep(instances, [spec for _, spec, _ in REFERENCES] + list(algorithms), n_runs=n_runs, delta=deltas,
                  seed=seed, reward="bernoulli", workers=workers, cache_dir=cache_dir)
    method = {spec: name for name, spec, _ in REFERENCES}
    status = {name: kind for name, _, kind in REFERENCES}
    rows = []
    for (delta, name), table in every.groupby(["delta", "instance"], sort=False):
        cell = {method.get(spec, spec): group for spec, group in table.groupby("algorithm", sort=False)}
        proven = [label for label in cell if status.get(label) == "proven"]
        best = min(proven, key=lambda label: cell[label]["samples"].mean())
        for label, data in cell.items():
            samples = data["samples"].to_numpy(dtype=float)
            rows.append({
                "delta": delta, "instance": name, "method": label, "status": status.get(label, "algorithm"),
                "mean_samples": samples.mean(), "se": samples.std(ddof=1) / np.sqrt(samples.size),
                "errors": int(data["error"].sum()), "unstopped": int((~data["stopped"]).sum()),
                "best proven reference": best, "/ best proven": samples.mean() / cell[best]["samples"].mean(),
                "paired se of the difference": paired_difference(samples, cell[best]["samples"])[1],
            })
    return pd.DataFrame(rows)


def bai_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (delta, instance) of :func:`bai_comparison`: the best proven reference, every other method's ratio to it."""
    rows = []
    for (delta, name), cell in table.groupby(["delta", "instance"], sort=False):
        best = cell["best proven reference"].iloc[0]
        reference = cell[cell["method"] == best].iloc[0]
        row = {"delta": delta, "instance": name, "best proven reference": best,
               "its mean samples": reference["mean_samples"], "its se": reference["se"]}
        for _, other in cell[cell["method"] != best].iterrows():
            row[f"{other['method']} / best"] = other["/ best proven"]
        rows.append(row)
    return pd.DataFrame(rows)
