"""The studies layer (gbai.studies) from its public functions, and the drawing functions its notebooks call.

Each test feeds a known input (an instance worked by hand, a synthetic run table, a
summary with round numbers) and checks the output against a value computed here
independently, so a wrong formula, a swapped column or a lost row fails it. Runs that
simulate are left to the tests of the notebooks' studies (test_experiments.py) and of
the references (test_references.py): these stay fast.
"""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from scipy import optimize  # noqa: E402

import gbai  # noqa: E402
from gbai import Instance  # noqa: E402
from gbai.plotting import plot_grouped_bars  # noqa: E402
from gbai.studies import EveryExperiment, error_check, near_limit, published  # noqa: E402
from gbai.studies.beyond import ERROR_CHECK  # noqa: E402


# ------------------------------------------------------------- near_limit
def _best_log_growth(up: float, down: float) -> float:
    """max over a bet b in (-1, 1) of up ln(1 + b) + down ln(1 - b), found numerically."""
    found = optimize.minimize_scalar(lambda b: -(up * math.log1p(b) + down * math.log1p(-b)),
                                     bounds=(-0.999999, 0.999999), method="bounded", options={"xatol": 1e-12})
    return -found.fun


def test_paired_limit_is_the_slowest_pair_plus_every_pair():
    # Best arm 0 (mean 0.6); for each other arm b, X_0 - X_b is +1 with probability
    # 0.6 (1 - mu_b) and -1 with probability mu_b 0.4, and the pair needs 1/g_b rounds
    # a nat, g_b the best expected log growth of a bet on it.
    means = [0.6, 0.45, 0.3]
    rounds = [1.0 / _best_log_growth(means[0] * (1 - mean), mean * (1 - means[0])) for mean in means[1:]]
    instance = Instance([[mean] for mean in means], 0.05)
    assert near_limit.paired_limit(instance) == pytest.approx(max(rounds) + sum(rounds), rel=1e-6)
    # Two arms: 2 / g with the bet (p+ - p-)/(p+ + p-) = 0.2/0.52 for means 0.6 and 0.4.
    up, down, bet = 0.36, 0.16, 0.2 / 0.52
    two = Instance([[0.6], [0.4]], 0.05)
    assert near_limit.paired_limit(two) == pytest.approx(2.0 / (up * math.log1p(bet) + down * math.log1p(-bet)))
    assert near_limit.paired_limit(Instance([[0.5], [0.5]], 0.05)) == math.inf
    with pytest.raises(ValueError, match="one attribute"):
        near_limit.paired_limit(Instance([[0.6, 0.7], [0.4, 0.5]], 0.05))
    with pytest.raises(ValueError, match="every arm feasible"):
        near_limit.paired_limit(Instance([[0.6], [0.04]], 0.05))


def test_study_instances_have_the_answers_worked_by_hand():
    # Answers from the means and thresholds written in near_limit (threshold 0.3):
    expected = {
        "near tie (arm means 0.600 vs 0.595)": 0,  # both feasible, 0.6 > 0.595
        "attributes 0.01 from the threshold": 0,  # arm 1 (mean 0.595) has 0.29; arm 0 (0.555) beats arm 2 (0.5)
        "high-mean infeasible arm": 1,  # arm 0 has 0.29; arm 1 (0.5) beats arm 2 (0.45)
        "infeasible instance": gbai.INFEASIBLE,  # every arm has an attribute below 0.3
        "N = 1 (one arm, an attribute at 0.32)": 0,
        "M = 1 (close second, one arm at 0.31)": 0,  # 0.5 > 0.49; 0.2 is infeasible
    }
    instances = near_limit.adversarial_instances()
    assert {name: instance.answer for name, instance in instances.items()} == expected
    for name, instance in near_limit.bai_instances().items():
        # Garivier & Kaufmann's instances: one attribute, every arm above 0.05, the first arm best.
        assert instance.n_attributes == 1 and instance.means.min() > instance.threshold
        assert instance.answer == 0 and instance.means[:, 0].tolist() == sorted(instance.means[:, 0], reverse=True)
        assert name.startswith(("mu1 = (0.5, 0.45", "mu2 = (0.3, 0.21"))


