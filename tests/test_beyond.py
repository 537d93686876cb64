"""Algorithms beyond the paper: CSS-LUCB+ and LMA-GLR, and the thresholds they rely on."""

import math

import numpy as np
import pandas as pd
import pytest
from binomial_check import most_errors
from scipy import integrate, optimize, special

import gbai
from gbai import Instance
from gbai.beyond import confidence_sequences as thresholds
from gbai.beyond.confidence_sequences import calibration, glr_threshold, stitched_boundary, stitched_radius
from gbai.beyond.css_lucb_plus import plus_logs
from gbai.beyond.lma_glr import alternative_evidence, glr_decide, stopping_level, weakest_evidence
from gbai.limits.alternatives import KIND_BECOME_FEASIBLE, KIND_BEST_INFEASIBLE, KIND_OVERTAKE
from gbai.paper.model import CONTINUE

PLUS_VARIANTS = [
    "css-lucb-plus",
    "css-lucb-plus:confidence=anytime",
    "css-lucb-plus:confidence=paper",
    "css-lucb-plus:sampling=all",
    "css-lucb-plus:arm_radius=paper,confidence=paper,sampling=all",
]

AGREEMENT = {
    "table1": gbai.table1_example(),
    "infeasible": Instance([[0.2, 0.8], [0.6, 0.15], [0.25, 0.5]], 0.35),
    "risky": Instance([[0.6, 0.55], [0.9, 0.2], [0.45, 0.5]], 0.35),
    "three attributes": Instance([[0.7, 0.6, 0.8], [0.65, 0.55, 0.5], [0.2, 0.9, 0.9]], 0.4),
}


# ------------------------------------------------------------------ thresholds
def test_stitched_boundary_matches_the_authors_test_vector():
    # Howard et al.'s reference implementation (confseq, PolyStitchingBound) gives
    # u(v=100) = 64.48755 for alpha = 0.05, v_min = 10, c = 3, s = 1.4, eta = 2.
    assert stitched_boundary(100.0, 0.05, v_min=10.0, c=3.0) == pytest.approx(64.48755, abs=1e-5)


@pytest.mark.parametrize("alpha", [0.1, 0.01, 1e-4])
@pytest.mark.parametrize("v", [1.0, 10.0, 1e3, 1e6])
def test_stitched_boundary_formula_and_the_published_simplification(alpha, v):
    # Eq. (10) with c = 0: k1 sqrt(v l(v)), l(v) = s ln ln(eta v) + ln(zeta(s) / (alpha ln(eta)^s)).
    k1 = (2**0.25 + 2**-0.25) / math.sqrt(2)
    ell = 1.4 * math.log(math.log(2 * v)) + math.log(3.1055472779775 / (alpha * math.log(2) ** 1.4))
    assert stitched_boundary(v, alpha) == pytest.approx(k1 * math.sqrt(v * ell), rel=1e-9)
    # The paper's rounded example 1.7 sqrt(v (ln ln(2v) + 0.72 ln(5.2/alpha))) rounds every
    # constant up, so it must lie above the exact boundary.
    bound = 1.7 * math.sqrt(v * (math.log(math.log(2 * v)) + 0.72 * math.log(5.2 / alpha)))
    assert stitched_boundary(v, alpha) <= bound
    assert stitched_radius(v, 0.25, math.log(3.1055472779775 / (alpha * math.log(2) ** 1.4))) == pytest.approx(
        stitched_boundary(v * 0.25, alpha, v_min=0.25) / v, rel=1e-12
    )


