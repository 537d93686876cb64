"""Every compiled kernel of gbai into numba's cache ahead of its first use: ``gbai compile`` (``make install`` runs it).

numba stores each compiled function beside its source (``__pycache__/*.nbi`` and
``*.nbc``), one machine-code version per type signature of the arguments, and keys
the entries by the source file's path and modification time. A fresh clone (new
times) or an edited module has none, so the first call of a kernel compiles it:
about a minute and a half for the first ``gbai hardness`` on a busy 2-core machine.
:func:`precompile` makes, once, the calls the package makes, with the argument types
those calls pass: the characteristic time, the best response and Theorem 1 for every
divergence, a short run of every algorithm at every value of each of its options
(the as-run presets and the references' stops included) in both engines and both
reward models, and the benchmark's loops. numba compiles every function a kernel
calls with it, so one short run covers its whole call graph, whatever path the run
takes. A test checks that it leaves no kernel of the package uncompiled.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["precompile"]


def _specs() -> list[str]:
    """Every algorithm and reference: its default, each option at each other value, and each preset."""
    from ..algorithms import ALGORITHMS, REFERENCES

    specs = []
    for name, algorithm in {**ALGORITHMS, **REFERENCES}.items():
        specs.append(name)
        specs += [f"{name}:{option}={value}" for option, values in algorithm.options.items() for value in values[1:]]
        specs += [f"{name}:as={preset}" for preset in algorithm.presets]
    return specs


def precompile() -> tuple[int, float]:
    """Load or compile every kernel the package calls; returns ``(specs run, seconds)``."""
    from ..algorithms import REFERENCES, resolve
    from ..beyond.lma_glr import alternative_evidence
    from ..beyond.references import optimal_proportions
    from ..limits import alternative_values, best_response, characteristic_time
    from ..limits.reward_laws import kinf_beta
    from ..paper.instances import table1_example
    from ..paper.model import Instance
    from ..paper.rewards import REWARD_MODELS
    from ..paper.theorem1 import theorem1_bound
    from ..simulation import run, run_deltas
    from . import benchmark

    start = time.perf_counter()
    # Table I (a feasible answer beside an infeasible arm: the structured solver), an infeasible instance
    # (the closed form), and a one-attribute instance for the references.
    grouped = table1_example()
    infeasible = Instance([[0.3, 0.8], [0.8, 0.2]], 0.5)
    single = Instance([[0.7], [0.5], [0.3]], 0.05)
    weights = np.full(grouped.means.shape, 1.0)
    for divergence in ("bernoulli", "gaussian", "kinf"):
        for instance in (grouped, infeasible):
            characteristic_time(instance, divergence)
        best_response(grouped.means, grouped.threshold, weights, divergence)
        alternative_values(grouped.means, grouped.threshold, weights, divergence)
    theorem1_bound(grouped, 0.1)
    kinf_beta(0.6, 0.4)
    specs = _specs()
    for spec in specs:
        resolved = resolve(spec)
        instance = single if resolved.algorithm.name in REFERENCES else grouped
        for reward in REWARD_MODELS:
            # Two deltas: a level-free spec plays them in one pass, the others once each.
            run_deltas(instance, spec, deltas=[0.1, 0.01], seed=0, reward=reward, max_samples=2000)
            if resolved.algorithm.policy is not None and not resolved.as_run:
                run(instance, spec, seed=0, reward=reward, max_samples=2000, engine="step")
    optimal_proportions(np.array([0.6, 0.5, 0.4]))  # public, called from Python
    alternative_evidence(grouped.means, grouped.threshold, np.full(grouped.means.shape, 5))  # public, as above
    means = np.ascontiguousarray(grouped.means)
    benchmark._best_response_loop(means, grouped.threshold, weights, 0, 1)
    benchmark._alternatives_loop(means, grouped.threshold, weights, 0, 1)
    return len(specs), time.perf_counter() - start
