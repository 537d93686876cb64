"""Running algorithms: one run, sweeps of many runs over instances and algorithms, and their summary.

Run ``r`` of a sweep with seed ``s`` is driven by ``SeedSequence(s, spawn_key=(r,))``
(:func:`run_seed`) whatever the instance or algorithm: with the common random
numbers of :mod:`gbai.paper.rewards`, runs with the same index are paired across
algorithms. Runs are computed in chunks, each stored in the result cache
(:mod:`gbai.cache`) under its inputs and the source of the code that produced it,
so a rerun is instant and an interrupted sweep resumes.
"""

from __future__ import annotations

import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from .algorithms import resolve
from .cache import default_cache_dir, fingerprint, load, result_path, store
from .paper.engine import DEFAULT_MAX_SAMPLES, RunResult, StepEngine, check_max_samples
from .paper.model import INFEASIBLE, Instance, check_delta
from .paper.rewards import pair_keys, reward_code, seed_sequence

__all__ = ["code_fingerprint", "run", "run_seed", "sweep"]

ENGINES = ("fast", "step")


def run_seed(seed: int, run_index: int) -> np.random.SeedSequence:
    """The SeedSequence that drives run ``run_index`` of a sweep with seed ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed), spawn_key=(int(run_index),))


def run(
    instance: Instance,
    algorithm: str = "css-lucb",
    *,
    delta: float = 0.1,
    seed: int | np.random.SeedSequence = 0,
    reward: str = "beta",
    max_samples: int = DEFAULT_MAX_SAMPLES,
    engine: str = "fast",
) -> RunResult:
    """Run ``algorithm`` once on ``instance`` and return its :class:`~gbai.engine.RunResult`.

    ``algorithm`` is a spec such as ``"css-lucb"`` or ``"css-lucb-plus:sampling=all"``
    (:func:`gbai.algorithms.resolve`). ``engine="fast"`` runs the compiled kernel,
    ``engine="step"`` the step engine of :mod:`gbai.paper.engine`; both give the same
    run for the same seed.
    """
    if not isinstance(instance, Instance):
        raise ValueError(f"instance must be a gbai Instance, got {type(instance).__name__}")
    resolved = resolve(algorithm)
    delta = check_delta(delta)
    code = reward_code(reward)
    max_samples = check_max_samples(max_samples, instance.means.size)
    if engine == "step":
        result = StepEngine(
            instance, resolved.policy(), delta=delta, seed=seed, reward=reward, max_samples=max_samples
        ).run()
        return replace(result, algorithm=resolved.spec)
    if engine != "fast":
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    keys = pair_keys(seed, instance.n_arms, instance.n_attributes)
    answer, samples, rounds, counts, stopped = resolved.run_fast(instance, delta, keys, code, max_samples)
    return RunResult(answer, samples, rounds, counts, stopped, algorithm=resolved.spec)


# ----------------------------------------------------------------------- cache
def code_fingerprint(algorithm: str = "css-lucb") -> str:
    """A hash of the source of every module a run of the spec ``algorithm`` depends on (:mod:`gbai.cache`)."""
    return fingerprint(_modules(algorithm))


def _modules(algorithm: str) -> tuple[str, ...]:
    return resolve(algorithm).algorithm.modules + ("gbai.simulation", "gbai.algorithms")


@dataclass(frozen=True)
class _Chunk:
    """Runs ``start .. stop - 1`` of one (instance, algorithm) cell of a sweep."""

    means: np.ndarray
    threshold: float
    algorithm: str
    delta: float
    reward: str
    seed: int
    start: int
    stop: int
    max_samples: int

    def path(self, cache: Path) -> Path:
        """Where the chunk is stored in the result cache."""
        payload = {"means": self.means.tolist(), "shape": list(self.means.shape), "threshold": self.threshold,
                   "algorithm": self.algorithm, "delta": self.delta, "reward": self.reward, "seed": self.seed,
                   "runs": [self.start, self.stop], "max_samples": self.max_samples}
        return result_path(cache, "runs", payload, _modules(self.algorithm))


def _run_chunk(chunk: _Chunk) -> dict[str, np.ndarray]:
    """Simulate one chunk (module level so that process pools can pickle it)."""
    instance = Instance(chunk.means, chunk.threshold)
    n = chunk.stop - chunk.start
    out = {
        "answer": np.empty(n, dtype=np.int64),
        "samples": np.empty(n, dtype=np.int64),
        "rounds": np.empty(n, dtype=np.int64),
        "stopped": np.empty(n, dtype=bool),
        "counts": np.empty((n, *chunk.means.shape), dtype=np.int64),
    }
    for k, r in enumerate(range(chunk.start, chunk.stop)):
        result = run(
            instance,
            chunk.algorithm,
            delta=chunk.delta,
            seed=run_seed(chunk.seed, r),
            reward=chunk.reward,
            max_samples=chunk.max_samples,
        )
        out["answer"][k] = result.answer
        out["samples"][k] = result.samples
        out["rounds"][k] = result.rounds
        out["stopped"][k] = result.stopped
        out["counts"][k] = result.counts
    return out


# ----------------------------------------------------------------------- sweep
def _named_instances(instances) -> dict[str, Instance]:
    if isinstance(instances, Instance):
        instances = [instances]
    if isinstance(instances, Mapping):
        named = {str(name): value for name, value in instances.items()}
    else:
        named = {}
        for index, value in enumerate(instances):
            name = getattr(value, "label", "") or f"instance {index}"
            if name in named:
                raise ValueError(f"two instances share the label {name!r}; pass a mapping of names")
            named[name] = value
    if not named:
        raise ValueError("a sweep needs at least one instance")
    for name, value in named.items():
        if not isinstance(value, Instance):
            raise ValueError(f"instance {name!r} is a {type(value).__name__}, not a gbai Instance")
    return named


def sweep(
    instances: Mapping[str, Instance] | Sequence[Instance] | Instance,
    algorithms: Sequence[str] | str,
    *,
    n_runs: int,
    delta: float = 0.1,
    seed: int = 0,
    reward: str = "beta",
    max_samples: int = DEFAULT_MAX_SAMPLES,
    workers: int | None = None,
    executor: Executor | None = None,
    cache_dir: str | Path | None = "default",
    progress: bool = True,
    chunk_size: int = 25,
) -> pd.DataFrame:
    """Run every algorithm ``n_runs`` times on every instance; one row per run.

    Parameters
    ----------
    instances:
        A mapping ``name -> Instance``, or a sequence of instances named by their labels.
    algorithms:
        Algorithm specs (see :func:`gbai.algorithms.resolve`); the table names each
        by its canonical spec.
    n_runs, delta, seed, reward, max_samples:
        As in :func:`run`; run ``r`` uses :func:`run_seed` ``(seed, r)``.
    workers:
        Processes to spread chunks over when no executor is given (default: all
        cores); 1 runs everything in this process.
    executor:
        Any :class:`concurrent.futures.Executor`, e.g. a Dask ``client.get_executor()``.
        It is used as given and not shut down.
    cache_dir:
        Where chunks are stored; ``"default"`` means :func:`default_cache_dir`,
        ``None`` disables the cache.
    progress:
        Show a tqdm progress bar (counted in runs).
    chunk_size:
        Runs per chunk: the unit of caching and of parallel work.

    Returns
    -------
    pandas.DataFrame
        Columns ``instance, algorithm, run, answer, samples, rounds, stopped,
        correct, error, counts``. ``correct`` compares a stopped run's answer with the
        instance's true answer; ``error`` is a stopped run with a wrong answer.
    """
    named = _named_instances(instances)
    names = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    if not names:
        raise ValueError("a sweep needs at least one algorithm")
    names = list(dict.fromkeys(resolve(name).spec for name in names))
    if isinstance(n_runs, bool) or not isinstance(n_runs, (int, np.integer)) or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    delta = check_delta(delta)
    reward_code(reward)
    seed_sequence(seed)
    for instance in named.values():
        check_max_samples(max_samples, instance.means.size)
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    cache = default_cache_dir() if cache_dir == "default" else (Path(cache_dir) if cache_dir else None)

    cells: list[tuple[str, str, list[_Chunk]]] = []
    for instance_name, instance in named.items():
        for algorithm in names:
            chunks = [
                _Chunk(
                    instance.means, instance.threshold, algorithm, delta, reward, int(seed),
                    start, min(start + chunk_size, n_runs), int(max_samples),
                )
                for start in range(0, n_runs, chunk_size)
            ]
            cells.append((instance_name, algorithm, chunks))

    results: dict[_ChunkId, dict[str, np.ndarray]] = {}
    pending: list[tuple[_ChunkId, _Chunk, Path | None]] = []
    for cell_index, (_, _, chunks) in enumerate(cells):
        for chunk_index, chunk in enumerate(chunks):
            path = chunk.path(cache) if cache else None
            stored = load(path) if path is not None and path.exists() else None
            if stored is not None:
                results[(cell_index, chunk_index)] = stored
            else:
                pending.append(((cell_index, chunk_index), chunk, path))

    total = len(cells) * n_runs
    bar_options = {"total": total, "unit": "run", "desc": "sweep", "smoothing": 0.05}
    if not progress:
        bar_options["disable"] = True
    with tqdm(**bar_options) as bar:
        bar.update(sum(len(data["answer"]) for data in results.values()))
        _compute(pending, results, bar, workers, executor)

    frames = []
    for cell_index, (instance_name, algorithm, chunks) in enumerate(cells):
        for chunk_index, chunk in enumerate(chunks):
            data = results[(cell_index, chunk_index)]
            frame = pd.DataFrame(
                {
                    "instance": instance_name,
                    "algorithm": algorithm,
                    "run": np.arange(chunk.start, chunk.stop),
                    "answer": data["answer"],
                    "samples": data["samples"],
                    "rounds": data["rounds"],
                    "stopped": data["stopped"].astype(bool),
                }
            )
            frame["counts"] = list(data["counts"])
            frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    # With a tie for the best feasible arm (which the paper rules out) any tied arm is right.
    right = {name: set(inst.best_arms) or {INFEASIBLE} for name, inst in named.items()}
    table["correct"] = table["stopped"] & np.array(
        [answer in right[name] for name, answer in zip(table["instance"], table["answer"])], dtype=bool
    )
    table["error"] = table["stopped"] & ~table["correct"]
    columns = ["instance", "algorithm", "run", "answer", "samples", "rounds", "stopped", "correct", "error", "counts"]
    return table[columns]


_ChunkId = tuple[int, int]


def _compute(pending, results, bar, workers, executor) -> None:
    """Run the missing chunks, storing each one as soon as it is done."""
    if not pending:
        return

    def finish(chunk_id, path, data):
        if path is not None:
            store(path, data)
        results[chunk_id] = data
        bar.update(len(data["answer"]))

    if executor is None and workers == 1:
        for chunk_id, chunk, path in pending:
            finish(chunk_id, path, _run_chunk(chunk))
        return
    own_pool = executor is None
    pool = ProcessPoolExecutor(max_workers=workers) if own_pool else executor
    try:
        futures = {pool.submit(_run_chunk, chunk): (chunk_id, path) for chunk_id, chunk, path in pending}
        for future in as_completed(futures):
            chunk_id, path = futures[future]
            finish(chunk_id, path, future.result())
    except BaseException:
        if own_pool:
            pool.shutdown(wait=False, cancel_futures=True)
            own_pool = False
        raise
    finally:
        if own_pool:
            pool.shutdown()