def test_calibration_function_values_and_properties():
    # Values of T(x) computed independently from its definition (Lambert W, lower branch).
    for x, expected in [(0.5, 8.03), (1.0, 9.21), (3.0, 13.12), (10.0, 21.45), (100.0, 116.97)]:
        assert calibration(x) == pytest.approx(expected, abs=0.01)
    grid = np.linspace(0.0, 50.0, 201)
    values = np.array([calibration(x) for x in grid])
    assert (values >= grid).all()  # never below x: the threshold exceeds ln(1/delta)

    def infimum(x, z=1.5):
        # h~_z(x) = min over l in (1, z] of l (x - ln ln l), by brute force on a fine grid.
        argument = (thresholds._h_inverse(1.0 + x) + math.log(2 * math.pi**2 / 6)) / 2
        grid_l = np.linspace(1.0 + 1e-9, z, 200_001)
        return 2 * np.min(grid_l * (argument - np.log(np.log(grid_l))))

    for x in [0.0, 0.5, 2.0, 3.5, 4.0, 10.0, 30.0]:
        # Never below the infimum (valid under either reading), equal to it far enough out.
        assert calibration(x) >= infimum(x) * (1 - 1e-9)
        if x >= 4.0:
            assert calibration(x) == pytest.approx(infimum(x), rel=1e-6)
    with pytest.raises(ValueError):
        calibration(-1.0)


def test_glr_threshold_formula():
    counts = np.array([4, 10, 100])
    x = math.log(30 / 0.01)
    expected = sum(3 * math.log(1 + math.log(n)) for n in counts) + 3 * calibration(x / 3)
    assert glr_threshold(counts, x) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError):
        glr_threshold([0, 3], 1.0)


def test_error_probability_is_split_as_documented():
    # Pairs share (1 - 0.75) delta and arms 0.75 delta, per side; Bernstein mode gives
    # the Hoeffding bound 10% of an interval's share.
    logs = plus_logs(5, 5, 0.1, "bernstein")
    zeta = 3.1055472779775
    pair_alpha, arm_alpha = 0.25 * 0.1 / 50, 0.75 * 0.1 / 10
    for value, alpha in zip(logs[1:], [pair_alpha * 0.1, pair_alpha * 0.9, arm_alpha * 0.1, arm_alpha * 0.9]):
        assert value == pytest.approx(math.log(zeta / (alpha * math.log(2) ** 1.4)), rel=1e-9)
    assert logs[1] == pytest.approx(math.log(zeta / (pair_alpha * 0.1 * math.log(2) ** 1.4)))
    anytime = plus_logs(5, 5, 0.1, "anytime")
    assert anytime[1] == pytest.approx(math.log(zeta / (pair_alpha * math.log(2) ** 1.4)))


# -------------------------------------------------------------- GLR statistic
def _brute_force_values(means, threshold, counts):
    """Each alternative's ``min sum N d(mu_hat, lambda)``, by generic optimisation, keyed ``(kind, arm, attribute)``."""
    n, m = means.shape
    kl = gbai.kl_bernoulli
    answer = gbai.Instance(means, threshold).answer
    values = {}
    eps = 1e-9
    for b in range(n):
        if answer == gbai.INFEASIBLE:
            values["become-feasible", b, -1] = sum(counts[b, j] * kl(means[b, j], threshold) for j in range(m)
                                                   if means[b, j] < threshold)
            continue
        if b == answer:
            for j in range(m):
                values["best-infeasible", b, j] = counts[b, j] * kl(means[b, j], threshold)
            continue

        def cost(z, b=b):
            x, y = z[:m], z[m:]
            return sum(counts[answer, j] * kl(means[answer, j], x[j]) + counts[b, j] * kl(means[b, j], y[j])
                       for j in range(m))

        start = np.concatenate([means[answer] - 0.01, np.maximum(means[b], threshold) + 0.01]).clip(eps, 1 - eps)
        result = optimize.minimize(
            cost, start, method="SLSQP", bounds=[(eps, 1 - eps)] * m + [(threshold, 1 - eps)] * m,
            constraints=[{"type": "ineq", "fun": lambda z: z[m:].sum() - z[:m].sum()}],
            options={"ftol": 1e-12, "maxiter": 500},
        )
        values["overtake", b, -1] = result.fun
    return values


