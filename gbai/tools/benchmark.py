"""Throughput benchmark of the two engines and of the algorithms (``gbai benchmark``, ``make benchmark``).

Runs CSS-LUCB on experiment 3 at x = 0.3 and experiment 1 at x = 0.31 with the
same seeds in both engines, checks that the runs agree, and prints samples per
second for the fast engine, for the step engine and their ratio. It measures one
core: the runs are played one after the other in this process. With ``--beyond``
it also times algorithms against CSS-LUCB (:func:`benchmark_beyond`; by default
every algorithm the notebooks run, the best-arm references of notebook 13 on its
instances mu1 and mu2); with
``--lower-bounds`` it also times the best response and the characteristic time
(:func:`benchmark_lower_bounds`); with ``--scaling`` it times the certified
characteristic time on random instances from 5 x 5 to 500 x 20
(:func:`benchmark_scaling`).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from ..algorithms import RECOMMENDED, REFERENCES, resolve
from ..experiments import paper_instance
from ..limits.alternatives import alternative_values_kernel, best_response, best_response_kernel
from ..limits.characteristic_time import characteristic_time
from ..limits.divergences import kl_bernoulli_scalar
from ..paper.instances import EXPERIMENTS, PAPER_DELTA
from ..paper.model import Instance
from ..simulation import run
from ..studies.near_limit import REFERENCES as BAI_REFERENCES
from ..studies.near_limit import bai_instances

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


#: The paper instances of the algorithms' timing, with the paper's Beta rewards.
BEYOND_WORKLOADS = (("exp1", 0.35), ("exp1", 0.31), ("exp2", 0.6), ("exp3", 0.3))
#: What the notebooks run besides CSS-LUCB (each at its defaults; the options move the cost little): the
#: registry's algorithms, the recommended one, the authors' as-run variants (notebook 9) and the best-arm
#: references of notebook 13 (:data:`gbai.studies.near_limit.REFERENCES`).
BEYOND_ALGORITHMS = ("ae", "feasibility-then-bai", "css-lucb-plus", "lma-glr", "betting", RECOMMENDED,
                     "css-lucb:as=fig2", "ae:as=published", "feasibility-then-bai:as=published",
                     *(spec for _, spec, _ in BAI_REFERENCES))


def _beyond_workloads() -> list[tuple[str, Instance, str]]:
    """``(label, instance, reward)``: :data:`BEYOND_WORKLOADS`, then notebook 13's mu1 and mu2 (M = 1, Bernoulli)."""
    workloads = [(f"{name} x={x}", paper_instance(name, x), "beta") for name, x in BEYOND_WORKLOADS]
    return workloads + [(name.split(" =")[0], instance, "bernoulli") for name, instance in bai_instances().items()]


def benchmark_beyond(algorithms: tuple[str, ...] = BEYOND_ALGORITHMS, runs: int = 20, sweep_runs: int = 200,
                     workers: int = 2) -> tuple[list[dict], list[dict]]:
    """Wall time per run and per sample of ``algorithms`` against CSS-LUCB, and one sweep's duration.

    Returns ``(per_run, sweeps)``: for each workload (:func:`_beyond_workloads`, with the
    rewards its notebook uses) and each algorithm that runs there (CSS-LUCB first, same
    seeds; the best-arm references on the instances with one attribute only), the mean
    seconds per run, the nanoseconds per sample, and the ratios of both to CSS-LUCB's;
    then, for each algorithm that runs on experiment 1, the seconds a ``sweep_runs``-run
    sweep of it at x = 0.35 takes on ``workers`` processes, without the cache.
    """
    from ..simulation import run_seed, sweep

    resolved = {spec: resolve(spec) for spec in ("css-lucb", *algorithms)}
    per_run = []
    for label, instance, reward in _beyond_workloads():
        baseline = None
        for spec, algorithm in resolved.items():
            if algorithm.algorithm.name in REFERENCES and instance.n_attributes != 1:
                continue  # plain best-arm identification: M = 1 only
            run(instance, spec, seed=0, reward=reward)  # load the compiled kernel before timing
            start = time.perf_counter()
            samples = sum(run(instance, spec, seed=run_seed(0, r), reward=reward).samples for r in range(runs))
            seconds = (time.perf_counter() - start) / runs
            per_sample = 1e9 * seconds * runs / samples
            baseline = baseline or (seconds, per_sample)
            per_run.append({"workload": label, "algorithm": spec, "seconds_per_run": seconds,
                            "ns_per_sample": per_sample, "run_over_css_lucb": seconds / baseline[0],
                            "sample_over_css_lucb": per_sample / baseline[1]})
    sweeps = []
    instance = paper_instance("exp1", 0.35)
    for spec in algorithms:
        if resolved[spec].algorithm.name in REFERENCES:
            continue
        start = time.perf_counter()
        sweep(instance, [spec], n_runs=sweep_runs, workers=workers, cache_dir=None, progress=False)
        sweeps.append({"algorithm": spec, "runs": sweep_runs, "workers": workers,
                       "seconds": time.perf_counter() - start})
    return per_run, sweeps


