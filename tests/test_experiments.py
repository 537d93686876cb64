

def test_replicate_experiment_reports_the_claim_and_the_budget(tmp_path, monkeypatch):
    """The shared cells of notebooks 5-7: a small sweep, its figure and its report."""
    from gbai.plotting import replicate_experiment

    monkeypatch.setenv("GBAI_FIGURES_DIR", str(tmp_path))
    replication, _ = replicate_experiment("exp1", "replication", n_runs=2, delta=0.1, seed=0, workers=1)
    text = replication.report()
    assert f"at {int(replication.holds.sum())} of {len(replication.holds)} values of x" in text
    assert f"hit the sample budget: 0 of {len(replication.runs):,}" in text
    assert set(replication.comparison["other"]) == {"ae", "feasibility-then-bai"}
    assert (tmp_path / "replication.csv").exists() and (tmp_path / "replication.png").exists()
