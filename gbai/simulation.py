"""Running algorithms: one run, sweeps of many runs over instances and algorithms, and their summary.

Run ``r`` of a sweep with seed ``s`` is driven by ``SeedSequence(s, spawn_key=(r,))``
(:func:`run_seed`) whatever the instance or algorithm: with the common random
numbers of :mod:`gbai.paper.rewards`, runs with the same index are paired across
algorithms. Runs are computed in chunks, each stored in the result cache
(:mod:`gbai.cache`) under its inputs and the source of the code that produced it,
so a rerun is instant and an interrupted sweep resumes.

A list of deltas is run by :func:`run_deltas` (:func:`run` is its one-delta case)
and by :func:`sweep`. A spec whose sampling never reads delta
(:attr:`gbai.algorithms.Resolved.level_free`: LMA-GLR, Betting-GBAI with
``sampling=level-free``) then plays each seed once, recording the stop of every
delta, and each delta's results are cached as its own sweep would store them; other
specs play it once per delta. Specs that differ only in what their stopping rule
reads (the best-arm references' ``stopping``: :attr:`gbai.algorithms.Resolved.pass_key`)
share each seed's pass in a sweep, every stop checked after every sample, and each
spec's runs are cached as its own sweep would store them. A sweep checks its deltas
and resolves its specs once, and its table has a ``delta`` column when delta is given
as a list (:func:`delta_list`).
"""

from __future__ import annotations

import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from numbers import Real
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from .algorithms import Resolved, resolve, run_together
from .cache import default_cache_dir, fingerprint, load, result_path, store
from .paper.engine import DEFAULT_MAX_SAMPLES, RunResult, StepEngine, check_max_samples
from .paper.instances import PAPER_DELTA
from .paper.model import INFEASIBLE, Instance, check_delta
from .paper.rewards import pair_keys, reward_code, seed_sequence

__all__ = ["check_deltas", "code_fingerprint", "delta_list", "run", "run_deltas", "run_seed", "sweep"]

ENGINES = ("fast", "step")


def run_seed(seed: int, run_index: int) -> np.random.SeedSequence:
    """The SeedSequence that drives run ``run_index`` of a sweep with seed ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed), spawn_key=(int(run_index),))


def _one_delta(delta) -> bool:
    """True when ``delta`` is one value (a number, a string, a 0-d array), not a sequence of deltas."""
    return isinstance(delta, (Real, np.floating, str, bytes)) or (isinstance(delta, np.ndarray) and delta.ndim == 0)


def delta_list(delta) -> tuple[Sequence, bool]:
    """``delta`` as deltas, unchecked (a number as a list of one), and whether it came as several (a delta column)."""
    listed = not _one_delta(delta)
    return (delta if listed else [delta]), listed


def check_deltas(deltas: Sequence[float]) -> np.ndarray:
    """A sequence of distinct deltas in (0, 1), checked, as the 1-D float array the kernels take."""
    if _one_delta(deltas) or not isinstance(deltas, (Sequence, np.ndarray)):
        raise ValueError(f"deltas must be a list of numbers in (0, 1), got {deltas!r}")
    values = [check_delta(value) for value in deltas]
    if not values:
        raise ValueError("delta is an empty list; give at least one delta")
    if len(set(values)) != len(values):
        raise ValueError(f"delta lists a value twice: {list(deltas)}")
    return np.array(values, dtype=np.float64)


def run(
    instance: Instance,
    algorithm: str = "css-lucb",
    *,
    delta: float = PAPER_DELTA,
    seed: int | np.random.SeedSequence = 0,
    reward: str = "beta",
    max_samples: int = DEFAULT_MAX_SAMPLES,
    engine: str = "fast",
) -> RunResult:
    """Run ``algorithm`` once on ``instance`` at one ``delta`` and return its :class:`~gbai.engine.RunResult`.

    ``algorithm`` is a spec such as ``"css-lucb"`` or ``"css-lucb-plus:sampling=all"``
    (:func:`gbai.algorithms.resolve`). ``engine="fast"`` runs the compiled kernel,
    ``engine="step"`` the step engine of :mod:`gbai.paper.engine`; both give the same
    run for the same seed. It is :func:`run_deltas` with a one-element list.
    """
    if not _one_delta(delta):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}; run a list of deltas with "
                         "gbai.run_deltas(..., deltas=[...])")
    return run_deltas(instance, algorithm, deltas=[delta], seed=seed, reward=reward, max_samples=max_samples,
                      engine=engine)[0]


def run_deltas(
    instance: Instance,
    algorithm: str = "css-lucb",
    *,
    deltas: Sequence[float],
    seed: int | np.random.SeedSequence = 0,
    reward: str = "beta",
    max_samples: int = DEFAULT_MAX_SAMPLES,
    engine: str = "fast",
) -> list[RunResult]:
    """The runs of one seed at each of ``deltas`` (distinct, in (0, 1)), in that order; arguments as :func:`run`.

    In the compiled engine a spec whose sampling never reads delta
    (:attr:`~gbai.algorithms.Resolved.level_free`) plays the seed once, recording the
    stop of every delta, and ends at the stop for the smallest; each result equals the
    run at that delta alone. Other specs, and the step engine, run once per delta.
    """
    if not isinstance(instance, Instance):
        raise ValueError(f"instance must be a gbai Instance, got {type(instance).__name__}")
    resolved = resolve(algorithm)
    levels = check_deltas(deltas)
    code = reward_code(reward)
    max_samples = check_max_samples(max_samples, instance.means.size)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "step":
        return [replace(StepEngine(instance, resolved.policy(), delta=float(delta), seed=seed, reward=reward,
                                   max_samples=max_samples).run(), algorithm=resolved.spec) for delta in levels]
    keys = pair_keys(seed, instance.n_arms, instance.n_attributes)
    return [RunResult(*outcome, algorithm=resolved.spec)
            for outcome in resolved.run_fast(instance, levels, keys, code, max_samples)]


# ----------------------------------------------------------------------- cache
def code_fingerprint(algorithm: str = "css-lucb") -> str:
    """A hash of the source of every module a run of the spec ``algorithm`` depends on (:mod:`gbai.cache`)."""
    return fingerprint(_modules(resolve(algorithm)))


def _modules(resolved) -> tuple[str, ...]:
    return resolved.algorithm.modules + ("gbai.simulation", "gbai.algorithms")


@dataclass(frozen=True)
class _Chunk:
    """Runs ``start .. stop - 1`` of one (instance, algorithm) cell of a sweep at its checked ``deltas``."""

    means: np.ndarray
    threshold: float
    resolved: Resolved
    deltas: tuple[float, ...]
    reward: str
    seed: int
    start: int
    stop: int
    max_samples: int

    def path(self, cache: Path, delta: float) -> Path:
        """Where the chunk's runs at ``delta`` are stored in the result cache (one key per delta)."""
        payload = {"means": self.means.tolist(), "shape": list(self.means.shape), "threshold": self.threshold,
                   "algorithm": self.resolved.spec, "delta": delta, "reward": self.reward, "seed": self.seed,
                   "runs": [self.start, self.stop], "max_samples": self.max_samples}
        return result_path(cache, "runs", payload, _modules(self.resolved))


