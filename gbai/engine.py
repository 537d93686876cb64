"""The step engine: a readable simulator that advances one round at a time.

Rounds follow reading note 1. Round 1 samples every arm-attribute pair once (the
engine does this when it is created). From round 2 on, the engine builds the round's
:class:`RoundState` (empirical means, the paper's bounds and confidence sets), asks
a policy for a :class:`Decision`, and either stops or samples each requested pair
once. Rewards come from :class:`~gbai.rewards.RewardStream`, so the k-th sample of a
pair is the same for every policy run on the same seed.

A policy is any object with this small protocol (see :class:`Policy`)::

    class MyPolicy:
        name = "my-policy"
        def reset(self, n_arms: int, n_attributes: int) -> None: ...
        def decide(self, state: RoundState) -> Decision: ...

``decide`` returns ``Decision.stop(answer)`` with an arm index or
:data:`~gbai.model.INFEASIBLE`, or ``Decision.sample(pairs)`` with an N x M boolean
mask of the pairs to sample this round. The engine enforces the sample budget: a
round that would exceed ``max_samples`` ends the run as *not stopped*.

Three extensions serve the as-run variants of the authors' code (issue 9); the
paper's algorithms use none of them. A policy may set ``initial_samples`` (in
``reset``) to sample every pair that many times in round 1; ``Decision.sample``
accepts an integer N x M matrix of per-pair sample counts; and
``Decision.stop(answer, reported_samples=...)`` records the count the authors'
code reported instead of the true number of samples, or ends the run with
:data:`~gbai.model.CRASHED` where their code would raise an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from .confidence import ConfidenceSets, EmpiricalBounds, confidence_sets, empirical_bounds
from .model import CRASHED, INFEASIBLE, NO_ANSWER, Instance, check_delta
from .rewards import RewardStream

__all__ = [
    "DEFAULT_MAX_SAMPLES",
    "Decision",
    "Policy",
    "Round",
    "RoundState",
    "RunResult",
    "StepEngine",
    "check_max_samples",
]

#: Default sample budget of one run. Every paper instance needs far fewer samples
#: (about 2 x 10^6 at most for CSS-LUCB at delta = 0.1); an instance that can never
#: be resolved stops here, after a few seconds in the fast engine.
DEFAULT_MAX_SAMPLES = 100_000_000


def check_max_samples(max_samples: int, n_pairs: int) -> int:
    """Validate a sample budget: an integer no smaller than the N M initial samples."""
    if isinstance(max_samples, (bool, np.bool_)) or not isinstance(max_samples, (int, np.integer)):
        raise ValueError(f"max_samples must be an integer, got {max_samples!r}")
    if max_samples < n_pairs:
        raise ValueError(
            f"max_samples={max_samples} is smaller than the {n_pairs} samples of the first round"
        )
    return int(max_samples)


@dataclass(frozen=True)
class RoundState:
    """Everything a policy may look at in round ``t`` (before this round's samples).

    ``counts`` are ``T_ij(t)``, ``sums`` the reward totals, ``total_samples`` is
    ``k(t)``. ``bounds`` holds the empirical means and the paper's bounds, ``sets``
    the confidence sets of Section IV computed from them; the shortcuts below expose
    the most used fields directly. ``observations[i][j]`` lists the rewards of pair
    ``(i, j)`` in the order they were drawn; only its first ``counts[i, j]`` entries
    belong to this round (the engine keeps appending to the same lists).
    """

    t: int
    counts: np.ndarray
    sums: np.ndarray
    total_samples: int
    threshold: float
    delta: float
    bounds: EmpiricalBounds
    sets: ConfidenceSets
    observations: list = field(default_factory=list, repr=False)

    @property
    def n_arms(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.counts.shape[1])

    @property
    def arm_counts(self) -> np.ndarray:
        """``T_i(t) = min_j T_ij(t)``."""
        return self.counts.min(axis=1)

    @property
    def means(self) -> np.ndarray:
        return self.bounds.means

    @property
    def arm_means(self) -> np.ndarray:
        return self.bounds.arm_means

    @property
    def pair_lower(self) -> np.ndarray:
        return self.bounds.pair_lower

    @property
    def pair_upper(self) -> np.ndarray:
        return self.bounds.pair_upper

    @property
    def arm_lower(self) -> np.ndarray:
        return self.bounds.arm_lower

    @property
    def arm_upper(self) -> np.ndarray:
        return self.bounds.arm_upper


@dataclass(frozen=True)
class Decision:
    """A policy's choice for one round: stop with an answer, or sample some pairs."""

    answer: int | None = None
    pulls: np.ndarray | None = None
    reported_samples: int | None = None

    @classmethod
    def stop(cls, answer: int, reported_samples: int | None = None) -> "Decision":
        """Stop and output ``answer`` (an arm index, :data:`~gbai.model.INFEASIBLE`, or
        :data:`~gbai.model.CRASHED`); ``reported_samples`` replaces the true sample
        count in the result (as-run variants only)."""
        return cls(answer=int(answer), reported_samples=None if reported_samples is None else int(reported_samples))

    @classmethod
    def sample(cls, pulls: np.ndarray) -> "Decision":
        """Sample each pair where the N x M boolean mask ``pulls`` is True, once; an
        integer matrix gives each pair's number of samples instead."""
        pulls = np.asarray(pulls)
        if pulls.dtype.kind in "iu":
            if (pulls < 0).any():
                raise ValueError("per-pair sample counts must be non-negative")
            return cls(pulls=pulls.astype(np.int64))
        return cls(pulls=pulls.astype(bool))

    @property
    def stops(self) -> bool:
        return self.pulls is None


@dataclass(frozen=True)
class Round:
    """One round as the step engine saw it: the state and the policy's decision."""

    state: RoundState
    decision: Decision


@dataclass(frozen=True)
class RunResult:
    """The outcome of one run.

    ``answer`` is an arm index, :data:`~gbai.model.INFEASIBLE` (-1),
    :data:`~gbai.model.NO_ANSWER` (-2) when the run hit its budget, or
    :data:`~gbai.model.CRASHED` (-3) where the authors' code would have raised an
    error (``stopped`` is False in the last two cases). ``samples`` is the total
    number of samples including round 1 (for an as-run variant with
    ``count=authors``: the count the authors' code reported),
    ``rounds`` the number of rounds that drew samples (round 1 included), and
    ``counts`` the per-pair sample counts.
    """

    answer: int
    samples: int
    rounds: int
    counts: np.ndarray = field(repr=False)
    stopped: bool
    algorithm: str = ""

    @property
    def declared_infeasible(self) -> bool:
        return self.answer == INFEASIBLE

    @property
    def answer_label(self) -> str:
        """``"arm i"``, ``"infeasible"`` or ``"not stopped"``."""
        if self.answer == CRASHED:
            return "crashed (authors' code)"
        if not self.stopped:
            return "not stopped"
        return "infeasible" if self.answer == INFEASIBLE else f"arm {self.answer}"

    def same_outcome(self, other: "RunResult") -> bool:
        """True when answer, samples, rounds, counts and the stop flag all agree."""
        return (
            self.answer == other.answer
            and self.samples == other.samples
            and self.rounds == other.rounds
            and self.stopped == other.stopped
            and np.array_equal(self.counts, other.counts)
        )


@runtime_checkable
class Policy(Protocol):
    """The protocol a sampling-and-stopping rule implements to run in :class:`StepEngine`."""

    name: str

    def reset(self, n_arms: int, n_attributes: int) -> None:
        """Forget any state from a previous run."""

    def decide(self, state: RoundState) -> Decision:
        """Look at round ``state.t`` and stop or choose the pairs to sample."""


class StepEngine:
    """Run a policy round by round on an instance.

    Parameters
    ----------
    instance:
        The bandit instance.
    policy:
        An object following the :class:`Policy` protocol.
    delta:
        Confidence parameter in (0, 1); it enters the paper's radius.
    seed:
        Non-negative integer (or SeedSequence) fixing every reward.
    reward:
        ``"beta"`` (default) or ``"bernoulli"``.
    max_samples:
        Sample budget; a round that would exceed it ends the run as not stopped.

    Use :meth:`step` to advance one round (it returns the :class:`Round` it played),
    :meth:`rounds` to iterate to the end, or :meth:`run` to get the
    :class:`RunResult` directly.
    """

    def __init__(
        self,
        instance: Instance,
        policy: Policy,
        *,
        delta: float,
        seed: int | np.random.SeedSequence,
        reward: str = "beta",
        max_samples: int = DEFAULT_MAX_SAMPLES,
    ) -> None:
        if not isinstance(instance, Instance):
            raise ValueError(f"instance must be a gbai Instance, got {type(instance).__name__}")
        if not isinstance(policy, Policy):
            raise ValueError(f"policy {policy!r} does not follow the Policy protocol (name, reset, decide)")
        self.instance = instance
        self.policy = policy
        self.delta = check_delta(delta)
        self.max_samples = check_max_samples(max_samples, instance.means.size)
        self.stream = RewardStream(instance.means, seed, reward)
        n_arms, n_attributes = instance.means.shape
        self.counts = np.zeros((n_arms, n_attributes), dtype=np.int64)
        self.sums = np.zeros((n_arms, n_attributes), dtype=np.float64)
        self.observations = [[[] for _ in range(n_attributes)] for _ in range(n_arms)]
        self.total_samples = 0
        self.rounds_played = 0
        self.t = 1
        self.result: RunResult | None = None
        policy.reset(n_arms, n_attributes)
        # Round 1: every pair once (reading note 1); decisions start at t = 2.
        initial = int(getattr(policy, "initial_samples", 1))
        if initial < 1 or initial * n_arms * n_attributes > self.max_samples:
            raise ValueError(f"policy {policy.name!r}: {initial} initial samples per pair do not fit the budget")
        if initial == 1:
            self._sample(np.ones((n_arms, n_attributes), dtype=bool))
        else:
            self._sample(np.full((n_arms, n_attributes), initial, dtype=np.int64))
        self.t = 2

    @property
    def finished(self) -> bool:
        return self.result is not None

    def state(self) -> RoundState:
        """The state of the current round ``t`` (before its samples)."""
        bounds = empirical_bounds(self.sums, self.counts, self.t, self.delta)
        return RoundState(
            t=self.t,
            counts=self.counts.copy(),
            sums=self.sums.copy(),
            total_samples=self.total_samples,
            threshold=self.instance.threshold,
            delta=self.delta,
            bounds=bounds,
            sets=confidence_sets(bounds, self.instance.threshold),
            observations=self.observations,
        )

    def step(self) -> Round:
        """Play round ``t``: build its state, ask the policy, then stop or sample."""
        if self.finished:
            raise RuntimeError("the run is over; read engine.result")
        state = self.state()
        decision = self.policy.decide(state)
        if not isinstance(decision, Decision):
            raise ValueError(f"policy {self.policy.name!r} returned {decision!r}, not a Decision")
        if decision.stops:
            answer = decision.answer
            if answer not in (INFEASIBLE, CRASHED) and not 0 <= answer < self.instance.n_arms:
                raise ValueError(f"policy {self.policy.name!r} stopped with an invalid arm {answer}")
            self._finish(answer, stopped=answer != CRASHED, reported=decision.reported_samples)
        else:
            pulls = decision.pulls
            if pulls.shape != self.counts.shape:
                raise ValueError(
                    f"policy {self.policy.name!r} asked for pulls of shape {pulls.shape}, "
                    f"expected {self.counts.shape}"
                )
            n_new = int(pulls.sum())
            if n_new == 0:
                raise ValueError(
                    f"policy {self.policy.name!r} neither stopped nor sampled in round {self.t}; "
                    "it would loop forever"
                )
            if self.total_samples + n_new > self.max_samples:
                self._finish(NO_ANSWER, stopped=False)
            else:
                self._sample(pulls)
                self.t += 1
        return Round(state, decision)

    def rounds(self) -> Iterator[Round]:
        """Iterate over the remaining rounds until the run ends."""
        while not self.finished:
            yield self.step()

    def run(self) -> RunResult:
        """Play until the policy stops or the budget is exhausted."""
        for _ in self.rounds():
            pass
        return self.result

    def trace(self, snapshots: Iterable[int] = ()) -> tuple[pd.DataFrame, dict[int, Round]]:
        """Play to the end, recording every round; returns ``(table, rounds)``.

        ``table`` has one row per decision round ``t``: the samples drawn so far,
        ``i_t`` (``best_feasible_arm``), ``c_t`` (``competitor_arm``), ``i*_t``
        (``best_perfectly_feasible_arm``), the members of ``F_t``, ``F_Pt`` and ``P_t``
        as tuples, the arms pulled in the round and whether the round stopped.
        ``rounds`` maps each requested round number (and the last round) to the
        :class:`Round` played then, with its full state.
        """
        wanted = set(int(t) for t in snapshots)
        rows, kept = [], {}
        for played in self.rounds():
            state, decision, sets = played.state, played.decision, played.state.sets
            pulled = () if decision.stops else tuple(int(i) for i in np.flatnonzero(decision.pulls.any(axis=1)))
            rows.append(
                {
                    "t": state.t,
                    "samples": state.total_samples,
                    "best_feasible_arm": sets.best_feasible_arm,
                    "competitor_arm": sets.competitor_arm,
                    "best_perfectly_feasible_arm": sets.best_perfectly_feasible_arm,
                    "feasible_set": tuple(int(i) for i in np.flatnonzero(sets.feasible_set)),
                    "perfectly_feasible_set": tuple(int(i) for i in np.flatnonzero(sets.perfectly_feasible_set)),
                    "potential_set": tuple(int(i) for i in np.flatnonzero(sets.potential_set)),
                    "pulled_arms": pulled,
                    "pulls": 0 if decision.stops else int(decision.pulls.sum()),
                    "stops": decision.stops,
                }
            )
            if state.t in wanted or self.finished:
                kept[state.t] = played
        return pd.DataFrame(rows), kept

    def _sample(self, pulls: np.ndarray) -> None:
        for i, j in zip(*np.nonzero(pulls)):
            for _ in range(int(pulls[i, j])):  # a boolean True counts once
                reward = self.stream.sample(i, j, self.counts[i, j])
                self.observations[i][j].append(reward)
                self.sums[i, j] += reward
                self.counts[i, j] += 1
        self.total_samples += int(pulls.sum())
        self.rounds_played += 1

    def _finish(self, answer: int, stopped: bool, reported: int | None = None) -> None:
        self.result = RunResult(
            answer=int(answer),
            samples=self.total_samples if reported is None else int(reported),
            rounds=self.rounds_played,
            counts=self.counts.copy(),
            stopped=stopped,
            algorithm=self.policy.name,
        )
