"""Running algorithms: single runs, sweeps over many runs and instances, and the result cache.

A *sweep* is many runs x many instances x several algorithms. Run ``r`` of a sweep
with seed ``s`` is driven by ``SeedSequence(s, spawn_key=(r,))`` (see
:func:`run_seed`), whatever the instance or algorithm: with common random numbers
(:mod:`gbai.rewards`), runs with the same index are paired across algorithms.

Runs are grouped in chunks. Each chunk is computed once and stored on disk under a
content hash of everything that determines it: the instance's means and threshold,
the algorithm, delta, the reward model, the seed, the run range, the sample budget
and a fingerprint of the simulation code. Rerunning a sweep loads the stored chunks,
an interrupted sweep resumes from the chunks it finished, and changing any parameter
(or the code) selects different files. Chunk files are written to a temporary name
and renamed into place, so a killed sweep never leaves a half-written entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from . import __version__
from .algorithms import resolve
from .engine import DEFAULT_MAX_SAMPLES, RunResult, StepEngine, check_max_samples
from .model import CRASHED, INFEASIBLE, Instance, check_delta
from .rewards import pair_keys, reward_code, seed_sequence

__all__ = [
    "code_fingerprint",
    "default_cache_dir",
    "run",
    "run_seed",
    "summarize",
    "sweep",
]

ENGINES = ("fast", "step")
#: Modules every simulated run depends on; an algorithm adds its own (Algorithm.modules).
CORE_MODULES = ("model.py", "rewards.py", "confidence.py", "engine.py", "algorithms/__init__.py",
                "algorithms/base.py", "algorithms/kernels.py", "simulation.py")


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

    ``algorithm`` is a spec such as ``"css-lucb"`` or
    ``"css-lucb-plus:sampling=all"`` (see :func:`gbai.algorithms.resolve`).
    ``engine="fast"`` uses the compiled kernel, ``engine="step"`` the readable step
    engine; both give the same result for the same seed.
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
    answer, samples, rounds, counts, stopped = resolved.algorithm.run_fast(
        instance, delta, keys, code, max_samples, resolved.options
    )
    return RunResult(answer, samples, rounds, counts, stopped, algorithm=resolved.spec)


# ----------------------------------------------------------------------- cache
def default_cache_dir() -> Path:
    """``$GBAI_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/gbai`` (``~/.cache/gbai``)."""
    if os.environ.get("GBAI_CACHE_DIR"):
        return Path(os.environ["GBAI_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gbai"


_FINGERPRINTS: dict[str, str] = {}


def code_fingerprint(algorithm: str = "css-lucb") -> str:
    """A hash of the package version and of the source of every module a run of ``algorithm`` uses.

    That is :data:`CORE_MODULES` plus the algorithm's own ``modules``. Editing any of
    them gives new cache keys; editing presentation code (plotting, notebooks, the
    command line) or another algorithm's module does not.
    """
    if algorithm not in _FINGERPRINTS:
        folder = Path(__file__).parent
        digest = hashlib.sha256(__version__.encode())
        for name in sorted(set(CORE_MODULES) | set(resolve(algorithm).algorithm.modules)):
            digest.update(name.encode())
            digest.update((folder / name).read_bytes())
        _FINGERPRINTS[algorithm] = digest.hexdigest()[:16]
    return _FINGERPRINTS[algorithm]


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

    def key(self) -> str:
        payload = {
            "means": self.means.tolist(),
            "shape": list(self.means.shape),
            "threshold": self.threshold,
            "algorithm": self.algorithm,
            "delta": self.delta,
            "reward": self.reward,
            "seed": self.seed,
            "runs": [self.start, self.stop],
            "max_samples": self.max_samples,
            "code": code_fingerprint(self.algorithm),
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


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


def _load(path: Path) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path) as data:
            return {name: data[name] for name in ("answer", "samples", "rounds", "stopped", "counts")}
    except (OSError, ValueError, KeyError, EOFError):
        return None  # missing or unreadable: recompute


def _store(path: Path, data: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


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
            key = chunk.key()
            path = cache / key[:2] / f"{key}.npz" if cache else None
            stored = _load(path) if path is not None and path.exists() else None
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
            _store(path, data)
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


def summarize(table: pd.DataFrame, by: Sequence[str] = ("instance", "algorithm")) -> pd.DataFrame:
    """Per-group statistics of a sweep table.

    Columns: ``runs``, ``mean_samples``, ``sem_samples`` (standard error of the mean),
    ``ci95_low``/``ci95_high`` (mean +/- 1.96 standard errors, a normal approximation
    that is accurate for the hundreds of runs a point averages), ``median_samples``,
    ``error_rate``, ``unstopped``, ``unstopped_runs`` and ``crashed``.

    A run that hits the sample budget gives no answer, so it is neither right nor
    wrong: ``error_rate`` is the share of wrong answers among the runs that *stopped*
    (NaN when none stopped), and ``unstopped`` is the share of runs that hit the
    budget (``unstopped_runs`` their number). ``crashed`` is the share of runs that
    ended where the authors' code raises an error (as-run variants only); they did
    not stop either, and are counted in neither of the other two. Read the two side by side: an error
    rate of 0 with ``unstopped`` near 1 says the algorithm almost never answered,
    not that it was always right. δ-correctness (Section II of the paper) bounds the
    probability of stopping with a wrong answer; its estimate over all runs,
    ``error_rate * (1 - unstopped)``, is never above ``error_rate``.
    """
    stopped = table["stopped"].astype(bool)
    frame = table.assign(_stopped=stopped, _wrong=stopped & table["error"].astype(bool),
                         _crashed=table["answer"] == CRASHED)
    groups = frame.groupby(list(by), sort=False)
    summary = groups.agg(
        runs=("samples", "size"),
        mean_samples=("samples", "mean"),
        std_samples=("samples", "std"),
        median_samples=("samples", "median"),
        stopped_runs=("_stopped", "sum"),
        wrong_runs=("_wrong", "sum"),
        crashed_runs=("_crashed", "sum"),
    )
    summary["sem_samples"] = summary["std_samples"].fillna(0.0) / np.sqrt(summary["runs"])
    summary["ci95_low"] = summary["mean_samples"] - 1.96 * summary["sem_samples"]
    summary["ci95_high"] = summary["mean_samples"] + 1.96 * summary["sem_samples"]
    summary["error_rate"] = summary["wrong_runs"] / summary["stopped_runs"].where(summary["stopped_runs"] > 0)
    summary["unstopped_runs"] = (summary["runs"] - summary["stopped_runs"] - summary["crashed_runs"]).astype(int)
    summary["unstopped"] = summary["unstopped_runs"] / summary["runs"]
    summary["crashed"] = summary["crashed_runs"] / summary["runs"]
    order = ["runs", "mean_samples", "sem_samples", "ci95_low", "ci95_high", "median_samples", "error_rate",
             "unstopped", "unstopped_runs", "crashed"]
    return summary[order].reset_index()
