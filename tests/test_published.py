"""The published figures as data: the CSV, the authors' typed instances and the verdict statistics."""

import numpy as np
import pandas as pd
import pytest

import gbai
from gbai.asrun.instances import typed_beta_parameter, typed_mean
from gbai.fast.rewards import draw, uniform
from gbai.paper.rewards import reward_exponents
from gbai.studies.published import AS_RUN_SPECS, AUTHORS_RUNS, published_figures, reproduction_interval, verdict


def test_published_points_load():
    table = published_figures()
    assert len(table) == 81
    assert set(table["figure"]) == {"fig1a", "fig1b", "fig1c", "fig2a", "fig2b"}
    assert set(table["algorithm"]) == {"css-lucb", "ae", "feasibility-then-bai"}
    assert table.loc[table["figure"] == "fig2a", "size"].tolist()[:5] == [4] * 5
    assert (table["mean_samples"] > 0).all()
    for (figure, algorithm), runs in AUTHORS_RUNS.items():
        assert algorithm in AS_RUN_SPECS[figure]
        assert runs is None or runs >= 1
    # Every spec resolves, and every published point has an instance.
    for specs in AS_RUN_SPECS.values():
        for spec in specs.values():
            gbai.resolve(spec)
    for row in table.itertuples():
        gbai.paper_instance(row.figure, row.x, None if pd.isna(row.size) else int(row.size))


def test_typed_means():
    assert typed_beta_parameter(0.6) == 0.67 and typed_mean(0.6) == pytest.approx(0.5988, abs=1e-4)
    for value, expected in [(0.7, 0.6993), (0.9, 0.9009), (0.35, 0.3497), (0.55, 0.5495), (0.15, 0.1499)]:
        assert typed_mean(value) == pytest.approx(expected, abs=1e-4)  # as-run fact A1's list
    with pytest.raises(ValueError):
        typed_beta_parameter(0.0)


def test_typed_instances_land_on_the_published_abscissae():
    """Figures 1b and 1c plot the authors' H_id of their typed instances (4 significant digits)."""
    table = published_figures()
    for figure in ("fig1b", "fig1c"):
        for x, plotted in table[table["figure"] == figure].drop_duplicates("x")[["x", "x_plotted"]].values:
            assert gbai.paper_instance(figure, x).hardness_index() == pytest.approx(plotted, rel=5e-4)
            table_instance = gbai.EXPERIMENTS[{"fig1b": "exp2", "fig1c": "exp3"}[figure]].instance(x)
            assert table_instance.hardness_index() != pytest.approx(plotted, rel=5e-4)


def test_published_instances_follow_the_authors_code():
    fig1a = gbai.paper_instance("fig1a", 0.33).means
    assert np.allclose(fig1a[3], [0.33, 0.5, typed_mean(0.6), typed_mean(0.9), 0.5])
    assert np.allclose(fig1a[4], [0.33, typed_mean(0.35), typed_mean(0.35), 0.8, typed_mean(0.9)])
    assert gbai.experiment_grid("fig1b") == (0.5, 0.54, 0.58, 0.62, 0.66, 0.7)
    m2 = gbai.paper_instance("fig2b", 0.4, 2).means
    assert np.allclose(m2[0], [typed_mean(0.6), typed_mean(0.7)])
    assert np.allclose(gbai.paper_instance("fig2b", 0.4, 3).means[0], [typed_mean(v) for v in (0.6, 0.7, 0.65)])
    assert np.allclose(gbai.paper_instance("fig2b", 0.4, 4).means[0], [typed_mean(v) for v in (0.55, 0.6, 0.65, 0.7)])
    assert gbai.paper_instance("fig2a", 0.4, 5).means.shape == (5, 2)


def test_reward_law_of_a_typed_entry():
    """Our draws use the exponent mu/(1 - mu); at mu = 1/(1 + b) it is the authors' 1/b up to
    a few ulps, so each draw differs from 1 - (1 - u)^(1/b) by rounding only."""
    key = np.uint64(12345)
    for value in (0.6, 0.7, 0.9, 0.35, 0.55, 0.15, 0.65, 0.45, 0.3):
        b = typed_beta_parameter(value)
        mean = 1.0 / (1.0 + b)
        exponent = reward_exponents(np.array([mean]))[0]
        assert abs(exponent - 1.0 / b) <= 8 * np.spacing(1.0 / b)
        for k in range(200):
            u = uniform(key, k)
            assert abs(draw(key, k, mean, exponent, 0) - (1.0 - (1.0 - u) ** (1.0 / b))) < 1e-14


def test_reproduction_interval_formula():
    low, high = reproduction_interval(100.0, 10.0, 20, 10)
    half = 2.093024054408263 * 10.0 * np.sqrt(1 / 10 + 1 / 20)  # t_{0.975, 19}
    assert (low, high) == pytest.approx((100.0 - half, 100.0 + half))
    for bad in [(100.0, 10.0, 1, 10), (100.0, 10.0, 20, 0)]:
        with pytest.raises(ValueError):
            reproduction_interval(*bad)


def test_verdict_coverage_when_the_variant_is_exact():
    """Simulate the authors' mean of 10 and our 20 runs from one normal law: the
    published value is declared reproduced in 95% of 4000 trials. Binomial standard
    deviation sqrt(0.95 * 0.05 / 4000) = 0.0034, so [0.94, 0.96] is about 3 sd wide
    each side."""
    rng = np.random.default_rng(9)
    hits = 0
    for _ in range(4000):
        published = rng.normal(1000.0, 50.0, size=10).mean()
        ours = rng.normal(1000.0, 50.0, size=20)
        hits += verdict(published, ours, authors_runs=10)["verdict"] == "reproduced"
    assert 0.94 <= hits / 4000 <= 0.96


def test_verdicts():
    samples = np.full(20, 1000.0) + np.arange(20)
    assert verdict(1009.0, samples, authors_runs=10)["verdict"] == "reproduced"
    assert verdict(900.0, samples, authors_runs=10)["verdict"] == "not reproduced: published lower"
    assert verdict(1200.0, samples, authors_runs=10)["verdict"] == "not reproduced: published higher"
    unfinished = np.ones(20, dtype=bool)
    unfinished[3] = False
    assert verdict(1009.0, samples, unfinished)["verdict"] == "not reproduced: runs did not finish"
    assert verdict(1009.0, samples[:1])["verdict"] == "too few runs"
    result = verdict(1009.0, samples, authors_runs=10)
    assert result["ratio"] == pytest.approx(samples.mean() / 1009.0)