def _brute_force_glr(means, threshold, counts):
    """Minimum over the alternatives of sum N d(mu_hat, lambda), by generic optimisation."""
    return min(_brute_force_values(means, threshold, counts).values())


def _lma_glr_state(seed, steps):
    """One of four agreement instances (by ``seed``) and LMA-GLR's state after ``steps`` steps on it."""
    instance = [AGREEMENT["table1"], AGREEMENT["risky"], AGREEMENT["three attributes"], AGREEMENT["infeasible"]][seed]
    engine = gbai.StepEngine(instance, gbai.LMAGLR(), delta=0.1, seed=seed)
    for _ in range(steps):
        engine.step()
    return instance, engine.state()


@pytest.mark.parametrize("seed", range(4))
def test_glr_statistic_at_sample_counts_matches_brute_force(seed):
    # The GLR statistic is the best response evaluated at the sample counts and the
    # empirical means of a run.
    instance, state = _lma_glr_state(seed, steps=60)
    glr = gbai.best_response(state.means, instance.threshold, state.counts).value
    brute = _brute_force_glr(state.means, instance.threshold, state.counts.astype(float))
    # SLSQP converges to ~1e-7 relative on these smooth convex problems.
    assert glr == pytest.approx(brute, rel=1e-5, abs=1e-8)


def _log_kt(s, n):
    """ln of the Krichevsky-Trofimov mixture likelihood, from scipy's log-beta."""
    return special.betaln(s + 0.5, n - s + 0.5) - math.log(math.pi)


def _log_fit(s, n, p):
    """ln p^s (1 - p)^(n - s), with 0 ln 0 = 0."""
    return (s * math.log(p) if s > 0 else 0.0) + ((n - s) * math.log1p(-p) if n > s else 0.0)


def _one_sided(s, n, threshold, above):
    """ln of the KT mixture restricted to one side of the threshold over the best fit on the other, by quadrature."""
    lo, hi = (threshold, 1.0) if above else (0.0, threshold)
    arcsine = lambda p: 1.0 / (math.pi * math.sqrt(p * (1.0 - p)))  # noqa: E731
    mixture, _ = integrate.quad(lambda p: math.exp(_log_fit(s, n, p) - _log_fit(s, n, s / n)) * arcsine(p), lo, hi,
                                epsabs=0.0, epsrel=1e-12, limit=200)
    mass, _ = integrate.quad(arcsine, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)
    fitted = min(s / n, threshold) if above else max(s / n, threshold)
    return math.log(mixture / mass) + _log_fit(s, n, s / n) - _log_fit(s, n, fitted)


@pytest.mark.parametrize("seed", range(4))
def test_lma_glr_evidence_matches_a_direct_computation(seed):
    # Each alternative's log e-value from its definition (notebook 11, section 2): the
    # one-sided mixtures by quadrature; for (B) the KT mixtures of both rows (scipy's
    # log-beta) over the largest likelihood under (B) (from the SLSQP value), or the
    # feasibility test of b when larger; for (C) the feasibility test.
    instance, state = _lma_glr_state(seed, steps=300)
    means, counts, threshold = state.means, state.counts.astype(float), instance.threshold
    sums = means * counts
    answer, kinds, arms, attributes, evidence = alternative_evidence(means, threshold, state.counts)
    names = [gbai.limits.alternatives.KIND_NAMES[k] for k in kinds]
    brute = _brute_force_values(means, threshold, counts)
    assert sorted(brute) == sorted(zip(names, arms, attributes))
    m = means.shape[1]

    def feasibility(b):
        logs = [_one_sided(sums[b, j], counts[b, j], threshold, above=False) for j in range(m)]
        return special.logsumexp(logs) - math.log(m)

    for name, b, j, value in zip(names, arms, attributes, evidence):
        if name == "best-infeasible":
            direct = _one_sided(sums[b, j], counts[b, j], threshold, above=True)
        elif name == "overtake":
            regrets = sum(_log_fit(sums[i, k], counts[i, k], sums[i, k] / counts[i, k]) - _log_kt(sums[i, k],
                                                                                                  counts[i, k])
                          for i in (answer, b) for k in range(m))
            direct = max(brute[name, b, j] - regrets, feasibility(b))
        else:
            direct = feasibility(b)
        # SLSQP's ~1e-7 relative on the GLR, quadrature's 1e-12 on the mixtures.
        assert value == pytest.approx(direct, rel=1e-5, abs=1e-6), (name, b, j)
    level = stopping_level(instance.n_arms, 0.1)
    assert level == pytest.approx(math.log(instance.n_arms / 0.1))
    expected = answer if (evidence > level).all() else CONTINUE
    assert glr_decide(means, threshold, state.counts, level) == expected


