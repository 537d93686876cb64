"""The authors' as-run variants: each switch does what the as-run facts say; at the text's settings they are the
paper's algorithms."""

import math

import numpy as np
import pytest

import gbai
from gbai import CRASHED, INFEASIBLE, Instance
from gbai.asrun.variants import (
    OPTIONS,
    PRESETS,
    RADIUS_AE_AUTHORS,
    RADIUS_FTB_AUTHORS,
    RADIUS_SHARED,
    RADIUS_TEXT,
    action_elimination_decide,
    css_lucb_decide,
    feasibility_then_bai_decide,
    run_variant,
)
from gbai.asrun.variants import (
    radius as as_run_radius,
)
from gbai.paper.model import CONTINUE, RESTART
from gbai.paper.rewards import RewardStream, pair_keys

#: Wide gaps, so that even the as-run radii (20 initial samples, batches of 10) end
#: the runs within a few tens of thousands of samples.
EASY = {
    "easy": Instance([[0.85, 0.9], [0.25, 0.8], [0.55, 0.6]], 0.4),
    "infeasible": Instance([[0.15, 0.9], [0.2, 0.8]], 0.5),
    "risky best mean": Instance([[0.6, 0.55], [0.95, 0.15], [0.3, 0.5]], 0.35),
}


def _single_switch_specs():
    """Every option value other than the default, one at a time, and every preset."""
    specs = []
    for name, options in OPTIONS.items():
        for key, values in options.items():
            specs += [f"{name}:{key}={value}" for value in values[1:]]
        specs += [f"{name}:as={preset}" for preset in PRESETS[name] if preset != "text"]
    return specs


@pytest.mark.parametrize("spec", _single_switch_specs())
def test_every_switch_runs_to_an_answer_and_only_in_the_compiled_engine(spec):
    covered = set()
    for instance in EASY.values():
        for seed in range(2):
            result = gbai.run(instance, spec, delta=0.1, seed=seed, max_samples=60_000)
            assert result.counts.min() >= 1
            covered.add("crashed" if result.answer == CRASHED else result.answer_label.split(" ")[0])
    assert covered & {"arm", "infeasible", "crashed"}, f"{spec}: no run ended with an answer ({covered})"
    with pytest.raises(ValueError, match="compiled engine only"):
        gbai.run(EASY["easy"], spec, engine="step")


@pytest.mark.parametrize("name", list(OPTIONS))
def test_the_shared_loop_at_the_text_settings_is_the_paper_algorithm(name):
    """The as-run loop with every option at the text's reading runs the paper layer's algorithm, run for run."""
    options = {key: values[0] for key, values in OPTIONS[name].items()}
    for instance in [gbai.paper_instance("exp3", 0.3), gbai.paper_instance("vary-n", 0.44, 5), *EASY.values()]:
        for seed in range(3):
            reference = gbai.run(instance, name, seed=seed, engine="step")
            keys = pair_keys(seed, instance.n_arms, instance.n_attributes)
            [(answer, samples, rounds, counts, stopped)] = run_variant(name, instance, np.array([0.1]), keys, 0,
                                                                       10**8, options)
            assert (answer, samples, rounds, stopped) == (reference.answer, reference.samples, reference.rounds,
                                                          reference.stopped)
            assert np.array_equal(counts, reference.counts)
    assert PRESETS[name]["text"] == {}


def test_presets_expand_to_their_switches():
    assert gbai.resolve("css-lucb:as=fig1").spec == "css-lucb:count=authors,init=20,radius=authors,ties=authors"
    assert gbai.resolve("css-lucb:as=fig2").spec == (
        "css-lucb:arm_count=sum,count=authors,init=20,radius=authors,sampling=undecided,ties=authors")
    assert gbai.resolve("css-lucb:as=text").spec == "css-lucb"
    # An explicit option overrides the preset, whatever the order.
    assert gbai.resolve("ae:radius=shared,as=published").options["radius"] == "shared"
    for bad in ["css-lucb:as=fig9", "ae:as=published,as=text", "lma-glr:as=text"]:
        with pytest.raises(ValueError, match="preset"):
            gbai.resolve(bad)


