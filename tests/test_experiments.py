

def test_replicate_experiment_reports_the_claim_and_the_budget(tmp_path, monkeypatch):
    """The shared cells of notebooks 5-7: a small sweep, its figure and its report."""
    from gbai.studies import replicate_experiment

    monkeypatch.setenv("GBAI_FIGURES_DIR", str(tmp_path))
    replication, _ = replicate_experiment("exp1", "replication", n_runs=2, delta=0.1, seed=0, workers=1)
    text = replication.report()
    assert f"at {int(replication.holds.sum())} of {len(replication.holds)} values of x" in text
    assert f"hit the sample budget: 0 of {len(replication.runs):,}" in text
    assert set(replication.comparison["other"]) == {"ae", "feasibility-then-bai"}
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