@pytest.mark.parametrize("seed", range(4))
def test_the_weakest_evidence_is_the_smallest_of_all_above_its_floor(seed):
    # The stop computes only what can lower the minimum above its floor. Over states of
    # a run (every 7th step) and random ones, so that the A, B and C kinds and the early
    # stops all occur, and floors below, at and above the true minimum: exact above the floor, at or below
    # it otherwise. A skipped test that mattered (or a wrong early return) changes the
    # value, which equality catches.
    instance = [AGREEMENT["table1"], AGREEMENT["risky"], AGREEMENT["three attributes"], AGREEMENT["infeasible"]][seed]
    engine = gbai.StepEngine(instance, gbai.LMAGLR(), delta=0.1, seed=seed)
    states = []
    for step in range(420):
        engine.step()
        if step % 7 == 0:
            state = engine.state()
            states.append((state.means, state.counts))
    # And random states whose arms lie close together, where the GLRs of (B) sit near
    # one another and near the tests of (A), so that a skip taken too early shows.
    rng = np.random.default_rng(seed)
    for _ in range(1500):
        counts = rng.integers(2, 400, size=instance.means.shape)
        means = np.clip(instance.threshold + rng.normal(0.1, 0.08, size=counts.shape), 0.01, 0.99)
        states.append((np.round(means * counts) / counts, counts))
    exact = early = 0
    for means, counts in states:
        table = alternative_evidence(means, instance.threshold, counts)
        answer, evidence = table[0], table[4]
        smallest = -math.inf if np.isnan(evidence).any() else evidence.min(initial=math.inf)
        for floor in (-math.inf, smallest - 1.0, smallest, smallest + 1.0, math.inf):
            # Whichever alternative is computed first (the kernel passes the last check's), the same minimum.
            for first in (-1, *rng.integers(0, sum(counts.shape), size=2)):
                got_answer, weakest, at = weakest_evidence(means, instance.threshold, counts, floor, first)
                assert got_answer == answer
                if smallest > floor:
                    assert weakest == smallest and at == -1, (means, counts, floor, first)
                    exact += 1
                else:
                    # The alternative it stopped at is one whose e-value is at or below the floor.
                    assert weakest <= floor
                    assert np.isnan(evidence).any() or _at_value(table, at, counts.shape) <= floor
                    early += 1
    assert exact and early


def _at_value(table, at, shape):
    """The e-value of alternative ``at`` as weakest_evidence numbers it, found in alternative_evidence's table."""
    answer, kinds, arms, attributes, evidence = table
    m = shape[1]
    if answer < 0:
        match = (kinds == KIND_BECOME_FEASIBLE) & (arms == at)
    elif at < m:
        match = (kinds == KIND_BEST_INFEASIBLE) & (attributes == at)
    else:
        match = (kinds == KIND_OVERTAKE) & (arms == at - m)
    assert match.sum() == 1, (at, kinds, arms, attributes)
    return evidence[match][0]