# --------------------------------------------------------------- the radii
def test_radius_formulas():
    n, m, delta = 5, 4, 0.1
    for count, t_round, samples in [(1, 2, 20), (20, 7, 400), (12345, 999, 10**6)]:
        expected = {
            RADIUS_TEXT: math.sqrt(math.log(4 * n * m * t_round**4 / delta) / (2 * count)),
            RADIUS_SHARED: math.sqrt(math.log(n * (m + 1) * (samples + 1) ** 3 / (2 * delta)) / (2 * count)),
            RADIUS_AE_AUTHORS: math.sqrt(2 * math.log(2 * n * (math.pi**2 / 6) * count**2 / delta) / count),
            RADIUS_FTB_AUTHORS: math.sqrt(math.log(n * (m + 1) * (samples + 1) ** 3 / (2 * delta)) / (4 * count)),
        }
        for mode, value in expected.items():
            got = as_run_radius(mode, count, n, m, delta, t_round, samples)
            # Logs of products are evaluated as sums of logs: a few ulps apart.
            assert got == pytest.approx(value, rel=1e-12), (mode, count)
    # The authors' baselines' radius is wider than their CSS-LUCB's at the same count
    # (notebook 10 measures by how much at the published points).
    assert as_run_radius(RADIUS_AE_AUTHORS, 20_000, 5, 5, 0.2, 0, 0) > as_run_radius(
        RADIUS_SHARED, 20_000, 5, 5, 0.1, 0, 500_000)


def test_css_lucb_as_run_matches_a_numpy_loop_of_its_formula():
    """CSS-LUCB as run for Figure 1, written out in numpy on the paper layer's rewards: 20 samples of
    every pair, the authors' radius with t = samples + 1, ties to the last maximum for i*_t and i_t,
    the count plus one. The compiled variant must give the same answer, samples and rounds."""
    instance = gbai.paper_instance("fig2a", 0.4, 4)
    n, m = instance.means.shape
    for seed in range(3):
        stream = RewardStream(instance.means, gbai.run_seed(0, seed))
        counts = np.full((n, m), 20)
        sums = np.array([[stream.samples(i, j, 20).sum() for j in range(m)] for i in range(n)])
        rounds = 1
        while True:
            samples = int(counts.sum())
            log_value = np.log(n * (m + 1) * float(samples + 1) ** 3 / (2 * 0.1))
            means = sums / counts
            pair_radius = np.sqrt(log_value / (2 * counts))
            arm_radius = np.sqrt(log_value / (2 * counts.min(axis=1)))
            arm_means = means.mean(axis=1)
            feasible = (means + pair_radius >= instance.threshold).all(axis=1)
            perfect = (means - pair_radius >= instance.threshold).all(axis=1)
            last_best = lambda members, arm_means=arm_means: np.flatnonzero(  # noqa: E731
                members & (arm_means == arm_means[members].max()))[-1]
            if perfect.any():
                best = last_best(perfect)
                potential = arm_means + arm_radius >= arm_means[best] - arm_radius[best]
                potential[best] = False
            else:
                potential = np.ones(n, dtype=bool)
            if not (feasible & potential).any():
                answer = last_best(feasible) if feasible.any() else INFEASIBLE
                break
            leader = last_best(feasible)
            others = feasible.copy()
            others[leader] = False
            chosen = [leader] + ([int(np.argmax(np.where(others, arm_means + arm_radius, -np.inf)))]
                                 if others.any() else [])
            for i in chosen:
                for j in range(m):
                    sums[i, j] += stream.sample(i, j, int(counts[i, j]))
                    counts[i, j] += 1
            rounds += 1
        result = gbai.run(instance, "css-lucb:as=fig1", seed=gbai.run_seed(0, seed))
        assert (result.answer, result.samples, result.rounds) == (answer, counts.sum() + 1, rounds)
        assert np.array_equal(result.counts, counts)


# --------------------------------------------------------------- CSS-LUCB switches
def _css(means, counts, threshold, **switches):
    settings = dict(radius_mode=RADIUS_TEXT, arm_sum=False, last_ties=False, undecided=False)
    settings.update(switches)
    pulls = np.zeros(means.shape, dtype=np.int64)
    answer = css_lucb_decide(means, counts, 50, int(counts.sum()), threshold, 0.1, settings["radius_mode"],
                               settings["arm_sum"], settings["last_ties"], settings["undecided"], pulls)
    return answer, pulls


def test_css_ties_take_the_last_maximum():
    means = np.array([[0.7, 0.7], [0.7, 0.7], [0.6, 0.65]])
    counts = np.full(means.shape, 100, dtype=np.int64)
    first = _css(means, counts, 0.3)[1]
    last = _css(means, counts, 0.3, last_ties=True)[1]
    assert first[0].all() and first[1].all()  # i_t = 0, c_t = 1
    assert last[1].all() and last[0].all()  # i_t = 1, c_t = 0 (the first of the others)
    assert first[2].sum() == last[2].sum() == 0


