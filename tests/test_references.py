"""The plain best-arm references (gbai.beyond.references, the registry's REFERENCES) and the near-limit table."""

import json
import math

import numpy as np
import pytest
from binomial_check import most_errors
from scipy import optimize, special

import gbai
from gbai import Instance
from gbai.algorithms import REFERENCES
from gbai.beyond.betting import bet_grid
from gbai.beyond.references import (
    PROVEN_STOPPING_RULES,
    SAMPLING_RULES,
    STOPPING_RULES,
    bets_statistic,
    gk_threshold,
    heuristic_threshold,
    kt_statistic,
    optimal_proportions,
    oracle_statistic,
    stopping_statistic,
)
from gbai.studies import near_limit
from gbai.tools.cli import main


def run_reference(instance, sampling="track-and-stop", stopping="kt", delta=0.1, seed=0, max_samples=10_000_000):
    """A run of a reference through the front door, gbai.run with its spec (Bernoulli rewards); for a list of
    deltas, the runs of gbai.run_deltas."""
    spec, options = f"{sampling}:stopping={stopping}", dict(seed=seed, reward="bernoulli", max_samples=max_samples)
    if isinstance(delta, list):
        return gbai.run_deltas(instance, spec, deltas=delta, **options)
    return gbai.run(instance, spec, delta=delta, **options)


def _rewards(seed, means, counts, fractional):
    """Rewards of each arm: Bernoulli, or Beta(1, 1/mu - 1) (fractional sums) with the same means."""
    rng = np.random.default_rng(seed)
    if fractional:
        return [rng.beta(1.0, 1.0 / m - 1.0, n) for n, m in zip(counts, means)]
    return [(rng.random(n) < m).astype(float) for n, m in zip(counts, means)]


def _log_fit(x, p):
    """The Bernoulli log-likelihood of rewards x in [0, 1] at the mean p."""
    return float(np.sum(x * np.log(p) + (1 - x) * np.log1p(-p)))


def _pooled_fit(x, y):
    """max over p <= q of the two arms' log-likelihood, for mean(x) > mean(y): a bounded search over p = q."""
    found = optimize.minimize_scalar(lambda p: -(_log_fit(x, p) + _log_fit(y, p)), bounds=(1e-12, 1 - 1e-12),
                                     method="bounded", options={"xatol": 1e-12})
    return -found.fun


def test_references_are_a_second_table_with_documented_thresholds():
    assert not {"track-and-stop", "top-two", "tas", "toptwo"} & set(gbai.ALGORITHMS)
    assert tuple(REFERENCES) == SAMPLING_RULES
    assert gbai.resolve("track-and-stop:stopping=kt").spec == "track-and-stop"
    assert gbai.resolve("top-two: stopping=bets").spec == "top-two:stopping=bets"
    # Compiled engine only: no step-engine policy, as for the as-run options.
    for spec in ("track-and-stop", "top-two:stopping=oracle"):
        with pytest.raises(ValueError, match="compiled engine only"):
            gbai.resolve(spec).policy()
        with pytest.raises(ValueError, match="compiled engine only"):
            gbai.run(Instance([[0.5], [0.4]], 0.05), spec, engine="step")
    assert STOPPING_RULES[:3] == PROVEN_STOPPING_RULES == ("kt", "gk", "bets")
    assert SAMPLING_RULES == ("track-and-stop", "top-two")
    assert heuristic_threshold(100.0, 0.1) == pytest.approx(math.log((math.log(100.0) + 1.0) / 0.1))
    assert gk_threshold(100.0, 5, 0.1) == pytest.approx(math.log(2 * 100 * 4 / 0.1))