def test_lma_glr_never_stops_on_a_tie_and_has_no_answer_code_of_its_own():
    # Two arms tie for the best empirical mean: no alternative to test, so no stop.
    tie, counts = np.array([[0.6, 0.6], [0.6, 0.6], [0.2, 0.9]]), np.full((3, 2), 50, dtype=np.int64)
    assert alternative_evidence(tie, 0.3, counts)[0] == CONTINUE
    assert glr_decide(tie, 0.3, counts, -1e9) == CONTINUE


# ------------------------------------------------------------ engines agree
@pytest.mark.parametrize("spec", PLUS_VARIANTS + ["lma-glr"])
def test_engines_agree_exactly(spec):
    for name, instance in AGREEMENT.items():
        for seed in range(3):
            for reward in ("beta", "bernoulli"):
                kwargs = dict(delta=0.2, seed=seed, reward=reward, max_samples=6_000)
                fast = gbai.run(instance, spec, engine="fast", **kwargs)
                step = gbai.run(instance, spec, engine="step", **kwargs)
                assert fast.same_outcome(step), f"{spec} on {name}, seed {seed}, {reward}: {fast} vs {step}"


def test_paper_switches_reproduce_css_lucb():
    # With the paper's radius, the paper's arm radius and sampling of every attribute,
    # CSS-LUCB+ is CSS-LUCB, sample for sample.
    spec = "css-lucb-plus:arm_radius=paper,confidence=paper,sampling=all"
    for instance in [*AGREEMENT.values(), gbai.paper_instance("exp3", 0.3), gbai.paper_instance("exp1", 0.33)]:
        for seed in range(5):
            paper = gbai.run(instance, "css-lucb", seed=seed)
            plus = gbai.run(instance, spec, seed=seed)
            assert paper.same_outcome(plus)


def test_specs_resolve_to_canonical_names():
    assert gbai.resolve("css-lucb-plus:sampling=targeted").spec == "css-lucb-plus"
    assert gbai.resolve("css-lucb-plus: sampling=all , confidence=paper").spec == \
        "css-lucb-plus:confidence=paper,sampling=all"
    for bad, message in [("css-lucb-plus:speed=fast", "bad option"), ("css-lucb-plus:sampling=some", "must be one of"),
                         ("css-lucb:speed=fast", "bad option"),
                         ("css-lucb:sampling=all", "must be one of"),  # CSS-LUCB's options: sampling=feasible|undecided
                         ("", "non-empty")]:
        with pytest.raises(ValueError, match=message):
            gbai.resolve(bad)
    with pytest.raises(ValueError):
        gbai.CSSLUCBPlus(confidence="loose")


def test_targeted_sampling_spends_far_less_than_css_lucb():
    # A deterministic, seeded check of the main claim on one instance of each kind
    # (the full comparison is notebook 9's): 20 paired runs each.
    for instance in (gbai.paper_instance("exp1", 0.33), gbai.paper_instance("exp3", 0.3)):
        paper = np.mean([gbai.run(instance, "css-lucb", seed=gbai.run_seed(11, r)).samples for r in range(20)])
        plus = np.mean([gbai.run(instance, "css-lucb-plus", seed=gbai.run_seed(11, r)).samples for r in range(20)])
        assert plus < paper / 10


def test_budget_ends_unresolvable_runs():
    instance = Instance([[0.3, 0.9], [0.2, 0.2]], 0.3)
    for spec in ("css-lucb-plus", "lma-glr"):
        for engine in ("fast", "step"):
            result = gbai.run(instance, spec, seed=2, max_samples=3_000, engine=engine)
            assert not result.stopped and result.answer == gbai.NO_ANSWER and result.samples <= 3_000


# ------------------------------------------------------------- error rates
# A large delta keeps the runs short and the check sharp: 500 runs at delta = 0.5 fail
# at 286 errors (P <= 7.4e-4 for a delta-correct rule) and reject a rule erring at 0.6
# with probability 0.907 (tests/binomial_check.py).
DELTA = 0.5
N_RUNS = 500
MAX_ERRORS = most_errors(N_RUNS, DELTA)


