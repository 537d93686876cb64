

def test_replicate_experiment_reports_the_claim_and_the_budget(tmp_path, monkeypatch):
    """The shared cells of notebooks 5-7: a small sweep, its figure and its report.

    The report's numbers are recomputed here from the runs alone (planted fault: the
    claim's verdicts grouped by baseline instead of by instance fails this test).
    """
    import numpy as np

    from gbai.studies import replicate_experiment

    monkeypatch.setenv("GBAI_FIGURES_DIR", str(tmp_path))
    replication, _ = replicate_experiment("exp1", "replication", n_runs=2, delta=0.1, seed=0, workers=1)
    runs = replication.runs
    # Experiment 1's grid is x = 0.31, 0.32, ..., 0.35 (Table III): 5 points, 2 runs, 3 algorithms.
    assert len(runs) == 5 * 2 * 3
    samples = runs.pivot_table(index=["instance", "run"], columns="algorithm", values="samples")
    holds, ratios = 0, {"ae": [], "feasibility-then-bai": []}
    for _, group in samples.groupby(level="instance"):
        beats = []
        for other in ratios:
            difference = (group["css-lucb"] - group[other]).to_numpy(dtype=float)
            # The paired 95% interval of the difference lies below zero.
            beats.append(difference.mean() + 1.96 * difference.std(ddof=1) / np.sqrt(difference.size) < 0)
            ratios[other].append(group["css-lucb"].mean() / group[other].mean())
        holds += all(beats)
    unstopped = int((~runs["stopped"]).sum())
    text = replication.report()
    assert f"at {holds} of 5 values of x" in text
    assert f"hit the sample budget: {unstopped} of 30" in text
    for other, values in ratios.items():
        assert f"CSS-LUCB / {other}: {min(values):.3f} to {max(values):.3f}" in text
    assert (tmp_path / "replication.csv").exists() and (tmp_path / "replication.png").exists()


def test_error_rates_count_stopped_runs_and_bound_them_exactly():
    """No error in n stopped runs: the one-sided 95% Clopper-Pearson limit is 1 - 0.05^(1/n)."""
    import pandas as pd

    import gbai

    table = pd.DataFrame({"instance": ["a"] * 5, "algorithm": ["x"] * 5,
                          "stopped": [True, True, True, True, False], "error": [False] * 5})
    rates = gbai.error_rates(table).iloc[0]
    assert (rates["runs"], rates["stopped"], rates["errors"], rates["unstopped"]) == (5, 4, 0, 1)
    assert rates["error rate"] == 0.0
    assert abs(rates["95% upper limit"] - (1 - 0.05 ** (1 / 4))) < 1e-12
    # Every stopped run wrong, or none stopped: nothing bounds the error probability below 1.
    wrong = table.assign(error=table["stopped"], instance=["a"] * 4 + ["b"])
    assert gbai.error_rates(wrong)["95% upper limit"].tolist() == [1.0, 1.0]


def test_paired_statistics_come_from_one_function():
    """paired_comparison's interval and bai_comparison's paired se are paired_difference's, bit for bit."""
    import numpy as np
    import pandas as pd

    import gbai
    from gbai.experiments import paired_difference

    reference, other = np.array([12.0, 30.0, 7.0, 9.0]), np.array([10.0, 31.0, 2.0, 9.0])
    mean, se = paired_difference(reference, other)
    assert mean == 1.5 and se == np.std(reference - other, ddof=1) / 2
    assert np.isnan(paired_difference([1.0], [2.0])[1])
    table = pd.DataFrame({"instance": "i", "run": list(range(4)) * 2, "algorithm": ["a"] * 4 + ["b"] * 4,
                          "samples": np.concatenate([reference, other])})
    row = gbai.paired_comparison(table, "a", ["b"]).iloc[0]
    half = paired_difference(reference, other, 1.96)[1]
    assert (row["difference"], row["ci95_low"], row["ci95_high"]) == (mean, mean - half, mean + half)
    assert row["wins"] == 0.25 and row["verdict"] == "undecided"


def test_every_experiment_pools_the_paper_experiments_and_compares_instance_by_instance(tmp_path, monkeypatch):
    """The shared study of notebooks 10-12: a small sweep, its comparison table and its figure."""
    import pytest

    from gbai.studies import every_experiment

    monkeypatch.setenv("GBAI_FIGURES_DIR", str(tmp_path))
    study = every_experiment(["css-lucb-plus", "betting"], n_runs=2, delta=0.1, seed=0, workers=1)
    assert list(study.summary["experiment"].unique()) == ["exp1", "exp2", "exp3", "vary-n", "vary-m"]
    table = study.ratios({"ratio": ("css-lucb-plus", "betting"), "limit": ("betting", "limit")})
    means = study.summary.set_index(["algorithm", "instance"])["mean_samples"]
    first = table.index[0][1]
    assert table["ratio"].iloc[0] == means["css-lucb-plus", first] / means["betting", first]
    assert len(table) == study.summary["instance"].nunique()
    with pytest.raises(ValueError, match="the study ran"):
        study.ratios({"x": ("lma-glr", "betting")})
    study.draw("every")
    assert (tmp_path / "every.csv").exists() and (tmp_path / "every.png").exists()
