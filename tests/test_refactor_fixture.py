"""Issue 8: the package layout changed, the runs did not.

``tests/data/refactor_before.npz`` holds, for every algorithm and every combination
of its options, 50 fast-engine runs on six paper instances (seed 8, delta 0.1,
Beta rewards), computed on the code *before* the layout change (commit 9415ee3):
the answer, samples and rounds of each run. The tests recompute them and compare
bit for bit.

``make test`` recomputes a documented subset (every spec on every instance, the
first ``QUICK_RUNS`` runs each); the full table is checked by running this file as
a script::

    .venv/bin/python tests/test_refactor_fixture.py --check   # compare all runs
    .venv/bin/python tests/test_refactor_fixture.py --write   # regenerate (only on purpose)
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import gbai

FIXTURE = Path(__file__).parent / "data" / "refactor_before.npz"
SEED = 8
N_RUNS = 50
QUICK_RUNS = 10
#: Two exp1 points (the closer one is harder), one each from exp2, exp3, vary-n, vary-m.
INSTANCES = {
    "exp1 x=0.33": ("exp1", 0.33, None),
    "exp1 x=0.35": ("exp1", 0.35, None),
    "exp2 x=0.55": ("exp2", 0.55, None),
    "exp3 x=0.15": ("exp3", 0.15, None),
    "vary-n x=0.42 N=5": ("vary-n", 0.42, 5),
    "vary-m x=0.42 M=3": ("vary-m", 0.42, 3),
}


#: Options added after the fixture was written: issue 9's as-run switches of the
#: paper's algorithms. Their defaults are the text's algorithms, which the fixture
#: holds; tests/test_as_run.py checks the switches themselves.
LATER_OPTIONS = {"css-lucb", "ae", "feasibility-then-bai"}
#: Algorithms added after the fixture was written (issue 12); nothing to compare with.
LATER_ALGORITHMS = {"betting"}


def all_specs() -> list[str]:
    """Every algorithm with every combination of its options (as in the fixture), as canonical specs."""
    specs = []
    for name, algorithm in sorted(gbai.ALGORITHMS.items()):
        if name in LATER_ALGORITHMS:
            continue
        keys = [] if name in LATER_OPTIONS else sorted(algorithm.options)
        for values in itertools.product(*(algorithm.options[key] for key in keys)):
            spec = name + (":" + ",".join(f"{k}={v}" for k, v in zip(keys, values)) if keys else "")
            specs.append(gbai.resolve(spec).spec)
    return specs


def compute(specs, n_runs: int) -> np.ndarray:
    """``table[spec, instance, run] = (answer, samples, rounds)``."""
    table = np.zeros((len(specs), len(INSTANCES), n_runs, 3), dtype=np.int64)
    for s, spec in enumerate(specs):
        for k, (experiment, x, size) in enumerate(INSTANCES.values()):
            instance = gbai.paper_instance(experiment, x, size)
            for r in range(n_runs):
                result = gbai.run(instance, spec, delta=0.1, seed=gbai.run_seed(SEED, r))
                table[s, k, r] = result.answer, result.samples, result.rounds
    return table


def load():
    data = np.load(FIXTURE)
    return [str(spec) for spec in data["specs"]], [str(name) for name in data["instances"]], data["table"]


def test_fixture_covers_every_algorithm_and_option_set():
    specs, instances, table = load()
    assert specs == all_specs()
    assert instances == list(INSTANCES)
    assert table.shape == (len(specs), len(INSTANCES), N_RUNS, 3)


@pytest.mark.parametrize("spec", all_specs())
def test_runs_match_the_table_from_before_the_refactor(spec):
    specs, _, table = load()
    expected = table[specs.index(spec), :, :QUICK_RUNS]
    got = compute([spec], QUICK_RUNS)[0]
    np.testing.assert_array_equal(got, expected)


def main(argv):
    if argv[1:] not in (["--write"], ["--check"]):
        raise SystemExit("usage: test_refactor_fixture.py --write | --check")
    specs = all_specs()
    start = time.perf_counter()
    table = compute(specs, N_RUNS)
    elapsed = time.perf_counter() - start
    if argv[1] == "--write":
        FIXTURE.parent.mkdir(exist_ok=True)
        np.savez_compressed(FIXTURE, specs=np.array(specs), instances=np.array(list(INSTANCES)), table=table)
        print(f"wrote {FIXTURE}: {table.shape} in {elapsed:.1f} s")
        return
    stored_specs, _, stored = load()
    assert stored_specs == specs, "the registry's specs changed"
    same = (table == stored).all(axis=-1)
    print(f"{same.sum()} of {same.size} runs identical ({len(specs)} specs x {len(INSTANCES)} instances x "
          f"{N_RUNS} runs; {table[..., 1].sum()} samples in all) in {elapsed:.1f} s")
    if not same.all():
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv)
