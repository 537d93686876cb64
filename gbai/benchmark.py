"""Throughput benchmark of the two engines (``python -m gbai.benchmark`` or ``gbai benchmark``).

Runs CSS-LUCB on experiment 3 at x = 0.3 and experiment 1 at x = 0.31 with the
same seeds in both engines, checks that the runs agree, and prints samples per
second for the fast engine, for the step engine and their ratio. It measures one
core: the runs are played one after the other in this process.
"""

from __future__ import annotations

import argparse
import time

from .instances import paper_instance
from .simulation import run

WORKLOADS = (("exp3", 0.3), ("exp1", 0.31))


def _timed(instance, algorithm, seeds, engine, repeat):
    results = []
    start = time.perf_counter()
    for _ in range(repeat):
        results = [run(instance, algorithm, seed=seed, engine=engine) for seed in seeds]
    elapsed = time.perf_counter() - start
    samples = repeat * sum(result.samples for result in results)
    return results, samples / elapsed, elapsed


def benchmark(runs: int = 2, fast_repeat: int = 20, algorithm: str = "css-lucb") -> list[dict]:
    """Measure both engines on :data:`WORKLOADS`; returns one dict per workload."""
    rows = []
    seeds = list(range(runs))
    for name, x in WORKLOADS:
        instance = paper_instance(name, x)
        run(instance, algorithm, seed=0)  # load the compiled kernel before timing
        fast_results, fast_rate, fast_time = _timed(instance, algorithm, seeds, "fast", fast_repeat)
        step_results, step_rate, step_time = _timed(instance, algorithm, seeds, "step", 1)
        agree = all(a.same_outcome(b) for a, b in zip(fast_results, step_results))
        rows.append(
            {
                "workload": f"{algorithm} on {name} x={x}",
                "runs": runs,
                "mean_samples": sum(r.samples for r in fast_results) / runs,
                "fast_samples_per_s": fast_rate,
                "step_samples_per_s": step_rate,
                "ratio": fast_rate / step_rate,
                "fast_seconds": fast_time,
                "step_seconds": step_time,
                "engines_agree": agree,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gbai benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="seeds per workload (default 2)")
    parser.add_argument("--fast-repeat", type=int, default=20, help="repetitions of the fast runs (default 20)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.fast_repeat < 1:
        parser.error("--runs and --fast-repeat must be positive")
    print(f"{'workload':<32} {'mean samples':>13} {'fast [samples/s]':>17} {'step [samples/s]':>17} {'ratio':>7}  agree")
    for row in benchmark(args.runs, args.fast_repeat):
        print(
            f"{row['workload']:<32} {row['mean_samples']:>13,.0f} {row['fast_samples_per_s']:>17.3e} "
            f"{row['step_samples_per_s']:>17.3e} {row['ratio']:>7.0f}  {row['engines_agree']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
