"""The step engine: a readable simulator that plays one round at a time (reading note 1).

Round 1 samples every pair once. From round ``t = 2`` on the engine shows a policy
the round's :class:`RoundState` (counts, sums, the bounds and sets of
:mod:`gbai.paper.bounds`) and gets a :class:`Decision`: stop with an answer, or
sample a set of pairs once each. A policy is any object with ``name``,
``reset(n_arms, n_attributes)`` and ``decide(state)`` (:class:`Policy`). A round
that would exceed the sample budget ends the run unstopped (:data:`NO_ANSWER`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Iterator, Protocol, runtime_checkable

import numpy as np

from .bounds import ConfidenceSets, EmpiricalBounds, confidence_sets, empirical_bounds
from .model import INFEASIBLE, NO_ANSWER, Instance, check_delta
from .rewards import RewardStream

__all__ = ["DEFAULT_MAX_SAMPLES", "Decision", "Policy", "Round", "RoundState", "RunResult",
           "StepEngine", "check_max_samples"]

#: The default sample budget of one run: far above what any paper instance needs.
DEFAULT_MAX_SAMPLES = 100_000_000


def check_max_samples(max_samples: int, n_pairs: int) -> int:
    """A sample budget: an integer no smaller than the ``N M`` samples of round 1."""
    if isinstance(max_samples, (bool, np.bool_)) or not isinstance(max_samples, (int, np.integer)):
        raise ValueError(f"max_samples must be an integer, got {max_samples!r}")
    if max_samples < n_pairs:
        raise ValueError(f"max_samples={max_samples} is smaller than the {n_pairs} samples of the first round")
    return int(max_samples)


@dataclass(frozen=True)
class RoundState:
    """What a policy sees in round ``t``, before the round's samples.

    ``counts`` are ``T_ij(t)``, ``sums`` the reward totals, ``total_samples`` is
    ``k(t)``; ``observations[i][j]`` lists pair ``(i, j)``'s rewards in draw order
    (only the first ``counts[i, j]`` belong to this round). ``bounds`` and ``sets``
    are computed on first use.
    """

    t: int
    counts: np.ndarray
    sums: np.ndarray
    total_samples: int
    threshold: float
    delta: float
    observations: list = field(default_factory=list, repr=False)

    @cached_property
    def bounds(self) -> EmpiricalBounds:
        """Means and bounds of eqs. (2)-(4)."""
        return empirical_bounds(self.sums, self.counts, self.t, self.delta)

    @cached_property
    def sets(self) -> ConfidenceSets:
        """The sets of Algorithm 1."""
        return confidence_sets(self.bounds, self.threshold)

    @property
    def n_arms(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.counts.shape[1])

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
    """A policy's choice for one round: stop with ``answer``, or sample the pairs of ``pulls`` once."""

    answer: int | None = None
    pulls: np.ndarray | None = None

    @classmethod
    def stop(cls, answer: int) -> "Decision":
        """Stop and output an arm index or :data:`~gbai.paper.model.INFEASIBLE`."""
        return cls(answer=int(answer))

    @classmethod
    def sample(cls, pulls: np.ndarray) -> "Decision":
        """Sample once each pair where the N x M boolean mask ``pulls`` is True."""
        return cls(pulls=np.asarray(pulls, dtype=bool))

    @property
    def stops(self) -> bool:
        return self.pulls is None


@dataclass(frozen=True)
class Round:
    """One round as the engine played it."""

    state: RoundState
    decision: Decision


@dataclass(frozen=True)
class RunResult:
    """The outcome of one run.

    ``answer`` is an arm, ``INFEASIBLE`` (-1) or :data:`NO_ANSWER` (-2, budget hit;
    ``stopped`` is then False); ``samples`` counts every sample, round 1 included;
    ``rounds`` the rounds that drew samples; ``counts`` the per-pair counts.
    """

    answer: int
    samples: int
    rounds: int
    counts: np.ndarray = field(repr=False)
    stopped: bool
    algorithm: str = ""

    @property
    def answer_label(self) -> str:
        """``"arm i"``, ``"infeasible"`` or ``"not stopped"``."""
        if not self.stopped:
            return "not stopped"
        return "infeasible" if self.answer == INFEASIBLE else f"arm {self.answer}"

    def same_outcome(self, other: "RunResult") -> bool:
        """Answer, samples, rounds, counts and the stop flag all agree."""
        return (self.answer == other.answer and self.samples == other.samples and self.rounds == other.rounds
                and self.stopped == other.stopped and np.array_equal(self.counts, other.counts))


@runtime_checkable
class Policy(Protocol):
    """A sampling and stopping rule that the step engine can run."""

    name: str

    def reset(self, n_arms: int, n_attributes: int) -> None:
        """Forget any state of a previous run."""

    def decide(self, state: RoundState) -> Decision:
        """Stop, or choose the pairs to sample in round ``state.t``."""