@pytest.mark.slow
@pytest.mark.parametrize("reward", ["beta", "bernoulli"])
def test_error_rates_within_delta(reward):
    instances = {
        "feasible (exp1 x=0.35)": gbai.paper_instance("exp1", 0.35),
        "risky best mean (exp3 x=0.3)": gbai.paper_instance("exp3", 0.3),
        "infeasible": Instance([[0.25, 0.8, 0.6], [0.7, 0.2, 0.9], [0.27, 0.27, 0.9]], 0.3),
    }
    table = gbai.sweep(instances, ["css-lucb-plus", "lma-glr"], n_runs=N_RUNS, delta=DELTA, seed=5, reward=reward,
                       workers=1, cache_dir=None, progress=False)
    assert table["stopped"].all()
    errors = table.groupby(["instance", "algorithm"])["error"].sum()
    assert (errors <= MAX_ERRORS).all(), errors


# ------------------------------------------------------------- Betting-GBAI
BETTING_DELTA = 0.5
BETTING_RUNS = 500
# As above: at most 285 errors in 500 runs, power 0.907 against a rule erring at 0.6.
# (Planted fault: a wrong answer in 58% of the runs passed the former 300 runs, whose
# bound was 182 errors, and fails here with 292 errors on the first instance.)
BETTING_MAX_ERRORS = most_errors(BETTING_RUNS, BETTING_DELTA)


@pytest.mark.parametrize("reward", ["bernoulli", "beta"])
def test_betting_error_rate_within_delta(reward):
    # Instances with short runs at delta = 0.5 (where a loose rule errs most): a risky
    # highest-mean arm, a close second arm with an attribute near the threshold, and an
    # infeasible instance. Seeded, so the outcome is fixed. The harder adversarial
    # instances (near ties, attributes 0.01 from the threshold, 2000 runs each) are
    # too slow for `make test`; `gbai.studies.near_limit.adversarial_errors` measures their error rates.
    instances = {
        "risky best mean": Instance([[0.6, 0.55], [0.9, 0.2], [0.45, 0.5]], 0.35),
        "close second": Instance([[0.7, 0.5], [0.6, 0.4], [0.2, 0.9]], 0.35),
        "infeasible": Instance([[0.25, 0.8, 0.6], [0.7, 0.2, 0.9], [0.2, 0.2, 0.9]], 0.3),
    }
    for name, instance in instances.items():
        runs = [gbai.run(instance, "betting", delta=BETTING_DELTA, seed=gbai.run_seed(21, r), reward=reward)
                for r in range(BETTING_RUNS)]
        assert all(run.stopped for run in runs)
        errors = sum(run.answer != instance.answer for run in runs)
        assert errors <= BETTING_MAX_ERRORS, f"{name}: {errors} errors in {BETTING_RUNS} runs"


def test_betting_rejection_level_and_grid():
    from gbai.beyond.betting import GRID_SIZE, bet_grid, rejection_level, union_terms

    # N + M - 1 union terms (module docstring): 5 arms and 5 attributes give 9.
    assert rejection_level(5, 5, 0.1) == pytest.approx(math.log(90.0))
    assert rejection_level(1, 3, 0.5) == pytest.approx(math.log(6.0))
    # union=every: both pair tests of every pair and every ordered pair of arms.
    assert union_terms(5, 5, "every") == 2 * 25 + 20
    assert rejection_level(5, 5, 0.1, "every") == pytest.approx(math.log(700.0))
    grid = bet_grid()
    assert grid.size == GRID_SIZE and grid[0] == pytest.approx(0.95) and (np.diff(grid) < 0).all()
    for bad, option in (("betting:arm_test=paired", "arm_test"), ("betting:union=some", "union"),
                        ("betting:sampling=random", "sampling")):
        with pytest.raises(ValueError, match=option):
            gbai.resolve(bad)
    with pytest.raises(ValueError, match="union"):
        gbai.BettingGBAI(union="none")
    assert gbai.resolve("betting:arm_test=product,union=structured,sampling=weakest").spec == "betting"


