"""The step engine and the fast engine: same seed, same run, bit for bit."""

import numpy as np
import pytest

import gbai
from gbai import INFEASIBLE, NO_ANSWER, Decision, Instance, StepEngine

ALGORITHMS = list(gbai.PAPER_ALGORITHMS)

HAND_INSTANCES = {
    "table1 (risky arm)": gbai.table1_example(),
    "infeasible": Instance([[0.2, 0.8], [0.6, 0.15], [0.25, 0.5]], 0.35),
    "risky best mean": Instance([[0.6, 0.55], [0.9, 0.2], [0.45, 0.5]], 0.35),
    "single arm": Instance([[0.7, 0.6, 0.8]], 0.4),
    "single attribute": Instance([[0.7], [0.5], [0.2]], 0.4),
}


def _random_instances(count, seed=2024):
    """Random instances whose gaps are wide enough for short runs in the step engine."""
    rng = np.random.default_rng(seed)
    found = {}
    while len(found) < count:
        n, m = rng.integers(2, 5), rng.integers(1, 4)
        means = np.round(rng.uniform(0.05, 0.95, size=(n, m)), 2)
        threshold = round(float(rng.uniform(0.2, 0.6)), 2)
        arm_means = means.mean(axis=1)
        gaps = np.abs(arm_means[:, None] - arm_means[None, :])[np.triu_indices(n, 1)]
        if np.abs(means - threshold).min() < 0.1 or gaps.min() < 0.1:
            continue
        found[f"random {len(found)}"] = Instance(means, threshold)
    return found


AGREEMENT_INSTANCES = {**HAND_INSTANCES, **_random_instances(6)}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("reward", ["beta", "bernoulli"])
def test_engines_agree_exactly(algorithm, reward):
    covered = set()
    for name, instance in AGREEMENT_INSTANCES.items():
        for seed in range(4):
            kwargs = dict(delta=0.2, seed=seed, reward=reward, max_samples=40_000)
            fast = gbai.run(instance, algorithm, engine="fast", **kwargs)
            step = gbai.run(instance, algorithm, engine="step", **kwargs)
            assert fast.same_outcome(step), f"{algorithm}/{reward} on {name}, seed {seed}: {fast} vs {step}"
            covered.add("infeasible" if fast.answer == INFEASIBLE else "arm" if fast.stopped else "budget")
    # The comparison must have exercised both kinds of answers.
    assert {"infeasible", "arm"} <= covered


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_engines_agree_on_a_paper_instance(algorithm):
    instance = gbai.paper_instance("exp3", 0.3)  # a risky arm with the highest mean
    for seed in (0, 1):
        fast = gbai.run(instance, algorithm, seed=seed, max_samples=150_000)
        step = gbai.run(instance, algorithm, seed=seed, max_samples=150_000, engine="step")
        assert fast.same_outcome(step)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("engine", ["fast", "step"])
def test_unresolvable_instance_hits_the_budget(algorithm, engine):
    # The best arm's attribute sits exactly at the threshold: feasibility can never be
    # certified, so without a budget every algorithm would run forever.
    instance = Instance([[0.3, 0.9], [0.2, 0.2]], 0.3)
    result = gbai.run(instance, algorithm, seed=5, max_samples=20_000, engine=engine)
    assert not result.stopped
    assert result.answer == NO_ANSWER
    assert result.answer_label == "not stopped"
    assert instance.means.size <= result.samples <= 20_000
    assert result.counts.sum() == result.samples


def test_results_are_consistent():
    result = gbai.run(gbai.table1_example(), "css-lucb", seed=3)
    assert result.stopped and result.answer == 0
    assert result.counts.sum() == result.samples
    assert result.counts.min() >= 1
    # CSS-LUCB samples whole arms: every attribute of an arm has the same count.
    assert (result.counts == result.counts[:, :1]).all()
    assert result.rounds >= 1


def test_step_engine_exposes_round_states():
    instance = gbai.table1_example()
    engine = StepEngine(instance, gbai.CSSLUCB(), delta=0.1, seed=0)
    assert engine.t == 2 and engine.total_samples == 6
    assert (engine.counts == 1).all()
    first = engine.step()
    state = first.state
    assert state.t == 2
    np.testing.assert_array_equal(state.arm_means, state.means.mean(axis=1))
    radius = gbai.confidence_radius(2, 1, 6, 0.1)
    np.testing.assert_allclose(state.pair_upper - state.pair_lower, 2 * radius)
    sets = state.sets
    assert sets.feasible_attribute_set.shape == (3, 2)
    np.testing.assert_array_equal(
        sets.feasible_attribute_set, sets.perfectly_feasible_attribute_set | sets.almost_feasible_attribute_set
    )
    np.testing.assert_array_equal(sets.almost_feasible_set, sets.feasible_set & ~sets.perfectly_feasible_set)
    rounds = [first, *engine.rounds()]
    assert engine.finished
    assert rounds[-1].decision.stops and rounds[-1].decision.answer == engine.result.answer
    # Sampled pairs always belong to F_t^A, and i_t is pulled whenever the run goes on.
    for played in rounds[:-1]:
        pulls = played.decision.pulls
        assert not (pulls & ~played.state.sets.feasible_attribute_set).any()
        assert pulls[played.state.sets.best_feasible_arm].all()
    assert engine.result.same_outcome(gbai.run(instance, "css-lucb", delta=0.1, seed=0))
    with pytest.raises(RuntimeError):
        engine.step()


