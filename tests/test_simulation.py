"""Sweeps: results, seeds, the on-disk cache, resumption and executors."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import gbai
from gbai import simulation

INSTANCES = {
    "example": gbai.table1_example(),
    "small": gbai.Instance([[0.8, 0.7], [0.5, 0.9], [0.2, 0.6]], 0.4),
}
ALGORITHMS = ["css-lucb", "ae"]


def _sweep(tmp_path, **overrides):
    options = dict(n_runs=10, delta=0.1, seed=4, workers=1, cache_dir=tmp_path, progress=False, chunk_size=4)
    options.update(overrides)
    return gbai.sweep(INSTANCES, ALGORITHMS, **options)


def _without_counts(table):
    return table.drop(columns="counts")


def test_sweep_rows_match_single_runs(tmp_path):
    table = _sweep(tmp_path)
    assert len(table) == 2 * 2 * 10
    assert list(table.columns) == [
        "instance", "algorithm", "run", "answer", "samples", "rounds", "stopped", "correct", "error", "counts",
    ]
    for row in table.sample(6, random_state=0).itertuples():
        single = gbai.run(INSTANCES[row.instance], row.algorithm, delta=0.1, seed=gbai.run_seed(4, row.run))
        assert (single.answer, single.samples, single.rounds) == (row.answer, row.samples, row.rounds)
        np.testing.assert_array_equal(single.counts, row.counts)
    assert table["correct"].all()


def test_run_seeds_are_shared_across_algorithms():
    # Common random numbers: run r draws from the same streams whatever the algorithm.
    instance = INSTANCES["example"]
    first = gbai.RewardStream(instance.means, gbai.run_seed(4, 3)).samples(0, 1, 20)
    again = gbai.RewardStream(instance.means, gbai.run_seed(4, 3)).samples(0, 1, 20)
    other = gbai.RewardStream(instance.means, gbai.run_seed(4, 2)).samples(0, 1, 20)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_rerun_loads_from_cache(tmp_path, monkeypatch):
    first = _sweep(tmp_path)
    assert len(list(tmp_path.rglob("*.npz"))) == 2 * 2 * 3  # 10 runs in chunks of 4
    monkeypatch.setattr(simulation, "_run_chunks", lambda chunks: pytest.fail("recomputed a cached chunk"))
    second = _sweep(tmp_path)
    pd.testing.assert_frame_equal(_without_counts(first), _without_counts(second))


def test_interrupted_sweep_resumes(tmp_path, monkeypatch):
    real = simulation._run_chunks
    calls = []

    def interrupted(chunks):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.extend(chunk.path(tmp_path, chunk.deltas[0]) for chunk in chunks)
        return real(chunks)

    monkeypatch.setattr(simulation, "_run_chunks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _sweep(tmp_path)
    assert len(list(tmp_path.rglob("*.npz"))) == 5
    assert not list(tmp_path.rglob("*.tmp"))

    resumed = []
    monkeypatch.setattr(simulation, "_run_chunks",
                        lambda chunks: resumed.extend(chunk.path(tmp_path, chunk.deltas[0]) for chunk in chunks)
                        or real(chunks))
    table = _sweep(tmp_path)
    assert len(resumed) == 12 - 5
    assert not set(resumed) & set(calls)
    pd.testing.assert_frame_equal(_without_counts(table), _without_counts(_sweep(tmp_path / "fresh")))


@pytest.mark.parametrize(
    "change",
    [
        {"delta": 0.2},
        {"seed": 5},
        {"reward": "bernoulli"},
        {"max_samples": 10**6},
    ],
)
def test_changed_parameters_never_reuse_entries(tmp_path, monkeypatch, change):
    _sweep(tmp_path)
    computed = []
    real = simulation._run_chunks
    monkeypatch.setattr(simulation, "_run_chunks", lambda chunks: computed.extend(chunks) or real(chunks))
    _sweep(tmp_path, **change)
    assert len(computed) == 12


def test_changed_instance_or_code_changes_the_path(tmp_path):
    def path(means, threshold=0.3, algorithm="css-lucb"):
        return simulation._Chunk(means, threshold, gbai.resolve(algorithm), (0.1,), "beta", 0, 0, 5,
                                 10**6).path(tmp_path, 0.1)

    base = INSTANCES["example"].means
    moved = base.copy()
    moved[0, 0] = 0.61
    assert path(moved) != path(base)
    assert path(base, threshold=0.31) != path(base)
    assert path(base, algorithm="ae") != path(base)
    assert path(base, algorithm="css-lucb:as=fig1") != path(base)
    assert path(base) == path(base.copy())


def _counting(monkeypatch, names):
    """Count the calls of ``names`` as gbai.simulation looks them up."""
    calls = dict.fromkeys(names, 0)

    def counter(name, real):
        def counted(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return counted

    for name in names:
        monkeypatch.setattr(simulation, name, counter(name, getattr(simulation, name)))
    return calls


@pytest.mark.parametrize("delta", [0.1, [0.1, 0.01]])
def test_a_sweep_checks_delta_and_resolves_each_spec_once_not_once_per_seed(monkeypatch, delta):
    calls = _counting(monkeypatch, ["resolve", "check_deltas", "check_delta"])
    table = gbai.sweep(INSTANCES, ["css-lucb", gbai.RECOMMENDED, "css-lucb:as=fig1"], n_runs=6, delta=delta, seed=3,
                       workers=1, cache_dir=None, progress=False, chunk_size=2)
    n_deltas = 1 if np.ndim(delta) == 0 else len(delta)
    assert len(table) == len(INSTANCES) * 3 * 6 * n_deltas  # 36 seeds per delta, 18 chunks
    assert calls == {"resolve": 3, "check_deltas": 1, "check_delta": n_deltas}
    calls.update(dict.fromkeys(calls, 0))
    _, summary = gbai.sweep_experiment("exp1", ["css-lucb"], n_runs=4, delta=delta, x_values=[0.35, 0.4], seed=3,
                                       reward="bernoulli", workers=1, cache_dir=None, progress=False, chunk_size=2)
    assert len(summary) == 2 * n_deltas and ("delta" in summary) == (n_deltas > 1)
    assert calls == {"resolve": 1, "check_deltas": 1, "check_delta": n_deltas}


def test_unreadable_entries_are_recomputed(tmp_path):
    first = _sweep(tmp_path)
    victim = sorted(tmp_path.rglob("*.npz"))[0]
    victim.write_bytes(b"garbage")
    second = _sweep(tmp_path)
    pd.testing.assert_frame_equal(_without_counts(first), _without_counts(second))


def test_executors_give_identical_results(tmp_path):
    inline = _sweep(tmp_path / "inline")
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = _sweep(tmp_path / "threads", executor=pool)
    processes = _sweep(tmp_path / "processes", workers=2)
    uncached = _sweep(None)
    for other in (threaded, processes, uncached):
        pd.testing.assert_frame_equal(_without_counts(inline), _without_counts(other))


def test_summary_statistics(tmp_path):
    table = _sweep(tmp_path)
    summary = gbai.summarize(table)
    assert len(summary) == 4
    row = summary.iloc[0]
    samples = table[(table["instance"] == row["instance"]) & (table["algorithm"] == row["algorithm"])]["samples"]
    assert row["mean_samples"] == pytest.approx(samples.mean())
    assert row["sem_samples"] == pytest.approx(samples.std(ddof=1) / np.sqrt(len(samples)))
    assert row["ci95_high"] - row["ci95_low"] == pytest.approx(2 * 1.96 * row["sem_samples"])
    assert row["error_rate"] == 0 and row["unstopped"] == 0


@pytest.mark.parametrize(
    "options, message",
    [
        ({"n_runs": 0}, "n_runs"),
        ({"workers": 0}, "workers"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"seed": -3}, "seed"),
        ({"delta": 1.0}, "delta"),
        ({"reward": "gauss"}, "reward"),
    ],
)
def test_sweep_argument_errors(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        _sweep(tmp_path, **options)
    with pytest.raises(ValueError, match="unknown algorithm"):
        gbai.sweep(INSTANCES, ["nope"], n_runs=2, cache_dir=None)
    with pytest.raises(ValueError, match="at least one instance"):
        gbai.sweep({}, ["ae"], n_runs=2, cache_dir=None)


def test_any_tied_best_arm_counts_as_correct(monkeypatch):
    # Arms 0 and 1 tie for the best mean. Fabricated runs answer 0, 1, 2, infeasible,
    # and one hits the budget: only the first two are correct, the next two are errors.
    tie = gbai.Instance([[0.9, 0.5], [0.5, 0.9], [0.1, 0.1]], 0.3)
    answers = np.array([0, 1, 2, gbai.INFEASIBLE, gbai.NO_ANSWER])

    def fabricated(chunks):
        n = chunks[0].stop - chunks[0].start
        return [{delta: {"answer": answers[:n], "samples": np.full(n, 10), "rounds": np.full(n, 2),
                         "stopped": answers[:n] != gbai.NO_ANSWER, "counts": np.ones((n, 3, 2), dtype=np.int64)}
                 for delta in chunk.deltas} for chunk in chunks]

    monkeypatch.setattr(simulation, "_run_chunks", fabricated)
    table = gbai.sweep({"tie": tie}, ["ae"], n_runs=5, workers=1, cache_dir=None, progress=False, chunk_size=5)
    assert table["correct"].tolist() == [True, True, False, False, False]
    assert table["error"].tolist() == [False, False, True, True, False]


def test_summary_reports_errors_among_stopped_runs_beside_the_unstopped_share():
    # Built by hand so every count is known: group a has 4 runs, one unstopped and one
    # stopped wrong (error 1/3 among the 3 stopped); group b never stops (error undefined).
    table = pd.DataFrame({
        "instance": ["a"] * 4 + ["b"] * 2,
        "algorithm": "css-lucb",
        "samples": [10, 20, 30, 100, 100, 100],
        "stopped": [True, True, True, False, False, False],
        "error": [False, True, False, False, False, False],
        "answer": [0, 1, 0, gbai.NO_ANSWER, gbai.NO_ANSWER, gbai.NO_ANSWER],
    })
    summary = gbai.summarize(table).set_index("instance")
    assert summary.loc["a", "error_rate"] == pytest.approx(1 / 3)
    assert summary.loc["a", "unstopped"] == 0.25 and summary.loc["a", "unstopped_runs"] == 1
    assert np.isnan(summary.loc["b", "error_rate"])
    assert summary.loc["b", "unstopped"] == 1.0 and summary.loc["b", "unstopped_runs"] == 2
    assert (summary["crashed"] == 0).all()


def test_summary_counts_crashed_runs_apart_from_the_budget():
    # A crashed run (as-run variants) neither stopped nor hit the budget.
    table = pd.DataFrame({
        "instance": "a", "algorithm": "ae:as=published",
        "samples": [10, 20, 100, 40],
        "stopped": [True, False, False, True],
        "error": [False, False, False, True],
        "answer": [0, gbai.CRASHED, gbai.NO_ANSWER, 1],
    })
    row = gbai.summarize(table).iloc[0]
    assert row["crashed"] == 0.25 and row["unstopped_runs"] == 1 and row["unstopped"] == 0.25
    assert row["error_rate"] == 0.5


def test_stored_limit_reads_back_bit_for_bit_and_stores_t_star_once_for_every_delta(tmp_path):
    instance = gbai.paper_instance("exp1", 0.33)
    first = gbai.stored_limit(instance, 0.1, "bernoulli", tmp_path)
    stored = list((tmp_path / "limits").rglob("*.npz"))
    assert len(stored) == 1
    assert gbai.stored_limit(instance, 0.1, "bernoulli", tmp_path) == first == gbai.lower_bound_tstar(instance, 0.1)
    # T* does not depend on delta: another delta reads the same file, and is the limit at that delta, bit for bit.
    assert gbai.stored_limit(instance, 1e-10, "bernoulli", tmp_path) == gbai.lower_bound_tstar(instance, 1e-10)
    assert len(list((tmp_path / "limits").rglob("*.npz"))) == 1
    # The file is what is read: a changed T* comes back as it is on disk, at every delta.
    gbai.cache.store(stored[0], {"T_star": np.array(2 * gbai.characteristic_time(instance).T_star)})
    assert gbai.stored_limit(instance, 0.1, "bernoulli", tmp_path) == first * 2
    gbai.stored_limit(instance, 0.1, "kinf", tmp_path)
    assert len(list((tmp_path / "limits").rglob("*.npz"))) == 2, "one T* per divergence"
    assert gbai.stored_limit(instance, 0.1, "bernoulli", None) == first
    with pytest.raises(ValueError, match="delta"):
        gbai.stored_limit(instance, 1.5, "bernoulli", tmp_path)
