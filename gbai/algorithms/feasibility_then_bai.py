"""Feasibility first, then best-arm identification: the paper's baseline 2 (Section VI, reading note 7).

Phase 1 samples every attribute of each arm whose feasibility is unresolved. An
arm is resolved infeasible once some ``U_ij < mu_TH`` and feasible once all
``L_ij >= mu_TH``; a resolution is final. When every arm is resolved, the run
declares "infeasible" if no arm is feasible; otherwise phase 2 starts in the same
round: Action Elimination on the feasible arms (keeping all samples and the round
counter) samples every attribute of the active arms, eliminates ``i`` when
``U_i < max_k L_k`` over the active arms, and stops at one active arm.

The memory holds the status of each arm (:data:`UNRESOLVED`, :data:`FEASIBLE`,
:data:`INFEASIBLE_ARM`, or :data:`ELIMINATED` for a feasible arm that phase 2
dropped) and, in its last entry, the phase (1 or 2).

As run (issue 9)
----------------
Feasibility then BAI as the authors ran it (issue 9; ``AUTHORS-CODE.md``, "Feasibility then BAI as run").

Options (first value = the text's reading, reading note 7, the default):

* ``radius`` (phase 1): ``text`` = the paper's radius; ``authors`` =
  ``sqrt(ln(N(M+1)t^3/(2 delta))/(4T))`` with ``t`` the samples so far + 1;
  ``shared`` = the authors' CSS-LUCB radius (``.../(2T)``).
* ``phase2_radius``: ``text`` = the paper's radius; ``authors`` = the authors'
  Action Elimination radius ``sqrt(2 ln(2N(pi^2/6)T^2/delta)/T)`` with
  ``T = min_j T_ij``; ``shared`` = the authors' CSS-LUCB radius.
* ``delta``: ``given`` uses the run's delta; ``authors`` fixes 0.1 in both phases.
* ``init``: ``1`` or ``20`` samples of every pair in round 1 (and, with
  ``restart=yes``, of every pair of each feasible arm when phase 2 starts).
* ``screening``: ``arms`` samples every attribute of each unresolved arm, an arm
  being resolved infeasible at some ``U_ij < mu_TH`` and feasible at all
  ``L_ij >= mu_TH``, until every arm is resolved; ``pairs`` samples every pair with
  ``L_ij < mu_TH <= U_ij`` in any arm (also arms already known infeasible) until no
  such pair is left, and the arms with all ``L_ij >= mu_TH`` go on. With no such
  arm the authors' code raises an error: the run ends with the status CRASHED
  (``arms`` declares the instance infeasible, as the text does).
* ``restart``: ``no`` keeps the samples and the round counter in phase 2; ``yes``
  starts phase 2 from new statistics: ``init`` fresh samples (the streams continue)
  of every pair of each feasible arm, round counter and sample count restarted.
  With a single feasible arm phase 2 outputs it at once, without samples.
* ``count``: ``samples`` reports the samples; ``authors`` reports
  ``(phase-1 samples + 1) + (phase-2 samples, the restart's initialisation counted as
  init x N instead of init x M x |F|) + 1``.

Phase 2 (both readings) eliminates ``i`` when ``U_i < max_k L_k`` over the active
arms, samples every attribute of the active arms once per round and stops at one
active arm. Preset ``as=published`` switches all seven to the authors'.
"""

from __future__ import annotations

import numpy as np

from numba import njit

from ..engine import Decision, RoundState
from ..model import CRASHED
from ..rewards import reward_exponents
from .base import Algorithm, canonical_spec
from .kernels import (
    check_initial_samples,
    AS_RUN_CONTINUE,
    CONTINUE,
    INFEASIBLE,
    RADIUS_AE_AUTHORS,
    RADIUS_FTB_AUTHORS,
    RADIUS_SHARED,
    RADIUS_TEXT,
    RESTART,
    ArmRulePolicy,
    arm_rule,
    arm_rule_runner,
    as_run_arm_mean,
    as_run_pair_means,
    as_run_radius,
    draw_pulls,
    with_as_run,
)

__all__ = ["ALGORITHM", "FeasibilityThenBAI", "feasibility_then_bai_rule"]

UNRESOLVED, FEASIBLE, INFEASIBLE_ARM, ELIMINATED = 0, 1, -1, 2