class UniformPolicy:
    """Sample every pair each round; stop on the perfectly feasible best arm."""

    name = "uniform"

    def reset(self, n_arms, n_attributes):
        self.shape = (n_arms, n_attributes)

    def decide(self, state):
        sets = state.sets
        if not sets.feasible_set.any():
            return Decision.stop(INFEASIBLE)
        if not (sets.feasible_set & sets.potential_set).any():
            return Decision.stop(sets.best_feasible_arm)
        return Decision.sample(np.ones(self.shape, dtype=bool))


def test_custom_policy_through_the_protocol():
    instance = gbai.table1_example()
    result = StepEngine(instance, UniformPolicy(), delta=0.1, seed=0).run()
    assert result.stopped and result.answer == 0 and result.algorithm == "uniform"
    assert (result.counts == result.counts[0, 0]).all()


class _Broken:
    name = "broken"

    def __init__(self, decision):
        self.decision = decision

    def reset(self, n_arms, n_attributes):
        pass

    def decide(self, state):
        return self.decision


@pytest.mark.parametrize(
    "decision, message",
    [
        (Decision.sample(np.zeros((3, 2), dtype=bool)), "loop forever"),
        (Decision.sample(np.ones((2, 2), dtype=bool)), "shape"),
        (Decision.stop(7), "invalid arm"),
        ("stop", "not a Decision"),
    ],
)
def test_bad_policies_are_reported(decision, message):
    engine = StepEngine(gbai.table1_example(), _Broken(decision), delta=0.1, seed=0)
    with pytest.raises(ValueError, match=message):
        engine.step()


def test_engine_argument_errors():
    instance = gbai.table1_example()
    with pytest.raises(ValueError, match="Policy protocol"):
        StepEngine(instance, object(), delta=0.1, seed=0)
    with pytest.raises(ValueError, match="max_samples"):
        gbai.run(instance, max_samples=3)
    with pytest.raises(ValueError, match="unknown algorithm"):
        gbai.run(instance, "lucb")
    with pytest.raises(ValueError, match="engine"):
        gbai.run(instance, engine="gpu")
    with pytest.raises(ValueError, match="Instance"):
        gbai.run(instance.means)


def test_a_fresh_css_lucb_decides_without_a_reset():
    # Notebook 3 asks gbai.CSSLUCB() for its stopping rule on another engine's state.
    engine = StepEngine(gbai.table1_example(), gbai.CSSLUCB(), delta=0.1, seed=3)
    for _ in range(5):
        state = engine.state()
        fresh = gbai.CSSLUCB().decide(state)
        used = engine.policy.decide(state)
        assert fresh.stops == used.stops and fresh.answer == used.answer
        assert (fresh.pulls == used.pulls).all()
        engine.step()


@pytest.mark.parametrize(("spec", "reward"), [("betting", "beta"), ("betting", "bernoulli"),
                                              ("betting:arm_test=none", "bernoulli"),
                                              ("betting:arm_test=average", "beta"),
                                              ("betting:sampling=uniform,union=every", "bernoulli"),
                                              (gbai.RECOMMENDED, "beta"), (gbai.RECOMMENDED, "bernoulli")])
def test_betting_engines_agree_exactly(spec, reward):
    # Betting-GBAI keeps a capital per ordered pair of arms and switches leaders: both engines
    # must still give the same run on every instance (including the single-arm and
    # single-attribute ones) and exercise both kinds of answers.
    covered = set()
    for name, instance in AGREEMENT_INSTANCES.items():
        for seed in range(2):
            kwargs = dict(delta=0.2, seed=seed, reward=reward, max_samples=20_000)
            fast = gbai.run(instance, spec, engine="fast", **kwargs)
            step = gbai.run(instance, spec, engine="step", **kwargs)
            assert fast.same_outcome(step), f"{spec}/{reward} on {name}, seed {seed}: {fast} vs {step}"
            covered.add("infeasible" if fast.answer == INFEASIBLE else "arm" if fast.stopped else "budget")
    assert {"infeasible", "arm"} <= covered


@pytest.mark.parametrize("spec", ["betting", gbai.RECOMMENDED])
@pytest.mark.parametrize("engine", ["fast", "step"])
def test_betting_unresolvable_instance_hits_the_budget(spec, engine):
    instance = Instance([[0.3, 0.9], [0.2, 0.2]], 0.3)
    result = gbai.run(instance, spec, seed=5, max_samples=20_000, engine=engine)
    assert not result.stopped and result.answer == NO_ANSWER and result.samples <= 20_000