def test_bai_summary_reads_each_method_against_the_best_proven_reference():
    rows = []
    for delta, means in ((0.1, {"TaS-KT": 100.0, "TaS-GK": 80.0, "betting": 120.0}),
                         (0.01, {"TaS-KT": 150.0, "TaS-GK": 200.0, "betting": 180.0})):
        best = min(("TaS-KT", "TaS-GK"), key=means.get)
        for method, mean in means.items():
            rows.append({"delta": delta, "instance": "mu1", "method": method, "mean_samples": mean,
                         "se": mean / 100, "best proven reference": best, "/ best proven": mean / means[best]})
    summary = near_limit.bai_summary(pd.DataFrame(rows))
    assert summary["best proven reference"].tolist() == ["TaS-GK", "TaS-KT"]
    assert summary["its mean samples"].tolist() == [80.0, 150.0] and summary["its se"].tolist() == [0.8, 1.5]
    np.testing.assert_allclose(summary["betting / best"], [120 / 80, 180 / 150])
    np.testing.assert_allclose(summary["TaS-KT / best"].iloc[0], 100 / 80)
    np.testing.assert_allclose(summary["TaS-GK / best"].iloc[1], 200 / 150)


# ------------------------------------------------------------- published
def _published_runs_around(shift: float) -> pd.DataFrame:
    """Synthetic runs at every published point: as run, three runs centred on ``shift`` times
    the published value (spread 1% of it); as the text states it, two runs at twice it."""
    rows = []
    for point in published.published_figures().itertuples(index=False):
        centre = shift * point.mean_samples
        for variant, values in (("as run", [0.99 * centre, centre, 1.01 * centre]),
                                ("text", [2.0 * point.mean_samples] * 2)):
            for value in values:
                rows.append({"figure": point.figure, "x": point.x, "size": point.size, "name": point.algorithm,
                             "variant": variant, "samples": value, "stopped": True})
    runs = pd.DataFrame(rows)
    runs["size"] = runs["size"].astype("Int64")
    return runs


def test_verdict_table_judges_every_published_point_from_the_runs():
    points = published.published_figures()
    table = published.verdict_table(_published_runs_around(1.0))
    assert len(table) == len(points)
    np.testing.assert_allclose(table["as-run mean"], points["mean_samples"], rtol=1e-12)
    np.testing.assert_allclose(table["ratio text/published"], 2.0)
    # Our mean equals the published value: the point lies in every interval.
    assert (table["verdict"] == "reproduced").all() and (table["z"].abs() < 1e-9).all()
    # Our runs at 3 times the published value with a 1% spread: far out of every interval.
    far = published.verdict_table(_published_runs_around(3.0))
    assert (far["verdict"] == "not reproduced: published lower").all()
    np.testing.assert_allclose(far["ratio as-run/published"], 3.0)
    # The interval is reproduction_interval's with the authors' runs of each point.
    first = far.iloc[0]
    centre = 3.0 * points["mean_samples"].iloc[0]
    low, high = published.reproduction_interval(centre, 0.01 * centre, 3, int(points["authors_runs"].iloc[0]))
    assert (first["low"], first["high"]) == pytest.approx((low, high))