def test_css_arm_radius_from_the_sum_of_counts():
    counts = np.full((2, 2), 1000, dtype=np.int64)
    a_min = as_run_radius(RADIUS_TEXT, 1000, 2, 2, 0.1, 50, 0)
    a_sum = as_run_radius(RADIUS_TEXT, 2000, 2, 2, 0.1, 50, 0)
    gap = a_min + a_sum  # between 2 a_sum and 2 a_min: separated only with the narrower arm radius
    means = np.array([[0.8, 0.8], [0.8 - gap, 0.8 - gap]])
    assert _css(means, counts, 0.3)[0] == CONTINUE
    assert _css(means, counts, 0.3, arm_sum=True)[0] == 0


def test_css_undecided_sampling():
    counts = np.full((2, 3), 400, dtype=np.int64)
    r = as_run_radius(RADIUS_TEXT, 400, 2, 3, 0.1, 50, 0)
    means = np.array([[0.8, 0.3 + r / 2, 0.8], [0.75, 0.8, 0.3 + 3 * r]])  # arm 0's attribute 1 is undecided
    answer, everything = _css(means, counts, 0.3)
    assert answer == CONTINUE and everything.sum() == 6
    answer, targeted = _css(means, counts, 0.3, undecided=True)
    assert answer == CONTINUE and targeted.tolist() == [[0, 1, 0], [0, 0, 0]]
    settled = np.array([[0.8, 0.8, 0.8], [0.79, 0.8, 0.8]])  # nothing undecided: all of i_t and c_t
    assert _css(settled, counts, 0.3, undecided=True)[1].sum() == 6


# --------------------------------------------------------------- AE switches
def _ae(means, counts, threshold, active=None, **switches):
    settings = dict(radius_mode=RADIUS_TEXT, strict=False, reference=False, authors_stopping=False, batch=1)
    settings.update(switches)
    active = np.ones(means.shape[0], dtype=bool) if active is None else active
    pulls = np.zeros(means.shape, dtype=np.int64)
    answer = action_elimination_decide(means, counts, 50, int(counts.sum()), threshold, 0.1, settings["radius_mode"],
                              settings["strict"], settings["reference"], settings["authors_stopping"],
                              settings["batch"], active, pulls)
    return answer, active, pulls


def test_ae_strict_attribute_rule():
    counts = np.full((2, 2), 500, dtype=np.int64)
    r = as_run_radius(RADIUS_TEXT, 500, 2, 2, 0.1, 50, 0)
    means = np.array([[0.8, 0.8], [0.6, 0.5]])
    threshold = 0.5 + r  # arm 1's attribute 1 has U_ij == threshold exactly
    assert _ae(means, counts, threshold)[1].tolist() == [True, True]
    assert _ae(means, counts, threshold, strict=True)[1].tolist() == [True, False]


def test_ae_reference_rule_keeps_an_arm_that_no_one_beats_on_sums():
    counts = np.full((3, 2), 100_000, dtype=np.int64)
    means = np.array([[0.9, 0.9], [0.95, 0.35], [0.6, 0.6]])
    answer, active, _ = _ae(means, counts, 0.3)
    assert answer == 0 and active.tolist() == [True, False, False]  # text: arm 0 certified
    answer, active, pulls = _ae(means, counts, 0.3, reference=True, batch=10)
    # Reference = arm 1 (largest single upper bound): it drops arm 2 but can never drop arm 0.
    assert answer == CONTINUE and active.tolist() == [True, True, False]
    assert pulls.tolist() == [[10, 10], [10, 10], [0, 0]]  # batch=10


def test_ae_authors_stopping_and_crash():
    counts = np.full((2, 2), 2000, dtype=np.int64)  # radius about 0.07
    means = np.array([[0.5, 0.9], [0.2, 0.2]])  # arm 0 not yet certified feasible at threshold 0.45
    assert _ae(means, counts, 0.45)[0] == CONTINUE
    assert _ae(means, counts, 0.45, authors_stopping=True)[0] == 0
    hopeless = np.array([[0.1, 0.9], [0.9, 0.05]])
    assert _ae(hopeless, counts, 0.6)[0] == INFEASIBLE
    assert _ae(hopeless, counts, 0.6, authors_stopping=True)[0] == CRASHED