def _run_chunks(chunks: tuple[_Chunk, ...]) -> list[dict[float, dict[str, np.ndarray]]]:
    """Simulate chunks of the same runs of one instance at each of their deltas, in one pass per seed.

    One chunk, or chunks whose specs share a pass (:func:`gbai.algorithms.run_together`):
    the pass then plays the deltas any of them misses (module level so that process
    pools can pickle it).
    """
    first = chunks[0]
    instance = Instance(first.means, first.threshold)
    deltas = tuple(dict.fromkeys(delta for chunk in chunks for delta in chunk.deltas))
    levels = np.array(deltas, dtype=np.float64)
    code = reward_code(first.reward)
    n = first.stop - first.start
    outs = [{delta: {
        "answer": np.empty(n, dtype=np.int64),
        "samples": np.empty(n, dtype=np.int64),
        "rounds": np.empty(n, dtype=np.int64),
        "stopped": np.empty(n, dtype=bool),
        "counts": np.empty((n, *first.means.shape), dtype=np.int64),
    } for delta in chunk.deltas} for chunk in chunks]
    specs = [chunk.resolved for chunk in chunks]
    for k, r in enumerate(range(first.start, first.stop)):
        keys = pair_keys(run_seed(first.seed, r), instance.n_arms, instance.n_attributes)
        for out, runs in zip(outs, run_together(specs, instance, levels, keys, code, first.max_samples)):
            for delta, (answer, samples, rounds, counts, stopped) in zip(deltas, runs):
                if delta not in out:
                    continue
                data = out[delta]
                data["answer"][k] = answer
                data["samples"][k] = samples
                data["rounds"][k] = rounds
                data["stopped"][k] = stopped
                data["counts"][k] = counts
    return outs


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
    delta: float | Sequence[float] = PAPER_DELTA,
    seed: int = 0,
    reward: str = "beta",
    max_samples: int = DEFAULT_MAX_SAMPLES,
    workers: int | None = None,
    executor: Executor | None = None,
    cache_dir: str | Path | None = "default",
    progress: bool = True,
    chunk_size: int = 25,
) -> pd.DataFrame:
    """Run every algorithm ``n_runs`` times on every instance; one row per run (per delta, for a list).

    Parameters
    ----------
    instances:
        A mapping ``name -> Instance``, or a sequence of instances named by their labels.
    algorithms:
        Algorithm specs (see :func:`gbai.algorithms.resolve`); the table names each
        by its canonical spec.
    n_runs, delta, seed, reward, max_samples:
        As in :func:`run`; run ``r`` uses :func:`run_seed` ``(seed, r)``. ``delta`` may
        be a list: each seed is run by :func:`run_deltas` (once for all of them when the
        spec's sampling never reads delta), and each delta's runs are cached under the
        same key as a sweep at that delta alone, so either sweep reads the other's runs.
        Specs that share a pass (:func:`gbai.algorithms.run_together`) are run together.
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
        instance's true answer; ``error`` is a stopped run with a wrong answer. For a
        list of deltas a first column ``delta`` is added, the rows following the list.
    """
    named = _named_instances(instances)
    names = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    if not names:
        raise ValueError("a sweep needs at least one algorithm")
    # Each name resolved once; two spellings of one spec make one column (the first spelling's place).
    specs = {resolved.spec: resolved for resolved in map(resolve, names)}
    if isinstance(n_runs, bool) or not isinstance(n_runs, (int, np.integer)) or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    given, listed = delta_list(delta)
    deltas = [float(value) for value in check_deltas(given)]
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
        for algorithm, resolved in specs.items():
            chunks = [
                _Chunk(
                    instance.means, instance.threshold, resolved, tuple(deltas), reward, int(seed),
                    start, min(start + chunk_size, n_runs), int(max_samples),
                )
                for start in range(0, n_runs, chunk_size)
            ]
            cells.append((instance_name, algorithm, chunks))

    # Each delta's runs are their own cache entry; the deltas a chunk misses are
    # computed together (in one pass for a spec whose sampling ignores delta), and
    # with the same runs of the specs that share its pass (the references' stops).
    results: dict[_ChunkId, dict[float, dict[str, np.ndarray]]] = {}
    pending: dict[tuple, list[tuple[_ChunkId, _Chunk, dict[float, Path | None]]]] = {}
    for cell_index, (instance_name, _, chunks) in enumerate(cells):
        for chunk_index, chunk in enumerate(chunks):
            found, missing = {}, {}
            for value in chunk.deltas:
                path = chunk.path(cache, value) if cache else None
                stored = load(path) if path is not None and path.exists() else None
                if stored is not None:
                    found[value] = stored
                else:
                    missing[value] = path
            results[(cell_index, chunk_index)] = found
            if missing:
                shared = chunk.resolved.pass_key
                group = (instance_name, chunk_index, shared) if shared is not None else (cell_index, chunk_index)
                pending.setdefault(group, []).append(
                    ((cell_index, chunk_index), replace(chunk, deltas=tuple(missing)), missing))

    total = len(cells) * n_runs * len(deltas)
    bar_options = {"total": total, "unit": "run", "desc": "sweep", "smoothing": 0.05}
    if not progress:
        bar_options["disable"] = True
    with tqdm(**bar_options) as bar:
        bar.update(sum(len(data["answer"]) for found in results.values() for data in found.values()))
        _compute(list(pending.values()), results, bar, workers, executor)

    frames = []
    for value in deltas:
        for cell_index, (instance_name, algorithm, chunks) in enumerate(cells):
            for chunk_index, chunk in enumerate(chunks):
                data = results[(cell_index, chunk_index)][value]
                frame = pd.DataFrame(
                    {
                        "delta": value,
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
    return table[(["delta"] if listed else []) + columns]


_ChunkId = tuple[int, int]


def _compute(pending, results, bar, workers, executor) -> None:
    """Run the missing chunks, a group of chunks sharing a pass at a time, storing each group as soon as it is done."""
    if not pending:
        return

    def finish(group, outs):
        for (chunk_id, _, paths), by_delta in zip(group, outs):
            for value, data in by_delta.items():
                if paths[value] is not None:
                    store(paths[value], data)
                results[chunk_id][value] = data
                bar.update(len(data["answer"]))

    if executor is None and workers == 1:
        for group in pending:
            finish(group, _run_chunks(tuple(chunk for _, chunk, _ in group)))
        return
    own_pool = executor is None
    pool = ProcessPoolExecutor(max_workers=workers) if own_pool else executor
    try:
        futures = {pool.submit(_run_chunks, tuple(chunk for _, chunk, _ in group)): group for group in pending}
        for future in as_completed(futures):
            finish(futures[future], future.result())
    except BaseException:
        if own_pool:
            pool.shutdown(wait=False, cancel_futures=True)
            own_pool = False
        raise
    finally:
        if own_pool:
            pool.shutdown()