@arm_rule
def feasibility_then_bai_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    """One round of Feasibility then BAI; ``memory[:N]`` are the statuses, ``memory[N]`` the phase."""
    n = chosen.size
    if memory[n] == 1:
        n_unresolved = 0
        for i in range(n):
            if memory[i] == UNRESOLVED:
                if not feasible[i]:
                    memory[i] = INFEASIBLE_ARM
                elif perfect[i]:
                    memory[i] = FEASIBLE
            chosen[i] = memory[i] == UNRESOLVED
            if chosen[i]:
                n_unresolved += 1
        if n_unresolved > 0:
            return CONTINUE
        memory[n] = 2
        n_feasible = 0
        for i in range(n):
            if memory[i] == FEASIBLE:
                n_feasible += 1
        if n_feasible == 0:
            return INFEASIBLE
    best_lower = -np.inf
    for i in range(n):
        if memory[i] == FEASIBLE and lower[i] > best_lower:
            best_lower = lower[i]
    n_active = 0
    last = -1
    for i in range(n):
        if memory[i] == FEASIBLE and upper[i] < best_lower:
            memory[i] = ELIMINATED
        chosen[i] = memory[i] == FEASIBLE
        if chosen[i]:
            n_active += 1
            last = i
    if n_active == 1:
        return last
    return CONTINUE


def _phase_one(n_arms: int) -> np.ndarray:
    memory = np.zeros(n_arms + 1, dtype=np.int64)
    memory[n_arms] = 1
    return memory


class FeasibilityThenBAI(ArmRulePolicy):
    """Feasibility then BAI as a step-engine policy (the rule is in the module docstring)."""

    name = "feasibility-then-bai"
    rule = feasibility_then_bai_rule
    memory_for = _phase_one



# ====================================================================== as run
FTB_OPTIONS = {
    "radius": ("text", "authors", "shared"),
    "phase2_radius": ("text", "authors", "shared"),
    "delta": ("given", "authors"),
    "init": ("1", "20"),
    "screening": ("arms", "pairs"),
    "restart": ("no", "yes"),
    "count": ("samples", "authors"),
}
FTB_PRESETS = {
    "text": {},
    "published": {"radius": "authors", "phase2_radius": "authors", "delta": "authors", "init": "20",
                  "screening": "pairs", "restart": "yes", "count": "authors"},
}
#: The delta the authors' Feasibility then BAI used in both phases, whatever was configured.
FTB_AUTHORS_DELTA = 0.1
_PHASE1_CODES = {"text": RADIUS_TEXT, "authors": RADIUS_FTB_AUTHORS, "shared": RADIUS_SHARED}
_PHASE2_CODES = {"text": RADIUS_TEXT, "authors": RADIUS_AE_AUTHORS, "shared": RADIUS_SHARED}

#: Phases stored in ``phase[0]``.
SCREENING, BEST_ARM = 0, 1