@pytest.mark.parametrize("fractional", [False, True])
def test_stopping_statistics_against_a_direct_computation(fractional):
    # From the rewards themselves: the KT mixture from scipy's log-beta, the constrained
    # fit by a bounded scalar search (xatol 1e-12: the agreement is limited by the
    # search's ~1e-9 relative precision on the log-likelihood, ~1e-7 nats here).
    means = np.array([0.55, 0.5, 0.3, 0.45])
    counts = np.array([60, 35, 12, 41])
    rewards = _rewards(11 + fractional, means, counts, fractional)
    sums = np.array([x.sum() for x in rewards])
    mu_hat = sums / counts
    a = int(np.argmax(mu_hat))
    kt, glr = math.inf, math.inf
    for b in range(means.size):
        if b == a:
            continue
        pooled = _pooled_fit(rewards[a], rewards[b])
        best = _log_fit(rewards[a], mu_hat[a]) + _log_fit(rewards[b], mu_hat[b])
        mixtures = sum(special.betaln(s + 0.5, n - s + 0.5) - math.log(math.pi) for s, n in
                       ((sums[a], counts[a]), (sums[b], counts[b])))
        kt, glr = min(kt, mixtures - pooled), min(glr, best - pooled)
    t = int(counts.sum())
    assert kt_statistic(sums, counts, a) == pytest.approx(kt, abs=1e-6)
    for name, level in (("kt", math.log(3 / 0.1)), ("gk", math.log(2 * t * 3 / 0.1)),
                        ("heuristic", math.log((math.log(t) + 1) / 0.1))):
        statistic, got_level = stopping_statistic(name, means, sums, counts, a, float(t), 0.1)
        assert statistic == pytest.approx(kt if name == "kt" else glr, abs=1e-6)
        assert got_level == pytest.approx(level, rel=1e-12)
    # The bet stop: the smallest, over b, of the infimum over a common mean m of the
    # bet capitals of a above m and b below m, computed reward by reward on a grid of
    # m (2001 points, then 2001 more around the best: steps of 5e-7, within 1e-4 nats
    # of the minimum of this convex function). The stop's chord bound equals these
    # capitals for Bernoulli rewards and lies below them otherwise.
    rho = bet_grid()[:, None, None]

    def capitals(x, grid, above):
        grid, x = grid[None, :, None], x[None, None, :]
        steps = np.log1p(rho / grid * (x - grid)) if above else np.log1p(rho / (1 - grid) * (grid - x))
        return special.logsumexp(steps.sum(axis=2), axis=0) - math.log(rho.shape[0])

    def infimum(b):
        grid = np.linspace(1e-6, 1 - 1e-6, 2001)
        best = int(np.argmin(capitals(rewards[a], grid, True) + capitals(rewards[b], grid, False)))
        grid = np.linspace(grid[max(best - 1, 0)], grid[min(best + 1, 2000)], 2001)
        return (capitals(rewards[a], grid, True) + capitals(rewards[b], grid, False)).min()

    bets = min(infimum(b) for b in range(means.size) if b != a)
    value = bets_statistic(sums, counts.astype(float), a, -math.inf)
    assert value <= bets + 1e-6
    if not fractional:
        assert value == pytest.approx(bets, abs=1e-4)
    # The stop screens with its level: below it, it may return a bound of the test
    # instead of the test, and it decides exactly as the test does.
    statistic, got_level = stopping_statistic("bets", means, sums, counts, a, float(t), 0.1)
    assert got_level == pytest.approx(math.log(3 / 0.1), rel=1e-12)
    assert statistic >= value - 1e-9 and (statistic > got_level) == (value > got_level)


def test_gk_threshold_implies_the_kt_test_on_every_state():
    # The book page's section 4: R_a + R_b <= ln(2t), so Z > ln(2t(K-1)/delta) forces
    # Z - R_a - R_b > ln((K-1)/delta). Checked on 2000 random states, fractional sums included.
    rng = np.random.default_rng(4)
    for _ in range(2000):
        k = int(rng.integers(2, 6))
        counts = rng.integers(1, 10 ** int(rng.integers(1, 6)), size=k)
        sums = rng.uniform(0, 1, k) * counts
        a = int(np.argmax(sums / counts))
        t = float(counts.sum() + rng.integers(0, 100))
        kt, kt_level = stopping_statistic("kt", np.full(k, 0.5), sums, counts, a, t, 0.1)
        gk, gk_level = stopping_statistic("gk", np.full(k, 0.5), sums, counts, a, t, 0.1)
        assert kt - kt_level >= gk - gk_level - 1e-9


def test_oracle_stop_statistic_is_the_likelihood_ratio_of_the_true_means():
    # The true means (the larger one for the empirical best) over the best fit with
    # mu_b >= mu_a, from the rewards.
    means = np.array([0.55, 0.5, 0.3])
    counts = np.array([40, 25, 12])
    rewards = _rewards(11, means, counts, False)
    mu_hat = np.array([x.mean() for x in rewards])
    a = int(np.argmax(mu_hat))
    direct = math.inf
    for b in range(3):
        if b != a:
            hi, lo = max(means[a], means[b]), min(means[a], means[b])
            direct = min(direct, _log_fit(rewards[a], hi) + _log_fit(rewards[b], lo) - _pooled_fit(rewards[a],
                                                                                                    rewards[b]))
    assert oracle_statistic(means, mu_hat, counts, a) == pytest.approx(direct, abs=1e-6)