def benchmark_lower_bounds(repeat: int = 2000, verbose: bool = True) -> dict:
    """Time the best response (from Python and inside numba) and ``T*`` on the paper's instances.

    Prints a small report when ``verbose`` and returns the timings in seconds.
    """
    rng = np.random.default_rng(0)
    instance = paper_instance("exp1", 0.31)
    means = np.ascontiguousarray(instance.means)
    th = instance.threshold
    weights = rng.uniform(1.0, 100.0, size=means.shape)
    best_response(means, th, weights)  # compile
    _best_response_loop(means, th, weights, 0, 2)
    _alternatives_loop(means, th, weights, 0, 2)
    start = time.perf_counter()
    for _ in range(repeat):
        best_response(means, th, weights)
    python_call = (time.perf_counter() - start) / repeat
    loops = 20000
    start = time.perf_counter()
    _best_response_loop(means, th, weights, 0, loops)
    numba_call = (time.perf_counter() - start) / loops
    start = time.perf_counter()
    _alternatives_loop(means, th, weights, 0, loops)
    numba_all = (time.perf_counter() - start) / loops
    timings = {
        "best_response_python": python_call,
        "best_response_numba": numba_call,
        "alternative_values_numba": numba_all,
        "characteristic_time": {},
    }
    if verbose:
        print(f"best_response (5x5, from Python):      {python_call * 1e6:8.1f} us")
        print(f"best_response kernel (inside numba):    {numba_call * 1e6:8.2f} us")
        print(f"alternative_values kernel (numba):      {numba_all * 1e6:8.2f} us")
        print("characteristic_time on the paper's instances:")
        print(f"{'instance':28s} {'T*':>12s} {'T* kl(.1,.9)':>13s} {'gap':>9s} {'iters':>5s} {'time':>8s}")
    for name, experiment in EXPERIMENTS.items():
        sizes = experiment.sizes if experiment.sizes else (None,)
        grid = experiment.x_grid if experiment.x_grid else (None,)
        for size in sizes:
            for x in grid:
                inst = paper_instance(name, x, size)
                start = time.perf_counter()
                result = characteristic_time(inst)
                elapsed = time.perf_counter() - start
                timings["characteristic_time"][inst.label] = (elapsed, result)
                if verbose:
                    kl = kl_bernoulli_scalar(PAPER_DELTA, 1.0 - PAPER_DELTA)
                    print(
                        f"{inst.label:28s} {result.T_star:12.2f} {result.T_star * kl:13.2f} "
                        f"{result.gap:9.1e} {result.iterations:5d} {elapsed * 1e3:6.1f}ms"
                    )
    return timings


@njit(cache=True)
def _best_response_loop(means, threshold, weights, code, loops):
    total = 0.0
    for _ in range(loops):
        total += best_response_kernel(means, threshold, weights, code)[0]
    return total


@njit(cache=True)
def _alternatives_loop(means, threshold, weights, code, loops):
    total = 0.0
    for _ in range(loops):
        total += alternative_values_kernel(means, threshold, weights, code)[3][0]
    return total


#: Sizes (N, M) of the scaling benchmark: N M from 25 to 10^4.
SCALING_SIZES = ((5, 5), (10, 5), (20, 5), (50, 10), (100, 10), (200, 10), (200, 20), (500, 20))


def benchmark_scaling(sizes=SCALING_SIZES, seed: int = 0, divergence: str = "bernoulli",
                      verbose: bool = True) -> dict:
    """Time the certified ``T*`` on random instances, one per size, and fit the scaling.

    Means are uniform in [0.35, 0.9] and the threshold is 0.4 (a user's catalogue of
    products). Each size is solved once after a warm-up solve of the smallest one
    (numba compilation). Returns the rows and the least-squares exponent ``k`` of
    ``time ~ (N M)^k`` over the sizes that took more than 10 ms.
    """
    rng = np.random.default_rng(seed)
    characteristic_time(Instance(rng.uniform(0.35, 0.9, size=(3, 3)), 0.4), divergence)  # compile
    rows = []
    if verbose:
        print(f"{'N x M':>9} {'N*M':>6} {'T*':>12} {'gap':>9} {'iters':>5} {'seconds':>8}")
    for n, m in sizes:
        instance = Instance(rng.uniform(0.35, 0.9, size=(n, m)), 0.4)
        start = time.perf_counter()
        result = characteristic_time(instance, divergence)
        elapsed = time.perf_counter() - start
        rows.append({"N": n, "M": m, "T_star": result.T_star, "gap": result.gap,
                     "iterations": result.iterations, "seconds": elapsed})
        if verbose:
            print(f"{f'{n} x {m}':>9} {n * m:>6} {result.T_star:>12.2f} {result.gap:>9.1e} "
                  f"{result.iterations:>5} {elapsed:>8.3f}", flush=True)
    timed = [row for row in rows if row["seconds"] > 0.01]
    exponent = float("nan")
    if len(timed) >= 2:
        exponent = float(np.polyfit(np.log([r["N"] * r["M"] for r in timed]),
                                    np.log([r["seconds"] for r in timed]), 1)[0])
    if verbose:
        print(f"fitted exponent: time ~ (N M)^{exponent:.2f}")
    return {"rows": rows, "exponent": exponent}