@njit(cache=True)
def ftb_as_run_decide(means, counts, t_round, samples, threshold, delta, radius1, radius2, pair_screening,
                      restart, init, phase, status, active, pulls):
    """One round of Feasibility then BAI under the given switches.

    ``phase[0]`` is SCREENING or BEST_ARM, ``status`` the phase-1 resolution of each
    arm (0 open, 1 feasible, -1 infeasible), ``active`` the phase-2 arms. Returns an
    arm, INFEASIBLE or CRASHED when the run ends; RESTART when phase 2 starts from
    new statistics (the caller resets them, then draws ``pulls``); else fills
    ``pulls`` and returns AS_RUN_CONTINUE. In phase 2 after a restart the caller passes the
    restarted round index and sample count.
    """
    n, m = means.shape
    pulls[:, :] = 0
    if phase[0] == SCREENING:
        open_pairs = 0
        for i in range(n):
            if not pair_screening and status[i] != 0:
                continue
            possible = True
            certain = True
            for j in range(m):
                r = as_run_radius(radius1, counts[i, j], n, m, delta, t_round, samples)
                if means[i, j] + r < threshold:
                    possible = False
                if means[i, j] - r < threshold:
                    certain = False
                    if pair_screening and means[i, j] + r >= threshold:
                        pulls[i, j] = 1
                        open_pairs += 1
            if pair_screening:
                status[i] = 1 if certain else -1
            elif not possible:
                status[i] = -1
            elif certain:
                status[i] = 1
            else:
                pulls[i, :] = 1
                open_pairs += 1
        if open_pairs > 0:
            return AS_RUN_CONTINUE
        phase[0] = BEST_ARM
        n_feasible = 0
        last = -1
        for i in range(n):
            active[i] = status[i] == 1
            if active[i]:
                n_feasible += 1
                last = i
        if n_feasible == 0:
            return CRASHED if pair_screening else INFEASIBLE
        if restart:
            if n_feasible == 1:
                return last
            for i in range(n):
                if active[i]:
                    pulls[i, :] = init
            return RESTART
    best_lower = -np.inf
    lower = np.empty(n)
    upper = np.empty(n)
    for i in range(n):
        if active[i]:
            fewest = counts[i, 0]
            for j in range(1, m):
                fewest = min(fewest, counts[i, j])
            a = as_run_radius(radius2, fewest, n, m, delta, t_round, samples)
            mu = as_run_arm_mean(means, i)
            lower[i] = mu - a
            upper[i] = mu + a
            if lower[i] > best_lower:
                best_lower = lower[i]
    n_active = 0
    last = -1
    for i in range(n):
        if active[i] and upper[i] < best_lower:
            active[i] = False
        if active[i]:
            n_active += 1
            last = i
    if n_active == 1:
        return last
    for i in range(n):
        if active[i]:
            pulls[i, :] = 1
    return AS_RUN_CONTINUE


def _switches(options: dict, delta: float) -> tuple:
    return (
        FTB_AUTHORS_DELTA if options["delta"] == "authors" else float(delta),
        _PHASE1_CODES[options["radius"]],
        _PHASE2_CODES[options["phase2_radius"]],
        options["screening"] == "pairs",
        options["restart"] == "yes",
        np.int64(options["init"]),
    )


@njit(cache=True)
def authors_count(samples, phase_one_samples, restarted, init, n_arms, n_feasible, n_attributes):
    """The count the authors' Feasibility then BAI reported (see the module docstring)."""
    phase_two = samples - phase_one_samples
    if restarted:
        phase_two += init * n_arms - init * n_attributes * n_feasible
    return (phase_one_samples + 1) + phase_two + 1


@njit(cache=True)
def ftb_as_run_kernel(means, threshold, keys, exponents, model, max_samples, delta, radius1, radius2,
                      pair_screening, restart, init, authors_counting):
    """Feasibility then BAI with the as-run switches (``(answer, samples, rounds, counts, stopped)``)."""
    n, m = means.shape
    drawn = np.zeros((n, m), dtype=np.int64)
    sums = np.zeros((n, m))
    counts = np.zeros((n, m), dtype=np.int64)
    pulls = np.full((n, m), init, dtype=np.int64)
    samples = draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
    phase = np.zeros(1, dtype=np.int64)
    status = np.zeros(n, dtype=np.int8)
    active = np.zeros(n, dtype=np.bool_)
    rounds = 1
    t = 2
    phase_one = -1  # samples of phase 1, known once phase 2 starts
    restart_t = 0  # round of the restart (0: none)
    restart_samples = 0
    n_feasible = 0
    while True:
        if restart_t > 0:
            answer = ftb_as_run_decide(as_run_pair_means(sums, counts), counts, t - restart_t + 1, samples - restart_samples,
                                       threshold, delta, radius1, radius2, pair_screening, restart, init, phase,
                                       status, active, pulls)
        else:
            answer = ftb_as_run_decide(as_run_pair_means(sums, counts), counts, t, samples, threshold, delta, radius1,
                                       radius2, pair_screening, restart, init, phase, status, active, pulls)
        if phase[0] == BEST_ARM and phase_one < 0:  # phase 1 ended in this decision
            phase_one = samples
        if answer != AS_RUN_CONTINUE and answer != RESTART:
            reported = samples
            if authors_counting:
                reported = authors_count(samples, phase_one, restart_t > 0, init, n, n_feasible, m)
            return answer, reported, rounds, drawn, answer != CRASHED
        n_new = pulls.sum()
        if samples + n_new > max_samples:
            return -2, samples, rounds, drawn, False
        if answer == RESTART:
            n_feasible = 0
            for i in range(n):
                if active[i]:
                    n_feasible += 1
            sums[:, :] = 0.0
            counts[:, :] = 0
            restart_t = t
            restart_samples = samples
        samples += draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
        rounds += 1
        t += 1


