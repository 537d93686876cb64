"""Action Elimination with attribute elimination: the paper's baseline 1 (Section VI, reading note 6).

Every round samples all attributes of every active arm. At round ``t``, with the
bounds of eqs. (3)-(4):

* an active arm with some ``U_ij < mu_TH`` (not in ``F_t``) is eliminated;
* with ``B`` the active arms that are perfectly feasible (all ``L_ij >= mu_TH``),
  if ``B`` is non-empty every active arm with ``U_i < max_{k in B} L_k`` is
  eliminated;
* the run stops with "infeasible" when no arm is active, and with the last arm
  when exactly one arm is active and it is perfectly feasible.

The memory holds one flag per arm: 1 while the arm is active.

As run (issue 9)
----------------
Action Elimination as the authors ran it (issue 9; ``AUTHORS-CODE.md``, "Action Elimination as run").

Options (first value = the text's reading, reading note 6, the default):

* ``radius``: ``text`` = the paper's radius; ``authors`` =
  ``sqrt(2 ln(2N(pi^2/6)T^2/delta)/T)`` with ``T`` the pair's own count; ``shared`` =
  the authors' CSS-LUCB radius (the counterfactual in which all three algorithms
  share one radius).
* ``delta``: ``given`` uses the run's delta; ``authors`` uses 0.2 (the default
  argument of their function; the configured 0.1 never reached it).
* ``batch``: ``1`` or ``10`` samples of every pair of each active arm per round
  (round 1 included).
* ``feasibility``: ``text`` eliminates an arm with some ``U_ij < mu_TH``;
  ``authors`` keeps an arm only if ``min_j U_ij > mu_TH``.
* ``elimination``: ``text`` eliminates ``i`` when ``U_i < max L_k`` over the active
  perfectly feasible arms; ``authors`` takes as reference the active arm with the
  largest single-attribute upper bound (feasible or not, first on ties) and
  eliminates ``i`` when ``sum_j L_ref,j >= sum_j U_ij``.
* ``stopping``: ``text`` stops at no active arm (infeasible) or one active,
  perfectly feasible arm; ``authors`` stops as soon as at most one arm is active
  and outputs it, and where no arm is left (their code raises an error there) the
  run ends with the status CRASHED.

Within a round the attribute rule acts first, then the mean rule on the arms left,
as in the text. Preset ``as=published`` switches all six to the authors'.
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
    RADIUS_SHARED,
    RADIUS_TEXT,
    ArmRulePolicy,
    arm_rule,
    arm_rule_runner,
    as_run_arm_mean,
    as_run_pair_means,
    as_run_radius,
    draw_pulls,
    with_as_run,
)

__all__ = ["ALGORITHM", "ActionElimination", "action_elimination_rule"]


@arm_rule
def action_elimination_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    """One round of Action Elimination; ``memory[i]`` is 1 while arm ``i`` is active."""
    n = memory.size
    best_lower = -np.inf
    any_perfect = False
    for i in range(n):
        if memory[i] and not feasible[i]:
            memory[i] = 0
        if memory[i] and perfect[i] and (not any_perfect or lower[i] > best_lower):
            best_lower = lower[i]
            any_perfect = True
    n_active = 0
    last = -1
    for i in range(n):
        if memory[i] and any_perfect and upper[i] < best_lower:
            memory[i] = 0
        chosen[i] = memory[i] != 0
        if chosen[i]:
            n_active += 1
            last = i
    if n_active == 0:
        return INFEASIBLE
    if n_active == 1 and perfect[last]:
        return last
    return CONTINUE


def _all_active(n_arms: int) -> np.ndarray:
    return np.ones(n_arms, dtype=np.int64)


class ActionElimination(ArmRulePolicy):
    """Action Elimination as a step-engine policy (the rule is in the module docstring)."""

    name = "ae"
    rule = action_elimination_rule
    memory_for = _all_active

    @property
    def active(self) -> np.ndarray:
        """The arms still active."""
        return self.memory != 0



# ====================================================================== as run
AE_OPTIONS = {
    "radius": ("text", "authors", "shared"),
    "delta": ("given", "authors"),
    "batch": ("1", "10"),
    "feasibility": ("text", "authors"),
    "elimination": ("text", "authors"),
    "stopping": ("text", "authors"),
}
AE_PRESETS = {
    "text": {},
    "published": {"radius": "authors", "delta": "authors", "batch": "10", "feasibility": "authors",
                  "elimination": "authors", "stopping": "authors"},
}
#: The delta of the authors' Action Elimination (a default argument).
AE_AUTHORS_DELTA = 0.2
_RADIUS_CODES = {"text": RADIUS_TEXT, "authors": RADIUS_AE_AUTHORS, "shared": RADIUS_SHARED}


@njit(cache=True)
def ae_as_run_decide(means, counts, t_round, samples, threshold, delta, radius_mode, strict_feasibility,
                     reference_rule, authors_stopping, batch, active, pulls):
    """One round of Action Elimination under the given switches; updates ``active``.

    Returns an arm, INFEASIBLE or CRASHED when the run ends, else fills ``pulls``
    and returns AS_RUN_CONTINUE.
    """
    n, m = means.shape
    perfect = np.zeros(n, dtype=np.bool_)
    lower = np.empty(n)
    upper = np.empty(n)
    pair_lower = np.empty((n, m))
    pair_upper = np.empty((n, m))
    best_lower = -np.inf
    any_perfect = False
    for i in range(n):
        if not active[i]:
            continue
        fewest = counts[i, 0]
        alive = True
        certain = True
        for j in range(m):
            r = as_run_radius(radius_mode, counts[i, j], n, m, delta, t_round, samples)
            pair_lower[i, j] = means[i, j] - r
            pair_upper[i, j] = means[i, j] + r
            if strict_feasibility:
                if not pair_upper[i, j] > threshold:
                    alive = False
            elif pair_upper[i, j] < threshold:
                alive = False
            if pair_lower[i, j] < threshold:
                certain = False
            fewest = min(fewest, counts[i, j])
        if not alive:
            active[i] = False
            continue
        a = as_run_radius(radius_mode, fewest, n, m, delta, t_round, samples)
        mu = as_run_arm_mean(means, i)
        lower[i] = mu - a
        upper[i] = mu + a
        if certain:
            perfect[i] = True
            if not any_perfect or lower[i] > best_lower:
                best_lower = lower[i]
            any_perfect = True
    if reference_rule:
        reference = -1
        reference_value = -np.inf
        for i in range(n):
            if active[i]:
                top = pair_upper[i, 0]
                for j in range(1, m):
                    top = max(top, pair_upper[i, j])
                if reference < 0 or top > reference_value:
                    reference, reference_value = i, top
        if reference >= 0:
            floor = pair_lower[reference, 0]
            for j in range(1, m):
                floor += pair_lower[reference, j]
            for i in range(n):
                if active[i] and i != reference:
                    ceiling = pair_upper[i, 0]
                    for j in range(1, m):
                        ceiling += pair_upper[i, j]
                    if floor >= ceiling:
                        active[i] = False
    elif any_perfect:
        for i in range(n):
            if active[i] and upper[i] < best_lower:
                active[i] = False
    n_active = 0
    last = -1
    for i in range(n):
        if active[i]:
            n_active += 1
            last = i
    if n_active == 0:
        return CRASHED if authors_stopping else INFEASIBLE
    if n_active == 1 and (authors_stopping or perfect[last]):
        return last
    pulls[:, :] = 0
    for i in range(n):
        if active[i]:
            pulls[i, :] = batch
    return AS_RUN_CONTINUE


def _switches(options: dict, delta: float) -> tuple:
    return (
        AE_AUTHORS_DELTA if options["delta"] == "authors" else float(delta),
        _RADIUS_CODES[options["radius"]],
        options["feasibility"] == "authors",
        options["elimination"] == "authors",
        options["stopping"] == "authors",
        np.int64(options["batch"]),
    )


@njit(cache=True)
def ae_as_run_kernel(means, threshold, keys, exponents, model, max_samples, delta, radius_mode,
                     strict_feasibility, reference_rule, authors_stopping, batch):
    """Action Elimination with the as-run switches (``(answer, samples, rounds, counts, stopped)``)."""
    n, m = means.shape
    drawn = np.zeros((n, m), dtype=np.int64)
    sums = np.zeros((n, m))
    counts = np.zeros((n, m), dtype=np.int64)
    pulls = np.full((n, m), batch, dtype=np.int64)
    samples = draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
    active = np.ones(n, dtype=np.bool_)
    rounds = 1
    t = 2
    while True:
        answer = ae_as_run_decide(as_run_pair_means(sums, counts), counts, t, samples, threshold, delta, radius_mode,
                                  strict_feasibility, reference_rule, authors_stopping, batch, active, pulls)
        if answer != AS_RUN_CONTINUE:
            return answer, samples, rounds, drawn, answer != CRASHED
        n_new = pulls.sum()
        if samples + n_new > max_samples:
            return -2, samples, rounds, drawn, False
        samples += draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
        rounds += 1
        t += 1


def run_ae_as_run(instance, delta, keys, model, max_samples, options):
    exponents = reward_exponents(instance.means)
    batch = int(options["batch"])
    check_initial_samples("ae", batch, instance.means.size, max_samples)
    answer, samples, rounds, counts, stopped = ae_as_run_kernel(
        instance.means, float(instance.threshold), keys, exponents, int(model), np.int64(max_samples),
        *_switches(options, delta),
    )
    return int(answer), int(samples), int(rounds), counts, bool(stopped)


class ActionEliminationAsRun:
    """Action Elimination with the as-run switches, as a step-engine policy."""

    def __init__(self, **options: str):
        self.options = options
        self.name = canonical_spec("ae", options, AE_OPTIONS)

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.active = np.ones(n_arms, dtype=bool)
        self.initial_samples = int(self.options["batch"])

    def decide(self, state: RoundState) -> Decision:
        pulls = np.zeros(state.counts.shape, dtype=np.int64)
        delta, *switches = _switches(self.options, state.delta)
        answer = ae_as_run_decide(state.means, state.counts, state.t, state.total_samples, state.threshold, delta,
                                  *switches, self.active, pulls)
        if answer != AS_RUN_CONTINUE:
            return Decision.stop(answer)
        return Decision.sample(pulls)


_make_policy, _run_fast = with_as_run(
    ActionElimination, arm_rule_runner(action_elimination_rule, _all_active), ActionEliminationAsRun, run_ae_as_run, AE_OPTIONS
)

ALGORITHM = Algorithm(
    name="ae",
    title="Action Elimination with attribute elimination",
    reference="Section VI, baseline 1 (reading note 6)",
    make_policy=_make_policy,
    run_fast=_run_fast,
    options=AE_OPTIONS,
    presets=AE_PRESETS,
    modules=("algorithms/action_elimination.py",),
)
