"""Golden runs: every algorithm, option and preset gives the runs it gave when this table was written.

``tests/data/golden_runs.npz`` holds, for every spec of :data:`SPECS`, 50 fast-engine
runs on seven instances (seed 8, delta 0.1, Beta rewards): the answer, samples and
rounds of each run. A change of layout must leave every one of them bit for bit
unchanged; a change of behaviour must say so and rewrite the table on purpose::

    .venv/bin/python tests/test_golden_runs.py --check   # compare, print a summary
    .venv/bin/python tests/test_golden_runs.py --write   # rewrite (only on purpose)

``make test`` compares all runs of all specs (about five minutes of one core).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

import gbai

GOLDEN = Path(__file__).parent / "data" / "golden_runs.npz"
SEED = 8
N_RUNS = 50
#: Two exp1 points (the closer one is harder), one each from exp2, exp3, vary-n and
#: vary-m, and one published-figure instance (the authors' typed means).
INSTANCES = {
    "exp1 x=0.33": ("exp1", 0.33, None),
    "exp1 x=0.35": ("exp1", 0.35, None),
    "exp2 x=0.55": ("exp2", 0.55, None),
    "exp3 x=0.15": ("exp3", 0.15, None),
    "vary-n x=0.42 N=5": ("vary-n", 0.42, 5),
    "vary-m x=0.42 M=3": ("vary-m", 0.42, 3),
    "fig1b x=0.5": ("fig1b", 0.5, None),
}

_PLUS = [f"css-lucb-plus:arm_radius={a},confidence={c},sampling={s}"
         for a in ("average", "paper") for c in ("anytime", "bernstein", "paper") for s in ("all", "targeted")]
_BETTING = [f"betting:arm_test={a},sampling={s},union={u}"
            for a in ("average", "none", "product") for s in ("level-free", "uniform", "weakest")
            for u in ("every", "structured")]
_CSS_AS_RUN = ["radius=authors", "init=20", "ties=authors", "count=authors", "arm_count=sum", "sampling=undecided"]
_AE_AS_RUN = ["radius=authors", "radius=shared", "delta=authors", "batch=10", "feasibility=authors",
              "elimination=authors", "stopping=authors"]
_FTB_AS_RUN = ["radius=authors", "radius=shared", "phase2_radius=authors", "phase2_radius=shared", "delta=authors",
               "init=20", "screening=pairs", "restart=yes", "count=authors"]


def _cumulative(name: str, switches: list[str]) -> list[str]:
    """Notebook 10's staircase: the switches added one at a time."""
    return [f"{name}:" + ",".join(switches[:k + 1]) for k in range(1, len(switches))]


#: Every spec, written out: the paper's three algorithms, each of their as-run options
#: alone, their presets, notebook 10's staircase and counterfactual combinations, and
#: every combination of options of the algorithms beyond the paper.
SPECS = (
    ["css-lucb", "ae", "feasibility-then-bai", "lma-glr"]
    + [f"css-lucb:{option}" for option in _CSS_AS_RUN] + ["css-lucb:as=fig1", "css-lucb:as=fig2"]
    + [f"ae:{option}" for option in _AE_AS_RUN] + ["ae:as=published", "ae:as=published,radius=shared,delta=given"]
    + [f"feasibility-then-bai:{option}" for option in _FTB_AS_RUN]
    + ["feasibility-then-bai:as=published",
       "feasibility-then-bai:as=published,radius=shared,phase2_radius=shared,delta=given"]
    + _cumulative("css-lucb", _CSS_AS_RUN[:4])
    + _cumulative("ae", ["radius=authors", "delta=authors", "batch=10", "feasibility=authors",
                         "elimination=authors", "stopping=authors"])
    + _cumulative("feasibility-then-bai", ["radius=authors", "phase2_radius=authors", "delta=authors", "init=20",
                                           "screening=pairs", "restart=yes", "count=authors"])
    + _PLUS + _BETTING
)