def run_ftb_as_run(instance, delta, keys, model, max_samples, options):
    exponents = reward_exponents(instance.means)
    init = int(options["init"])
    check_initial_samples("feasibility-then-bai", init, instance.means.size, max_samples)
    answer, samples, rounds, counts, stopped = ftb_as_run_kernel(
        instance.means, float(instance.threshold), keys, exponents, int(model), np.int64(max_samples),
        *_switches(options, delta), options["count"] == "authors",
    )
    return int(answer), int(samples), int(rounds), counts, bool(stopped)


class FeasibilityThenBAIAsRun:
    """Feasibility then BAI with the as-run switches, as a step-engine policy.

    With ``restart=yes`` it keeps phase 2's statistics itself, from the rewards the
    engine records after the restart, summed in the order they were drawn (as the
    kernel does), so that both engines see bit-identical means.
    """

    def __init__(self, **options: str):
        self.options = options
        self.name = canonical_spec("feasibility-then-bai", options, FTB_OPTIONS)

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.initial_samples = int(self.options["init"])
        self.phase = np.zeros(1, dtype=np.int64)
        self.status = np.zeros(n_arms, dtype=np.int8)
        self.active = np.zeros(n_arms, dtype=bool)
        self.phase_one = -1
        self.restart: tuple[int, int, np.ndarray] | None = None  # (round, samples, counts at the restart)
        self.n_feasible = 0

    def _statistics(self, state: RoundState) -> tuple[np.ndarray, np.ndarray, int, int]:
        if self.restart is None:
            return state.means, state.counts, state.t, state.total_samples
        t0, samples0, start = self.restart
        for i in range(self.seen.shape[0]):
            for j in range(self.seen.shape[1]):
                rewards = state.observations[i][j]
                while self.seen[i, j] < state.counts[i, j]:  # each reward once, in draw order
                    self.sums[i, j] += rewards[self.seen[i, j]]
                    self.seen[i, j] += 1
        counts = state.counts - start
        return as_run_pair_means(self.sums, counts), counts, state.t - t0 + 1, state.total_samples - samples0

    def decide(self, state: RoundState) -> Decision:
        delta, radius1, radius2, pair_screening, restart, init = _switches(self.options, state.delta)
        means, counts, t, samples = self._statistics(state)
        pulls = np.zeros(state.counts.shape, dtype=np.int64)
        answer = ftb_as_run_decide(means, counts, t, samples, state.threshold, delta, radius1, radius2,
                                   pair_screening, restart, init, self.phase, self.status, self.active, pulls)
        if self.phase[0] == BEST_ARM and self.phase_one < 0:  # phase 1 ended in this decision
            self.phase_one = state.total_samples
        if answer == RESTART:
            self.n_feasible = int(self.active.sum())
            self.restart = (state.t, state.total_samples, state.counts.copy())
            self.seen = state.counts.copy()
            self.sums = np.zeros(state.counts.shape)
            return Decision.sample(pulls)
        if answer == AS_RUN_CONTINUE:
            return Decision.sample(pulls)
        reported = state.total_samples
        if self.options["count"] == "authors":
            n, m = state.counts.shape
            reported = int(authors_count(state.total_samples, self.phase_one, self.restart is not None, init, n,
                                         self.n_feasible, m))
        return Decision.stop(answer, reported_samples=reported)


_make_policy, _run_fast = with_as_run(
    FeasibilityThenBAI, arm_rule_runner(feasibility_then_bai_rule, _phase_one), FeasibilityThenBAIAsRun, run_ftb_as_run, FTB_OPTIONS
)

ALGORITHM = Algorithm(
    name="feasibility-then-bai",
    title="Feasibility then BAI",
    reference="Section VI, baseline 2 (reading note 7)",
    make_policy=_make_policy,
    run_fast=_run_fast,
    options=FTB_OPTIONS,
    presets=FTB_PRESETS,
    modules=("algorithms/feasibility_then_bai.py",),
)
