"""The model: validation, feasibility, answers, the sets S and R, gaps and H_id."""

import math
import warnings

import numpy as np
import pytest

import gbai
from gbai import INFEASIBLE, HardnessWarning, Instance


def test_table1_example_by_hand():
    # Table I with mu_TH = 0.3: arms 1 and 3 of the paper (0 and 2 here) are feasible,
    # arm 2 of the paper (1 here) has the highest mean but attribute 1 = 0.2 < 0.3.
    example = gbai.table1_example()
    np.testing.assert_allclose(example.arm_means, [0.5, 0.6, 0.4])
    assert example.feasible_set == (0, 2)
    assert example.is_feasible
    assert example.best_arm == 0 and example.answer == 0
    assert example.suboptimal_set == (2,)
    assert example.risky_set == (1,)
    assert example.runner_up == 2
    # Delta_i* = 0.5 - 0.4 = 0.1; Delta_i*^attr = 0.4 - 0.3 = 0.1 -> 1/min(0.05, 0.1)^2 = 400.
    # Arm 2 (F and S): 1/(0.1/2)^2 = 400. Arm 1 (not F, R): 1/(|0.2 - 0.3|)^2 = 100.
    np.testing.assert_allclose(example.hardness_terms(), [400.0, 100.0, 400.0])
    assert example.hardness_index() == pytest.approx(900.0, rel=1e-12)


def test_infeasible_instance_keeps_only_attribute_terms():
    # No arm feasible: S is empty, every arm is risky, H = sum 1/(Delta_i^attr)^2.
    instance = Instance([[0.2, 0.9], [0.5, 0.1], [0.25, 0.25]], 0.3)
    assert not instance.is_feasible
    assert instance.answer == INFEASIBLE and instance.best_arm is None
    assert instance.suboptimal_set == ()
    assert instance.risky_set == (0, 1, 2)
    assert np.isnan(instance.gaps).all()
    expected = 1 / 0.1**2 + 1 / 0.2**2 + 1 / 0.05**2
    assert instance.hardness_index() == pytest.approx(expected, rel=1e-12)


def test_infeasible_suboptimal_arm_uses_the_larger_gap():
    # Arm 0 best feasible (mean 0.6). Arm 1 infeasible and sub-optimal: mean 0.3,
    # Delta = 0.3 (half: 0.15), Delta^attr = |0.1 - 0.3| = 0.2 -> 1/max(0.15, 0.2)^2 = 25.
    instance = Instance([[0.6, 0.6], [0.1, 0.5]], 0.3)
    assert instance.suboptimal_set == (1,)
    assert instance.risky_set == ()
    # Best arm: Delta = 0.3 -> 0.15; Delta^attr = 0.3 -> 1/0.15^2.
    np.testing.assert_allclose(instance.hardness_terms(), [1 / 0.15**2, 25.0])


def test_best_arm_without_suboptimal_arms():
    # Only risky arms besides the best one: no i**, so only Delta_i*^attr counts.
    instance = Instance([[0.5, 0.4], [0.9, 0.1]], 0.3)
    assert instance.suboptimal_set == ()
    assert instance.runner_up is None
    assert math.isinf(instance.gaps[0])
    assert instance.hardness_index() == pytest.approx(1 / 0.1**2 + 1 / 0.2**2)


def test_paper_competitor_may_be_infeasible_and_variant_differs():
    # Experiment 2 (reading note 9): i** is the infeasible arm 4 (index 3, mean 0.73),
    # so H_id hardly moves with x; the "feasible" variant takes arm 2 (index 1) instead.
    instance = gbai.paper_instance("exp2", 0.5)
    assert instance.runner_up == 3
    paper = instance.hardness_index()
    variant = instance.hardness_index(competitor="feasible")
    assert paper > 4e4  # dominated by 1/(0.01/2)^2 = 40000
    assert variant < paper
    with pytest.raises(ValueError, match="competitor"):
        instance.hardness_index(competitor="other")


def test_tie_for_best_feasible_arm_is_infinite_with_a_warning():
    instance = Instance([[0.5, 0.7], [0.7, 0.5], [0.1, 0.2]], 0.3)
    assert not instance.has_unique_answer
    assert instance.best_arms == (0, 1)
    with pytest.warns(HardnessWarning, match="tie"):
        assert math.isinf(instance.hardness_index())


def test_best_arm_attribute_at_threshold_is_infinite_with_a_warning():
    instance = Instance([[0.3, 0.9], [0.4, 0.4]], 0.3)
    assert instance.best_arm == 0
    with pytest.warns(HardnessWarning, match="exactly at the threshold"):
        assert math.isinf(instance.hardness_index())