def budget(spec: str) -> int:
    """The sample budget of a spec's runs: the default, except where a variant may never stop."""
    if "arm_test=none" in spec:
        return 20_000  # the ablation that cannot reject a feasible competitor: it never stops
    if ":" in spec and spec.split(":")[0] in gbai.PAPER_ALGORITHMS:
        return 2_000_000  # as-run variants, some of which never stop on some instances
    return gbai.DEFAULT_MAX_SAMPLES


def compute(specs, n_runs: int) -> np.ndarray:
    """``table[spec, instance, run] = (answer, samples, rounds)``."""
    table = np.zeros((len(specs), len(INSTANCES), n_runs, 3), dtype=np.int64)
    for s, spec in enumerate(specs):
        for k, (experiment, x, size) in enumerate(INSTANCES.values()):
            instance = gbai.paper_instance(experiment, x, size)
            for r in range(n_runs):
                result = gbai.run(instance, spec, delta=0.1, seed=gbai.run_seed(SEED, r), max_samples=budget(spec))
                table[s, k, r] = result.answer, result.samples, result.rounds
    return table


def load():
    with np.load(GOLDEN) as data:
        return [str(spec) for spec in data["specs"]], [str(name) for name in data["instances"]], data["table"]


def test_golden_table_covers_every_spec_and_instance():
    specs, instances, table = load()
    assert specs == list(SPECS)
    assert instances == list(INSTANCES)
    assert table.shape == (len(SPECS), len(INSTANCES), N_RUNS, 3)


def test_every_option_of_every_algorithm_is_in_the_table():
    # Each option value of each algorithm appears in at least one golden spec.
    resolved = [gbai.resolve(spec) for spec in SPECS]
    for name, algorithm in gbai.ALGORITHMS.items():
        seen = {(key, value) for r in resolved if r.algorithm.name == name for key, value in r.options.items()}
        for key, values in algorithm.options.items():
            for value in values:
                assert (key, value) in seen, f"{name}: option {key}={value} has no golden runs"
        for preset in algorithm.presets:
            if preset != "text":
                assert any(f"as={preset}" in spec for spec in SPECS if spec.startswith(name + ":")), preset


#: Runs already simulated in this test process, by resolved policy and budget.
_SIMULATED: dict[tuple[str, int], np.ndarray] = {}


@pytest.mark.parametrize("spec", SPECS)
def test_runs_match_the_golden_table(spec):
    specs, _, table = load()
    # A preset and the options it stands for (css-lucb:as=fig1 and its four options) resolve to
    # one policy: the first of them to come is simulated, the other compared with its runs.
    policy = (gbai.resolve(spec).spec, budget(spec))
    if policy not in _SIMULATED:
        _SIMULATED[policy] = compute([spec], N_RUNS)[0]
    np.testing.assert_array_equal(_SIMULATED[policy], table[specs.index(spec)])


def main(argv):
    if argv[1:] not in (["--write"], ["--check"]):
        raise SystemExit("usage: test_golden_runs.py --write | --check")
    start = time.perf_counter()
    table = compute(SPECS, N_RUNS)
    elapsed = time.perf_counter() - start
    if argv[1] == "--write":
        GOLDEN.parent.mkdir(exist_ok=True)
        np.savez_compressed(GOLDEN, specs=np.array(SPECS), instances=np.array(list(INSTANCES)), table=table)
        print(f"wrote {GOLDEN}: {table.shape} in {elapsed:.1f} s")
        return
    stored_specs, _, stored = load()
    assert stored_specs == list(SPECS), "the list of golden specs changed"
    same = (table == stored).all(axis=-1)
    print(f"{same.sum()} of {same.size} runs identical ({len(SPECS)} specs x {len(INSTANCES)} instances x "
          f"{N_RUNS} runs; {table[..., 1].sum()} samples in all) in {elapsed:.1f} s")
    for s in np.flatnonzero(~same.all(axis=(1, 2))):
        print(f"  differs: {SPECS[s]} ({(~same[s]).sum()} runs)")
    if not same.all():
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv)