def test_crashes_end_runs_with_a_status_that_summaries_count():
    instance = EASY["infeasible"]
    spec = "feasibility-then-bai:as=published"
    result = gbai.run(instance, spec, seed=0)
    assert result.answer == CRASHED and not result.stopped
    table = gbai.sweep(instance, [spec, "feasibility-then-bai"], n_runs=3, cache_dir=None, workers=1,
                       progress=False)
    summary = gbai.summarize(table).set_index("algorithm")
    assert summary.loc["feasibility-then-bai", "crashed"] == 0.0
    assert summary.iloc[0]["crashed"] == 1.0 and summary.iloc[0]["unstopped"] == 0.0
    assert not table["error"].any()
    # The authors' AE stops at one active arm without checking it: here it names the
    # infeasible arm 1 once arm 0 is out, a wrong answer that the summary counts as an error.
    result = gbai.run(instance, "ae:as=published", seed=0)
    assert result.stopped and result.answer == 1


def test_ae_as_run_never_stops_on_figure_1a():
    """As-run facts A9 and A10: the reference rule can pick an arm no other arm beats on sums; the budget ends the
    run."""
    result = gbai.run(gbai.paper_instance("fig1a", 0.35), "ae:as=published", seed=0, max_samples=3_000_000)
    assert not result.stopped and result.answer == gbai.NO_ANSWER


# --------------------------------------------------------------- FtB switches
def _ftb(means, counts, threshold, phase=0, status=None, **switches):
    settings = dict(radius1=RADIUS_TEXT, radius2=RADIUS_TEXT, pairs=False, restart=False, init=20)
    settings.update(switches)
    n = means.shape[0]
    phase = np.array([phase])
    status = np.zeros(n, dtype=np.int8) if status is None else status
    active = np.zeros(n, dtype=bool)
    pulls = np.zeros(means.shape, dtype=np.int64)
    answer = feasibility_then_bai_decide(means, counts, 50, int(counts.sum()), threshold, 0.1, settings["radius1"],
                               settings["radius2"], settings["pairs"], settings["restart"], settings["init"],
                               phase, status, active, pulls)
    return answer, pulls, phase[0], active


def test_ftb_pair_screening_samples_open_pairs_of_any_arm():
    counts = np.full((2, 3), 300, dtype=np.int64)
    r = as_run_radius(RADIUS_TEXT, 300, 2, 3, 0.1, 50, 0)
    # Arm 1 is infeasible (attribute 0 far below) but its attribute 2 is still open.
    means = np.array([[0.8, 0.5 + r / 2, 0.8], [0.1, 0.8, 0.5 + r / 2]])
    _, arms, _, _ = _ftb(means, counts, 0.5)
    assert arms.tolist() == [[1, 1, 1], [0, 0, 0]]
    _, pairs, _, _ = _ftb(means, counts, 0.5, pairs=True)
    assert pairs.tolist() == [[0, 1, 0], [0, 0, 1]]


def test_ftb_restart_draws_fresh_statistics():
    counts = np.full((3, 2), 5000, dtype=np.int64)
    means = np.array([[0.8, 0.8], [0.78, 0.8], [0.1, 0.9]])
    answer, pulls, phase, active = _ftb(means, counts, 0.5, pairs=True, restart=True)
    assert answer == RESTART and phase == 1 and active.tolist() == [True, True, False]
    assert pulls.tolist() == [[20, 20], [20, 20], [0, 0]]
    answer, pulls, phase, active = _ftb(means, counts, 0.5, pairs=True)  # no restart: phase 2 at once
    assert answer == CONTINUE and pulls.tolist() == [[1, 1], [1, 1], [0, 0]]
    # In a run: the restart draws init fresh samples of every feasible pair on top of phase 1's.
    instance = EASY["easy"]
    restarted = gbai.run(instance, "feasibility-then-bai:restart=yes,init=20", seed=1)
    kept = gbai.run(instance, "feasibility-then-bai:init=20", seed=1)
    assert restarted.samples == restarted.counts.sum() and restarted.counts.sum() != kept.counts.sum()


def test_ftb_authors_count():
    instance = EASY["easy"]
    result = gbai.run(instance, "feasibility-then-bai:as=published", seed=2)
    plain = gbai.run(instance, "feasibility-then-bai:as=published,count=samples", seed=2)
    assert result.counts.sum() == plain.samples == plain.counts.sum()
    # Two feasible arms (0 and 2): the restart's 20 x M x 2 samples are counted as 20 x N.
    n, m = instance.means.shape
    assert result.samples == plain.samples + 2 - 20 * m * 2 + 20 * n


def test_the_authors_deltas():
    """At otherwise text settings, delta=authors is the text's algorithm run at the authors' fixed delta."""
    instance = EASY["easy"]
    for name, fixed in (("ae", 0.2), ("feasibility-then-bai", 0.1)):
        for seed in range(3):
            variant = gbai.run(instance, f"{name}:delta=authors", delta=0.05, seed=seed)
            text = gbai.run(instance, name, delta=fixed, seed=seed)
            assert variant.same_outcome(text), name