# ------------------------------------------------------------- every experiment
def test_every_experiment_ratios_divide_the_named_columns():
    summary = pd.DataFrame({
        "experiment": ["exp1"] * 4,
        "instance": ["exp1 x=0.31", "exp1 x=0.31", "exp1 x=0.32", "exp1 x=0.32"],
        "algorithm": ["a", "b", "a", "b"],
        "mean_samples": [300.0, 200.0, 90.0, 60.0],
        "ratio_to_T_star_kl": [3.0, 2.0, 4.5, 3.0],
        "ratio_to_bernoulli": [1.5, 1.0, 2.25, 1.5],
    })
    table = EveryExperiment(pd.DataFrame(), summary).ratios(
        {"a / b": ("a", "b"), "a / limit": ("a", "limit"), "b / Bernoulli": ("b", "bernoulli limit")})
    assert table.index.tolist() == [("exp1", "exp1 x=0.31"), ("exp1", "exp1 x=0.32")]
    np.testing.assert_allclose(table["a / b"], [1.5, 1.5])
    np.testing.assert_allclose(table["a / limit"], [3.0, 4.5])
    np.testing.assert_allclose(table["b / Bernoulli"], [1.0, 1.5])
    with pytest.raises(ValueError, match="the study ran"):
        EveryExperiment(pd.DataFrame(), summary).ratios({"c / a": ("c", "a")})


# ------------------------------------------------- notebooks 10 to 13: error check, grouped bars

def test_error_check_runs_the_two_check_instances_on_the_next_seed(tmp_path, monkeypatch):
    import gbai.studies.beyond as beyond

    monkeypatch.setenv("GBAI_CACHE_DIR", str(tmp_path))
    seeds = []
    real_sweep = beyond.sweep

    def watched(instances, algorithms, **options):
        seeds.append(options["seed"])
        return real_sweep(instances, algorithms, **options)

    monkeypatch.setattr(beyond, "sweep", watched)
    rates = error_check("css-lucb-plus", n_runs=5, delta=0.1, seed=7, workers=1)
    assert seeds == [8], "the check must draw new runs, not replay the study's (seed 7)"
    instances = {label: gbai.paper_instance(*point) for label, point in ERROR_CHECK.items()}
    feasible, risky = instances.values()
    assert feasible.best_arm is not None, "the first check instance has a feasible answer"
    assert risky.means.mean(axis=1).argmax() not in risky.feasible_set, \
        "the second one's highest-mean arm is infeasible"
    expected = gbai.error_rates(gbai.sweep(instances, ["css-lucb-plus"], n_runs=5, delta=0.1, seed=8, workers=1))
    pd.testing.assert_frame_equal(rates, expected)
    assert list(rates.index.get_level_values("instance")) == list(ERROR_CHECK)
    assert (rates["runs"] == 5).all()
    with pytest.raises(ValueError):
        error_check("no-such-algorithm", n_runs=2, delta=0.1, seed=0, workers=1)


def test_grouped_bars_place_each_series_by_its_rank_and_leave_a_gap_for_a_missing_one():
    table = pd.DataFrame({"second group": [2.0, 30.0], "first group": [1.0, 10.0]}, index=["a", "c"])
    fig, ax = plt.subplots()
    colors = plot_grouped_bars(ax, table, ["a", "b", "c"], ["first group", "second group"])
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    assert colors == {"a": cycle[0], "b": cycle[1], "c": cycle[2]}
    hex_cycle = [matplotlib.colors.to_hex(color) for color in cycle]
    bars = ax.patches
    assert len(bars) == 4, "one bar per present series and group, none for the missing series"
    width = 0.8 / 3
    centres = [bar.get_x() + bar.get_width() / 2 for bar in bars]
    # Series a at offset -width, c at +width (b's slot stays empty), groups in the given order.
    np.testing.assert_allclose(centres, [-width, 1 - width, width, 1 + width])
    assert [bar.get_height() for bar in bars] == [1.0, 2.0, 10.0, 30.0]
    assert [matplotlib.colors.to_hex(bar.get_facecolor()) for bar in bars] == [hex_cycle[0]] * 2 + [hex_cycle[2]] * 2
    assert [label.get_text() for label in ax.get_xticklabels()] == ["first\ngroup", "second\ngroup"]
    assert ax.get_yscale() == "log"
    plt.close(fig)