def test_proportions_match_the_grouped_oracle_and_equalise_the_costs():
    # Two independent solvers of the same problem: the reference's Newton solver (plain
    # best arm) and the package's structured oracle on the same arms as an M = 1
    # instance whose threshold (0.001) is too far below every mean for a feasibility
    # alternative to bind (it certifies a gap of 1e-5, hence rel 1e-4). At w* every
    # pairwise cost is the same (Garivier & Kaufmann 2016, Theorem 5): to 1e-9 here.
    for means in (np.array([0.5, 0.45, 0.43, 0.4, 0.3]), np.array([0.3, 0.21, 0.2, 0.19, 0.18])):
        w = optimal_proportions(means)
        assert w.sum() == pytest.approx(1.0) and (w > 0).all()

        def cost(b, w=w, means=means):
            mixed = (w[0] * means[0] + w[b] * means[b]) / (w[0] + w[b])
            return w[0] * gbai.kl_bernoulli(means[0], mixed) + w[b] * gbai.kl_bernoulli(means[b], mixed)

        costs = np.array([cost(b) for b in range(1, means.size)])
        assert costs.max() - costs.min() <= 1e-9 * costs.max()
        oracle = gbai.characteristic_time(Instance(means[:, None], 0.001))
        assert oracle.T_star == pytest.approx(1.0 / costs.min(), rel=1e-4)
        np.testing.assert_allclose(oracle.w_star[:, 0], w, atol=1e-3)
    np.testing.assert_allclose(optimal_proportions(np.array([0.6, 0.4])), [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(optimal_proportions(np.array([0.4, 0.4, 0.2])), [1 / 3] * 3)  # a tie: uniform


# The error-rate check: two close arms at delta = 0.5, 500 runs per rule. A one-sided
# binomial test fails at 286 errors (P <= 7.4e-4 for a delta-correct rule) and rejects a
# rule erring at 0.6 with probability 0.907 (tests/binomial_check.py). The proven stops
# err far less than delta here (measured: 16-23 errors in 400 runs for the KT stop, 7-13
# for GK's threshold; the unproven heuristic 118, the oracle 30-31), so the check guards
# against a broken stop, not against a slightly loose one: the statistics themselves are
# checked above.
ERROR_RUNS = 500


@pytest.mark.slow
@pytest.mark.parametrize("sampling", SAMPLING_RULES)
@pytest.mark.parametrize("stopping", ["kt", "gk", "bets", "oracle"])
def test_error_rates_stay_within_delta(sampling, stopping):
    instance = Instance([[0.5], [0.46]], 0.05)
    runs = [run_reference(instance, sampling=sampling, stopping=stopping, delta=0.5, seed=gbai.run_seed(7, r))
            for r in range(ERROR_RUNS)]
    assert all(run.stopped for run in runs)
    assert all(run.samples == run.counts.sum() == run.rounds + 1 for run in runs)
    errors = sum(run.answer != 0 for run in runs)
    assert errors <= most_errors(ERROR_RUNS, 0.5), f"{errors} errors in {ERROR_RUNS} runs"


def test_bad_input_is_refused_with_a_message():
    instance = Instance([[0.5], [0.46]], 0.05)
    for kwargs, message in [({"sampling": "thompson"}, "unknown algorithm 'thompson'"),
                            ({"stopping": "proven"}, "option stopping must be one of"),
                            ({"delta": 1.0}, "delta"), ({"delta": 0.0}, "delta"),
                            ({"max_samples": 1}, "max_samples")]:
        with pytest.raises(ValueError, match=message):
            run_reference(instance, **kwargs)
    with pytest.raises(ValueError, match="one attribute"):
        run_reference(gbai.table1_example())
    with pytest.raises(ValueError, match="two arms"):
        run_reference(Instance([[0.5]], 0.05))
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        run_reference(Instance([[1.0], [0.4]], 0.05), stopping="oracle")
    run = run_reference(instance, delta=0.1, seed=3, max_samples=50)
    assert not run.stopped and run.samples == 50 == run.counts.sum() and run.answer == gbai.NO_ANSWER
    assert run.counts.shape == (2, 1)


def test_best_arm_table_against_direct_runs(tmp_path):
    table = near_limit.bai_comparison(n_runs=3, deltas=(0.1,), workers=1, cache_dir=None)
    instances = near_limit.bai_instances()
    assert list(table["instance"].unique()) == list(instances)
    methods = [method for method, *_ in near_limit.REFERENCES] + ["betting"]
    assert list(table["method"]) == methods * len(instances)
    for name, instance in instances.items():
        cell = table[table["instance"] == name].set_index("method")
        for method, spec, status in near_limit.REFERENCES:
            runs = [gbai.run(instance, spec, delta=0.1, seed=gbai.run_seed(2024, r), reward="bernoulli").samples
                    for r in range(3)]
            assert cell.loc[method, "mean_samples"] == pytest.approx(np.mean(runs))
            assert cell.loc[method, "se"] == pytest.approx(np.std(runs, ddof=1) / math.sqrt(3))
            assert cell.loc[method, "status"] == status
        runs = [gbai.run(instance, "betting", delta=0.1, seed=gbai.run_seed(2024, r), reward="bernoulli").samples
                for r in range(3)]
        assert cell.loc["betting", "mean_samples"] == pytest.approx(np.mean(runs))
        proven = cell[cell["status"] == "proven"]
        best = proven["mean_samples"].idxmin()
        assert (cell["best proven reference"] == best).all()
        np.testing.assert_allclose(cell["/ best proven"], cell["mean_samples"] / cell.loc[best, "mean_samples"])
        assert cell.loc[best, "paired se of the difference"] == 0.0
    summary = near_limit.bai_summary(table)
    assert len(summary) == len(instances) and "betting / best" in summary.columns
    # Two processes and the cache give the same table, and a second call reads the stored runs: the
    # references' runs are sweep chunks, one cache entry per (instance, spec, delta, chunk).
    parallel = near_limit.bai_comparison(n_runs=3, deltas=(0.1,), workers=2, cache_dir=tmp_path)
    assert parallel.equals(table)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["runs"]
    assert len(list((tmp_path / "runs").rglob("*.npz"))) == len(instances) * (len(near_limit.REFERENCES) + 1)
    assert near_limit.bai_comparison(n_runs=3, deltas=(0.1,), workers=1, cache_dir=tmp_path).equals(table)


def test_paired_limit_against_a_numerical_best_bet():
    # max over lambda of E ln(1 + lambda (X_a - X_b)) by a bounded scalar search (xatol
    # 1e-12): the closed-form best bet must give the same rounds per nat, to 1e-9.
    # A design that pairs rewards cannot beat T*: the ratio exceeds 1.
    for name, instance in near_limit.bai_instances().items():
        means = instance.means[:, 0]
        rounds = []
        for b in range(1, means.size):
            up, down = means[0] * (1 - means[b]), means[b] * (1 - means[0])
            found = optimize.minimize_scalar(lambda x, up=up, down=down: -(up * math.log1p(x) + down * math.log1p(-x)),
                                             bounds=(0.0, 0.999), method="bounded", options={"xatol": 1e-12})
            rounds.append(-1.0 / found.fun)
        assert near_limit.paired_limit(instance) == pytest.approx(max(rounds) + sum(rounds), rel=1e-9)
        assert near_limit.paired_limit(instance) > gbai.characteristic_time(instance).T_star, name
    with pytest.raises(ValueError, match="one attribute"):
        near_limit.paired_limit(gbai.table1_example())
    with pytest.raises(ValueError, match="feasible"):
        near_limit.paired_limit(Instance([[0.5], [0.04]], 0.05))


@pytest.mark.parametrize("sampling", SAMPLING_RULES)
@pytest.mark.parametrize("stopping", STOPPING_RULES)
def test_one_pass_over_deltas_repeats_each_separate_run(sampling, stopping):
    # Neither sampling rule looks at delta, so one pass records, for each delta, the
    # run that delta alone gives: same answer, samples, counts and stop flag. The
    # deltas are out of order, and a budget cuts the smallest one short in one seed.
    instance = Instance([[0.5], [0.45], [0.43], [0.4]], 0.05)
    deltas = [1e-3, 0.2, 1e-8, 0.05]
    for r in range(3):
        seed = gbai.run_seed(9, r)
        budget = 4_000 if r == 2 else 10_000_000
        together = run_reference(instance, sampling, stopping, delta=deltas, seed=seed, max_samples=budget)
        for delta, run in zip(deltas, together):
            alone = run_reference(instance, sampling, stopping, delta=delta, seed=seed, max_samples=budget)
            assert run.same_outcome(alone), (delta, r)
        if r == 2:
            assert not together[2].stopped  # delta = 1e-8 hits the budget
    with pytest.raises(ValueError, match="at least one"):
        run_reference(instance, sampling, stopping, delta=[])
    with pytest.raises(ValueError, match="delta"):
        run_reference(instance, sampling, stopping, delta=[0.1, 1.5])


def test_a_reference_runs_through_the_command_line(tmp_path, capsys):
    # The same runs as gbai.sweep gives; an instance with two attributes is one clean error line.
    means = tmp_path / "mu1.csv"
    means.write_text("0.5\n0.45\n0.43\n0.4\n")
    arguments = ["run", "--means", str(means), "--threshold", "0.05", "--runs", "4", "--seed", "5",
                 "--reward", "bernoulli", "--no-cache", "--no-progress", "--json"]
    assert main(arguments + ["--algorithm", "top-two:stopping=bets"]) == 0
    shown = json.loads(capsys.readouterr().out)
    table = gbai.sweep(gbai.load_instance(means, 0.05), "top-two:stopping=bets", n_runs=4, seed=5,
                       reward="bernoulli", cache_dir=None, progress=False, workers=1)
    assert shown["algorithm"] == "top-two:stopping=bets" and shown["runs"] == 4
    assert shown["mean_samples"] == table["samples"].mean() and shown["unstopped_runs"] == 0
    assert main(["run", "exp1", "--x", "0.31", "--algorithm", "track-and-stop", "--runs", "2", "--no-cache",
                 "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == ("gbai: error: the best-arm references need a gbai Instance with one "
                                               "attribute (M = 1)")
    assert main(arguments + ["--algorithm", "top-two:stopping=fast"]) == 2
    assert "option stopping must be one of" in capsys.readouterr().err


@pytest.mark.parametrize("sampling", SAMPLING_RULES)
def test_one_pass_over_every_stop_repeats_each_stop_alone(sampling):
    # Neither sampling rule reads the stop: one pass that checks all five stops records,
    # for each stop and delta, the run that stop alone gives. A budget cuts the runs of
    # the third seed short at the smallest delta for some stops only.
    from gbai.algorithms import resolve, run_together
    from gbai.paper.rewards import pair_keys, reward_code

    instance = Instance([[0.5], [0.45], [0.43], [0.4]], 0.05)
    specs = [resolve(f"{sampling}:stopping={stopping}") for stopping in STOPPING_RULES]
    deltas = np.array([1e-3, 0.2, 1e-8])
    cut_short = 0
    for r in range(3):
        keys = pair_keys(gbai.run_seed(11, r), instance.n_arms, 1)
        budget = 3_000 if r == 2 else 10_000_000
        together = run_together(specs, instance, deltas, keys, reward_code("bernoulli"), budget)
        assert len(together) == len(specs)
        for spec, runs in zip(specs, together):
            alone = spec.run_fast(instance, deltas, keys, reward_code("bernoulli"), budget)
            for run, single in zip(runs, alone):
                assert run[:3] == single[:3] and run[4] == single[4], (spec.spec, r)
                np.testing.assert_array_equal(run[3], single[3])
            cut_short += sum(not run[4] for run in runs)
    assert cut_short > 0, "the budget must cut some run short, or the test misses the budget path"
    with pytest.raises(ValueError, match="do not share a pass"):
        run_together([specs[0], resolve("top-two" if sampling == "track-and-stop" else "track-and-stop")], instance,
                     deltas, keys, reward_code("bernoulli"), 1000)


def test_a_sweep_plays_the_stops_of_one_sampling_rule_in_one_pass(monkeypatch):
    # bai_comparison's sweep: the references' stops share each chunk's pass, and the table
    # is the one each spec's own sweep gives.
    from gbai import simulation

    instances = near_limit.bai_instances()
    specs = ["track-and-stop", "track-and-stop:stopping=gk", "top-two", "top-two:stopping=oracle", "lma-glr"]
    options = dict(n_runs=4, delta=[0.1, 0.01], seed=3, reward="bernoulli", workers=1, cache_dir=None,
                   progress=False, chunk_size=2)
    groups = []
    real = simulation._run_chunks
    monkeypatch.setattr(simulation, "_run_chunks", lambda chunks: groups.append(len(chunks)) or real(chunks))
    table = gbai.sweep(instances, specs, **options)
    # Per instance and chunk of runs: one pass for each sampling rule's two stops, one for LMA-GLR.
    assert sorted(groups) == [1] * 4 + [2] * 8
    monkeypatch.setattr(simulation, "_run_chunks", real)
    for spec in specs:
        alone = gbai.sweep(instances, [spec], **options)
        mine = table[table["algorithm"] == spec].reset_index(drop=True)
        columns = ["delta", "instance", "run", "answer", "samples", "rounds", "stopped"]
        assert mine[columns].equals(alone[columns]), spec
        assert all(np.array_equal(a, b) for a, b in zip(mine["counts"], alone["counts"])), spec