def test_betting_arm_round_capital():
    from gbai.beyond.betting import absorb_arm_round, bernoulli_steps, bet_grid

    # One arm-round adds sum_j ln(1 + rho z_j) (product) or ln(1 + rho mean_j z_j) (average)
    # to every bet's log-capital, and its sufficient statistics to arm_sum / arm_square.
    rho = bet_grid()
    leader, other = np.array([1.0, 0.0, 0.7]), np.array([0.0, 0.0, 0.2])
    z = leader - other
    for code, expected, first, second in ((1, np.log1p(np.outer(rho, z)).sum(axis=1), z.sum(), (z * z).sum()),
                                          (2, np.log1p(rho * z.mean()), z.mean(), z.mean() ** 2)):
        rounds = np.zeros((2, 2), dtype=np.int64)
        arm_log, arm_sum, arm_square = np.zeros((2, 2, rho.size)), np.zeros((2, 2)), np.zeros((2, 2))
        arm_value = np.full((2, 2), -np.inf)
        absorb_arm_round(0, 1, leader, other, rho, bernoulli_steps(0.5, rho), code, rounds, arm_log, arm_sum,
                         arm_square, arm_value)
        assert rounds[0, 1] == 1 and rounds[1, 0] == 0
        np.testing.assert_allclose(arm_log[0, 1], expected, rtol=1e-12)
        assert arm_sum[0, 1] == pytest.approx(first) and arm_square[0, 1] == pytest.approx(second)
        assert arm_value[0, 1] == pytest.approx(np.log(np.exp(expected).mean()))


def test_betting_product_arm_test_beats_the_average():
    # The product form lets the effective bet on the arm-round average exceed 1: on
    # exp1 x=0.35, where arms 3 and 4 trail the answer by 0.2, it needs fewer samples
    # than the average form on the same 20 seeds (Bernoulli rewards, delta = 0.1).
    # Seeded and paired, so the comparison is fixed; measured 1941 vs 2191 over 100 runs.
    instance = gbai.paper_instance("exp1", 0.35)
    totals = {}
    for spec in ("betting", "betting:arm_test=average"):
        totals[spec] = np.mean([gbai.run(instance, spec, seed=gbai.run_seed(2024, r), reward="bernoulli").samples
                                for r in range(20)])
    assert totals["betting"] < 0.95 * totals["betting:arm_test=average"], totals


def test_near_limit_tables_on_a_small_configuration():
    from gbai.studies import near_limit

    ratios = near_limit.bernoulli_ratios(n_runs=3, deltas=(0.1, 1e-3), workers=1, cache_dir=None,
                                         experiments=["exp1"])
    assert list(ratios.columns[:3]) == ["instance", "ratio at 0.1", "ratio at 0.001"]
    assert len(ratios) == len(gbai.get_experiment("exp1").x_grid)
    expected_falls = ratios["ratio at 0.001"] < ratios["ratio at 0.1"]
    assert (ratios["falls"] == expected_falls).all() and (ratios["ratio at 0.1"] > 1).all()
    errors = near_limit.adversarial_errors(n_runs=4, workers=1, cache_dir=None, rewards=("beta",))
    assert len(errors) == len(near_limit.adversarial_instances()) == 6
    assert (errors["errors"] <= errors["stopped"]).all()
    assert (errors["95% upper limit"] > errors["error rate"]).all() and (errors["mean_samples"] > 0).all()
    runs = gbai.sweep(near_limit.adversarial_instances(), ["betting"], n_runs=4, delta=0.5, seed=12, reward="beta",
                      workers=1, cache_dir=None, progress=False)
    pd.testing.assert_frame_equal(errors.drop(columns=["reward", "mean_samples"]).set_index("instance"),
                                  gbai.error_rates(runs, by=["instance"]))
