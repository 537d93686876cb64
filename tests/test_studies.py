"""The studies layer (``gbai.studies``) and the drawing functions its notebooks call."""

# --- notebooks 10 to 12: the error-rate check and the grouped bars (helper D) ---------------

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import gbai  # noqa: E402
from gbai.plotting import plot_grouped_bars  # noqa: E402
from gbai.studies import error_check  # noqa: E402
from gbai.studies.beyond import ERROR_CHECK  # noqa: E402


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
    assert risky.means.mean(axis=1).argmax() not in risky.feasible_set, "the second one's highest-mean arm is infeasible"
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