def test_suboptimal_arm_at_threshold_keeps_a_finite_index():
    # A feasible sub-optimal arm never needs its feasibility settled: its term uses Delta_i.
    instance = Instance([[0.8, 0.8], [0.3, 0.5]], 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = instance.hardness_index()
    assert math.isfinite(value)


def test_decimal_ties_survive_floating_point():
    # vary-n at x = 0.40: (0.4 + 0.9)/2 and (0.6 + 0.7)/2 are both 0.65 on paper but can
    # differ in the last bit; the infeasible arm must then be risky, not sub-optimal.
    instance = gbai.paper_instance("vary-n", 0.40, 6)
    assert 1 in instance.risky_set
    assert 1 not in instance.suboptimal_set
    assert gbai.paper_instance("vary-n", 0.38, 6).suboptimal_set[0] == 1


@pytest.mark.parametrize(
    "means, message",
    [
        ([[0.5, 1.2]], "lie in \\[0, 1\\]"),
        ([[0.5, -0.1]], "lie in \\[0, 1\\]"),
        ([[0.5, float("nan")]], "NaN"),
        ([0.5, 0.4], "2-D"),
        ([[[0.5]]], "2-D"),
        (np.zeros((0, 3)), "at least one arm"),
        ([["a", "b"]], "numeric"),
        ([[0.5, 0.4], [0.3]], "numeric"),
    ],
)
def test_bad_means_are_rejected(means, message):
    with pytest.raises(ValueError, match=message):
        Instance(means, 0.3)


@pytest.mark.parametrize("threshold", [0.0, 1.0, -0.2, 1.5, float("nan"), "high"])
def test_bad_thresholds_are_rejected(threshold):
    with pytest.raises(ValueError, match="threshold"):
        Instance([[0.5]], threshold)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 2.0, float("nan"), None])
def test_bad_deltas_are_rejected(delta):
    with pytest.raises(ValueError, match="delta"):
        gbai.check_delta(delta)
    with pytest.raises(ValueError, match="delta"):
        gbai.run(gbai.table1_example(), delta=delta)


def test_instance_is_read_only():
    instance = gbai.table1_example()
    with pytest.raises(ValueError):
        instance.means[0, 0] = 0.1


def test_load_instance_from_csv(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("attr1,attr2\n0.6,0.4\n0.2,1.0\n\n0.4,0.4\n")
    instance = gbai.load_instance(path, 0.3)
    np.testing.assert_array_equal(instance.means, gbai.table1_example().means)
    assert instance.label == "mine"
    (tmp_path / "plain.csv").write_text("0.5,0.5\n0.6,0.2\n")
    assert gbai.load_instance(tmp_path / "plain.csv", 0.3).answer == 0


def test_load_instance_errors(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        gbai.load_instance(tmp_path / "missing.csv", 0.3)
    (tmp_path / "ragged.csv").write_text("0.5,0.5\n0.6\n")
    with pytest.raises(ValueError, match="different numbers of columns"):
        gbai.load_instance(tmp_path / "ragged.csv", 0.3)
    (tmp_path / "text.csv").write_text("0.5,0.5\nfoo,bar\n")
    with pytest.raises(ValueError, match="line 2"):
        gbai.load_instance(tmp_path / "text.csv", 0.3)
    (tmp_path / "empty.csv").write_text("\n")
    with pytest.raises(ValueError, match="no rows"):
        gbai.load_instance(tmp_path / "empty.csv", 0.3)


def test_paper_instances_match_the_tables():
    exp1 = gbai.paper_instance("exp1", 0.31)
    assert exp1.means.shape == (5, 5) and exp1.threshold == 0.3
    assert exp1.means[0, 0] == exp1.means[3, 0] == exp1.means[4, 0] == 0.31
    assert exp1.feasible_set == (0, 3, 4)
    exp3 = gbai.paper_instance("exp3", 0.3)
    assert exp3.threshold == 0.35
    # Arm 5 of Table III (index 4) has attribute 0.3 < 0.35: infeasible although unshaded.
    assert exp3.feasible_set == (0, 1)
    assert exp3.risky_set == (2,)  # the risky arm whose attribute x varies
    assert gbai.paper_instance("vary-n", 0.4, 4).means.shape == (4, 2)
    assert gbai.paper_instance("vary-m", 0.4, 3).means.shape == (5, 3)
    assert gbai.experiment_grid("exp1") == (0.31, 0.32, 0.33, 0.34, 0.35)
    assert gbai.experiment_grid("exp2") == (0.5, 0.55, 0.6, 0.65, 0.7)
    assert gbai.experiment_grid("exp3") == (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
    assert gbai.experiment_grid("vary-n") == (0.38, 0.4, 0.42, 0.44, 0.46)
    assert list(gbai.EXPERIMENT_TITLES) == ["exp1", "exp2", "exp3", "vary-n", "vary-m"]  # Section VI, not Table I
    for name, experiment in gbai.EXPERIMENTS.items():
        for x in experiment.x_grid or [None]:
            for size in experiment.sizes or [None]:
                assert gbai.paper_instance(name, x, size).is_feasible


def test_paper_instance_errors():
    with pytest.raises(ValueError, match="needs a value for x"):
        gbai.paper_instance("exp1")
    with pytest.raises(ValueError, match="no free entry"):
        gbai.paper_instance("example", 0.3)
    with pytest.raises(ValueError, match="unknown experiment"):
        gbai.paper_instance("exp9", 0.3)
    with pytest.raises(ValueError, match="must be one of"):
        gbai.paper_instance("vary-n", 0.4, 7)
    with pytest.raises(ValueError, match="takes no size"):
        gbai.paper_instance("exp1", 0.31, 4)
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        gbai.paper_instance("exp1", 1.31)
