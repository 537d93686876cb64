"""What the compiled kernels share: the first round (the paper's three draw theirs arm by arm), the stops per level.

A registry kernel takes a vector of levels (deltas) and returns one ``(answer,
samples, rounds, counts, stopped)`` per level: one level a call for a rule whose
sampling reads delta (:func:`one_level`), all of them for one whose sampling never
reads it (:meth:`gbai.algorithms.Resolved.run_fast` decides), which plays the seed
once and notes each level's stop as it passes (:func:`new_stops`, :func:`record_stops`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..paper.model import NO_ANSWER
from ..paper.rewards import reward_exponents
from .rewards import draw

__all__ = ["first_round", "kernel_inputs", "level_results", "new_stops", "one_level", "record_stops", "run_result"]


def kernel_inputs(instance, keys: np.ndarray) -> tuple:
    """``(means, threshold, keys, exponents)``: an instance and its stream keys as the compiled kernels take them."""
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    return (means, float(instance.threshold), np.ascontiguousarray(keys, dtype=np.uint64),
            np.ascontiguousarray(reward_exponents(means)))


@njit(cache=True)
def first_round(keys, means, exponents, model, per_pair):
    """``(sums, counts)`` after the first ``per_pair`` rewards of every pair (arrays of any shape, pair by pair)."""
    sums = np.zeros(means.shape)
    counts = np.zeros(means.shape, dtype=np.int64)
    for p in range(means.size):
        for k in range(per_pair):
            sums.flat[p] += draw(keys.flat[p], k, means.flat[p], exponents.flat[p], model)
        counts.flat[p] = per_pair
    return sums, counts


@njit(cache=True)
def new_stops(n_levels, shape):
    """Empty stop records for ``n_levels`` levels, counts of ``shape``: ``(answers, samples, rounds, counts, stopped)``.

    Every answer starts at NO_ANSWER and every level as not stopped.
    """
    return (np.full(n_levels, NO_ANSWER, dtype=np.int64), np.zeros(n_levels, dtype=np.int64),
            np.zeros(n_levels, dtype=np.int64), np.zeros((n_levels,) + shape, dtype=np.int64),
            np.zeros(n_levels, dtype=np.bool_))


@njit(cache=True)
def record_stops(stops, passed, answer, samples, rounds, counts, stopped):
    """Record the run's state for every level not yet stopped whose entry of ``passed`` is true.

    ``stops`` comes from :func:`new_stops`; the levels recorded are marked stopped when
    ``stopped`` is true (a stop), and stay open when it is false (the budget ran out:
    pass ``NO_ANSWER`` and every level). Returns how many levels are still open.
    """
    answers, at_samples, at_rounds, at_counts, done = stops
    open_levels = 0
    for k in range(done.size):
        if not done[k] and passed[k]:
            answers[k], at_samples[k], at_rounds[k], done[k] = answer, samples, rounds, stopped
            at_counts[k] = counts
        if not done[k]:
            open_levels += 1
    return open_levels


def run_result(answer, samples, rounds, counts, stopped) -> tuple:
    """A kernel's ``(answer, samples, rounds, counts, stopped)`` as Python numbers."""
    return int(answer), int(samples), int(rounds), counts, bool(stopped)


def level_results(stops) -> list[tuple]:
    """The stop records of :func:`new_stops` as one run tuple per level."""
    return [run_result(*(record[k] for record in stops)) for k in range(stops[0].size)]


def one_level(deltas: np.ndarray) -> float:
    """The level of a kernel whose sampling reads delta, which the registry calls once per level."""
    if len(deltas) != 1:
        raise ValueError(f"a rule whose sampling reads delta runs one level at a time, got {len(deltas)} levels")
    return float(deltas[0])