class StepEngine:
    """Run a policy round by round on an instance with the rewards of ``seed``.

    :meth:`step` plays one round, :meth:`rounds` iterates to the end, :meth:`run`
    returns the :class:`RunResult`, :meth:`trace` records every round.
    """

    def __init__(self, instance: Instance, policy: Policy, *, delta: float, seed: int | np.random.SeedSequence,
                 reward: str = "beta", max_samples: int = DEFAULT_MAX_SAMPLES) -> None:
        if not isinstance(instance, Instance):
            raise ValueError(f"instance must be a gbai Instance, got {type(instance).__name__}")
        if not isinstance(policy, Policy):
            raise ValueError(f"policy {policy!r} does not follow the Policy protocol (name, reset, decide)")
        self.instance, self.policy = instance, policy
        self.delta = check_delta(delta)
        self.max_samples = check_max_samples(max_samples, instance.means.size)
        self.stream = RewardStream(instance.means, seed, reward)
        n, m = instance.means.shape
        self.counts = np.zeros((n, m), dtype=np.int64)
        self._sums = [[0.0] * m for _ in range(n)]  # Python floats: the same sums, faster to update
        self.observations = [[[] for _ in range(m)] for _ in range(n)]
        self.total_samples = self.rounds_played = 0
        self.result: RunResult | None = None
        policy.reset(n, m)
        self._sample(np.ones((n, m), dtype=bool))  # round 1: every pair once
        self.t = 2

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def sums(self) -> np.ndarray:
        """The reward totals of every pair, summed in draw order."""
        return np.array(self._sums)

    def state(self) -> RoundState:
        """The state of the current round ``t``."""
        return RoundState(self.t, self.counts.copy(), self.sums, self.total_samples, self.instance.threshold,
                          self.delta, self.observations)

    def step(self) -> Round:
        """Play round ``t``: ask the policy, then stop or sample."""
        if self.finished:
            raise RuntimeError("the run is over; read engine.result")
        state = self.state()
        decision = self.policy.decide(state)
        if not isinstance(decision, Decision):
            raise ValueError(f"policy {self.policy.name!r} returned {decision!r}, not a Decision")
        if decision.stops:
            if decision.answer != INFEASIBLE and not 0 <= decision.answer < self.instance.n_arms:
                raise ValueError(f"policy {self.policy.name!r} stopped with an invalid arm {decision.answer}")
            self._finish(decision.answer, stopped=True)
        elif decision.pulls.shape != self.counts.shape:
            raise ValueError(f"policy {self.policy.name!r} asked for pulls of shape {decision.pulls.shape}, "
                             f"expected {self.counts.shape}")
        elif not decision.pulls.any():
            raise ValueError(f"policy {self.policy.name!r} neither stopped nor sampled in round {self.t}; "
                             "it would loop forever")
        elif self.total_samples + int(decision.pulls.sum()) > self.max_samples:
            self._finish(NO_ANSWER, stopped=False)
        else:
            self._sample(decision.pulls)
            self.t += 1
        return Round(state, decision)

    def rounds(self) -> Iterator[Round]:
        """The remaining rounds, until the run ends."""
        while not self.finished:
            yield self.step()

    def run(self) -> RunResult:
        """Play until the policy stops or the budget runs out."""
        for _ in self.rounds():
            pass
        return self.result

    def trace(self, snapshots: Iterable[int] = ()):
        """Play to the end recording every round; returns ``(table, rounds)``.

        ``table`` (a DataFrame) has one row per round: ``t``, the samples so far,
        ``i_t``, ``c_t``, ``i*_t``, the members of ``F_t``, ``F_Pt`` and ``P_t``, the
        arms pulled and whether the round stopped. ``rounds`` maps each round of
        ``snapshots``, and the last one, to the :class:`Round` played.
        """
        import pandas as pd

        def members(mask):
            return tuple(int(i) for i in np.flatnonzero(mask))

        wanted, rows, kept = {int(t) for t in snapshots}, [], {}
        for played in self.rounds():
            state, decision, sets = played.state, played.decision, played.state.sets
            rows.append({"t": state.t, "samples": state.total_samples, "best_feasible_arm": sets.best_feasible_arm,
                         "competitor_arm": sets.competitor_arm,
                         "best_perfectly_feasible_arm": sets.best_perfectly_feasible_arm,
                         "feasible_set": members(sets.feasible_set),
                         "perfectly_feasible_set": members(sets.perfectly_feasible_set),
                         "potential_set": members(sets.potential_set),
                         "pulled_arms": () if decision.stops else members(decision.pulls.any(axis=1)),
                         "pulls": 0 if decision.stops else int(decision.pulls.sum()), "stops": decision.stops})
            if state.t in wanted or self.finished:
                kept[state.t] = played
        return pd.DataFrame(rows), kept

    def _sample(self, pulls: np.ndarray) -> None:
        rows, columns = np.nonzero(pulls)
        for i, j in zip(rows.tolist(), columns.tolist()):
            seen = self.observations[i][j]
            seen.append(self.stream.sample(i, j, len(seen)))
            self._sums[i][j] += seen[-1]
        self.counts += pulls
        self.total_samples += len(rows)
        self.rounds_played += 1

    def _finish(self, answer: int, stopped: bool) -> None:
        self.result = RunResult(int(answer), self.total_samples, self.rounds_played, self.counts.copy(), stopped,
                                self.policy.name)
