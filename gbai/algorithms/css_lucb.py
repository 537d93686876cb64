"""CSS-LUCB: Confidence Set Sampling LUCB, Algorithm 1 of the paper (Section IV).

As reading notes 3-5 resolve it. At round ``t``, with the bounds of eqs. (3)-(4)
(radius ``alpha(t, T) = sqrt(ln(4NMt^4/delta) / (2T))``) and the sets of
:func:`gbai.confidence.confidence_sets`:

* ``F_t``: arms whose every pair has ``U_ij >= mu_TH``; ``F_Pt``: arms whose every
  pair has ``L_ij >= mu_TH``; ``i*_t``: the empirically best arm of ``F_Pt``;
* ``P_t``: the arms other than ``i*_t`` with ``U_i >= L_{i*_t}`` (every arm when
  ``F_Pt`` is empty);
* stop when ``F_t`` and ``P_t`` are disjoint; output ``i_t`` (the best arm of
  ``F_t``, then equal to ``i*_t``) when ``F_t`` is non-empty, else "infeasible";
* otherwise, with ``|F_t| = 1`` pull the pairs of ``i_t`` in ``F_t^A``; with more
  feasible-looking arms pull the pairs of ``i_t`` and of the competitor ``c_t``
  (the largest ``U_i`` in ``F_t`` other than ``i_t``) that lie in ``F_t^A``.

:func:`css_lucb_sets` is that rule on per-arm numbers; CSS-LUCB+
(:mod:`gbai.algorithms.css_lucb_plus`) reuses it with its own bounds.

As run (issue 9)
----------------
CSS-LUCB as the authors ran it (issue 9; ``AUTHORS-CODE.md``, "CSS-LUCB as run").

Options (first value = the text's reading, the default):

* ``radius``: ``text`` = ``sqrt(ln(4NMt^4/delta)/(2T))`` with ``t`` the round;
  ``authors`` = ``sqrt(ln(N(M+1)t^3/(2 delta))/(2T))`` with ``t`` the samples so far + 1.
* ``init``: ``1`` or ``20`` samples of every pair in round 1.
* ``ties``: ``first`` takes the first maximum everywhere; ``authors`` takes the last
  maximum for ``i*_t`` and ``i_t`` (``c_t`` keeps the first).
* ``count``: ``samples`` reports the samples; ``authors`` reports samples + 1.
* ``arm_count`` (Figure 2's older code): ``min`` gives the arm radius
  ``T_i = min_j T_ij``; ``sum`` uses ``T_i = sum_j T_ij``.
* ``sampling`` (Figure 2's older code): ``feasible`` pulls the pairs of ``i_t`` and
  ``c_t`` in ``F_t^A`` (all of them, reading note 5); ``undecided`` pulls only their
  pairs with ``L_ij < mu_TH <= U_ij``, and every attribute of both when there is none.

Presets: ``as=fig1`` = radius, init, ties and count as run; ``as=fig2`` adds
``arm_count=sum`` and ``sampling=undecided``; ``as=text`` = all defaults.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine import Decision, RoundState
from ..rewards import reward_exponents
from .base import Algorithm, canonical_spec
from .kernels import (
    check_initial_samples,
    AS_RUN_CONTINUE,
    CONTINUE,
    INFEASIBLE,
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

__all__ = ["ALGORITHM", "CSSLUCB", "css_lucb_rule", "css_lucb_sets", "sets_overlap"]


@njit(cache=True)
def sets_overlap(feasible, lower, upper, best_perfect, n_feasible):
    """Do F_t and P_t overlap (the stopping test of Algorithm 1)?

    P_t is the best arm of F_Pt, or every arm when F_Pt is empty (``best_perfect``
    -1); they overlap when another arm of F_t has ``U_i >= L`` of that arm.
    """
    if best_perfect < 0:
        return n_feasible > 0
    for i in range(feasible.size):
        if feasible[i] and i != best_perfect and upper[i] >= lower[best_perfect]:
            return True
    return False


@njit(cache=True)
def css_lucb_sets(arm_mean, lower, upper, feasible, perfect):
    """CSS-LUCB's stopping rule and choice of arms from per-arm bounds and set memberships.

    Returns ``(answer, leader, competitor)``: ``answer`` is the output when ``F_t``
    and ``P_t`` are disjoint (an arm, or -1 for infeasible) and :data:`CONTINUE`
    otherwise; ``leader`` is ``i_t`` and ``competitor`` is ``c_t`` (-1 when ``F_t``
    has no other arm).
    """
    n = arm_mean.size
    best_perfect = -1
    best_feasible = -1
    n_feasible = 0
    for i in range(n):
        if feasible[i]:
            n_feasible += 1
            if best_feasible < 0 or arm_mean[i] > arm_mean[best_feasible]:
                best_feasible = i
            if perfect[i] and (best_perfect < 0 or arm_mean[i] > arm_mean[best_perfect]):
                best_perfect = i
    if not sets_overlap(feasible, lower, upper, best_perfect, n_feasible):
        return (best_feasible if n_feasible > 0 else INFEASIBLE), best_feasible, -1
    competitor = -1
    for i in range(n):
        if feasible[i] and i != best_feasible and (competitor < 0 or upper[i] > upper[competitor]):
            competitor = i
    return CONTINUE, best_feasible, competitor


@arm_rule
def css_lucb_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    """CSS-LUCB as an arm rule: stop, or choose ``i_t`` and ``c_t`` (it keeps no memory)."""
    answer, leader, competitor = css_lucb_sets(arm_mean, lower, upper, feasible, perfect)
    if answer != CONTINUE:
        return answer
    for i in range(chosen.size):
        chosen[i] = i == leader or i == competitor
    return CONTINUE


def _no_memory(n_arms: int) -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


class CSSLUCB(ArmRulePolicy):
    """CSS-LUCB as a step-engine policy (the rule is in the module docstring).

    It pulls the pairs of the chosen arms that lie in ``F_t^A``: all of them when
    every attribute of an arm has the same count, as in CSS-LUCB's own runs.
    """

    name = "css-lucb"
    rule = css_lucb_rule
    memory_for = _no_memory

    def pulls(self, state: RoundState, chosen: np.ndarray) -> np.ndarray:
        return chosen[:, None] & state.sets.feasible_attribute_set



# ====================================================================== as run
#: CSS-LUCB's options; the first value of each is the paper text's reading.
CSS_OPTIONS = {
    "radius": ("text", "authors"),
    "init": ("1", "20"),
    "ties": ("first", "authors"),
    "count": ("samples", "authors"),
    "arm_count": ("min", "sum"),
    "sampling": ("feasible", "undecided"),
}
_FIG1 = {"radius": "authors", "init": "20", "ties": "authors", "count": "authors"}
#: Named option sets: the settings behind each published figure.
CSS_PRESETS = {
    "text": {},
    "fig1": _FIG1,
    "fig2": {**_FIG1, "arm_count": "sum", "sampling": "undecided"},
}


@njit(cache=True)
def css_as_run_decide(means, counts, t_round, samples, threshold, delta, radius_mode, arm_sum, last_ties,
                      undecided, pulls):
    """One round of CSS-LUCB under the given switches.

    Returns the answer (arm or INFEASIBLE) when ``F_t`` and ``P_t`` are disjoint;
    otherwise fills ``pulls`` (per-pair sample counts) and returns AS_RUN_CONTINUE.
    """
    n, m = means.shape
    feasible = np.zeros(n, dtype=np.bool_)
    lower = np.empty(n)
    upper = np.empty(n)
    mean = np.empty(n)
    pair_radius = np.empty((n, m))
    best_perfect = -1
    best_feasible = -1
    n_feasible = 0
    for i in range(n):
        possible = True
        certain = True
        fewest = counts[i, 0]
        total = 0
        for j in range(m):
            r = as_run_radius(radius_mode, counts[i, j], n, m, delta, t_round, samples)
            pair_radius[i, j] = r
            if means[i, j] + r < threshold:
                possible = False
            if means[i, j] - r < threshold:
                certain = False
            fewest = min(fewest, counts[i, j])
            total += counts[i, j]
        a = as_run_radius(radius_mode, total if arm_sum else fewest, n, m, delta, t_round, samples)
        mean[i] = as_run_arm_mean(means, i)
        lower[i] = mean[i] - a
        upper[i] = mean[i] + a
        feasible[i] = possible
        if possible:
            n_feasible += 1
            if best_feasible < 0 or mean[i] > mean[best_feasible] or (last_ties and mean[i] == mean[best_feasible]):
                best_feasible = i
            if certain:
                if best_perfect < 0 or mean[i] > mean[best_perfect] or (last_ties and mean[i] == mean[best_perfect]):
                    best_perfect = i
    if not sets_overlap(feasible, lower, upper, best_perfect, n_feasible):
        return best_feasible if n_feasible > 0 else INFEASIBLE
    competitor = -1
    if n_feasible > 1:
        for i in range(n):
            if feasible[i] and i != best_feasible and (competitor < 0 or upper[i] > upper[competitor]):
                competitor = i
    pulls[:, :] = 0
    chosen = 0
    for arm in (best_feasible, competitor):
        if arm < 0:
            continue
        for j in range(m):
            if not undecided or means[arm, j] - pair_radius[arm, j] < threshold:
                # An arm of F_t has every pair in F_t^A, so "undecided" is L_ij < mu_TH.
                pulls[arm, j] = 1
                chosen += 1
    if chosen == 0:  # sampling=undecided with nothing undecided: every attribute of both
        for arm in (best_feasible, competitor):
            if arm >= 0:
                pulls[arm, :] = 1
    return AS_RUN_CONTINUE


def _switches(options: dict) -> tuple:
    return (
        RADIUS_SHARED if options["radius"] == "authors" else RADIUS_TEXT,
        options["arm_count"] == "sum",
        options["ties"] == "authors",
        options["sampling"] == "undecided",
    )


@njit(cache=True)
def css_lucb_as_run_kernel(means, threshold, delta, keys, exponents, model, max_samples, init, radius_mode,
                           arm_sum, last_ties, undecided, plus_one):
    """CSS-LUCB with the as-run switches, run to completion (``(answer, samples, rounds, counts, stopped)``)."""
    n, m = means.shape
    drawn = np.zeros((n, m), dtype=np.int64)
    sums = np.zeros((n, m))
    counts = np.zeros((n, m), dtype=np.int64)
    pulls = np.full((n, m), init, dtype=np.int64)
    samples = draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
    rounds = 1
    t = 2
    while True:
        answer = css_as_run_decide(as_run_pair_means(sums, counts), counts, t, samples, threshold, delta, radius_mode,
                                   arm_sum, last_ties, undecided, pulls)
        if answer != AS_RUN_CONTINUE:
            return answer, samples + plus_one, rounds, drawn, True
        n_new = pulls.sum()
        if samples + n_new > max_samples:
            return -2, samples, rounds, drawn, False
        samples += draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
        rounds += 1
        t += 1


def run_css_lucb_as_run(instance, delta, keys, model, max_samples, options):
    exponents = reward_exponents(instance.means)
    init = int(options["init"])
    check_initial_samples("css-lucb", init, instance.means.size, max_samples)
    answer, samples, rounds, counts, stopped = css_lucb_as_run_kernel(
        instance.means, float(instance.threshold), float(delta), keys, exponents, int(model), np.int64(max_samples),
        np.int64(init), *_switches(options), np.int64(options["count"] == "authors"),
    )
    return int(answer), int(samples), int(rounds), counts, bool(stopped)


class CSSLUCBAsRun:
    """CSS-LUCB with the as-run switches, as a step-engine policy (same decision function)."""

    def __init__(self, **options: str):
        self.options = options
        self.switches = _switches(options)
        self.plus_one = int(options["count"] == "authors")
        self.name = canonical_spec("css-lucb", options, CSS_OPTIONS)

    def reset(self, n_arms: int, n_attributes: int) -> None:
        self.initial_samples = int(self.options["init"])

    def decide(self, state: RoundState) -> Decision:
        pulls = np.zeros(state.counts.shape, dtype=np.int64)
        answer = css_as_run_decide(state.means, state.counts, state.t, state.total_samples, state.threshold,
                                   state.delta, *self.switches, pulls)
        if answer != AS_RUN_CONTINUE:
            return Decision.stop(answer, reported_samples=state.total_samples + self.plus_one)
        return Decision.sample(pulls)


_make_policy, _run_fast = with_as_run(
    CSSLUCB, arm_rule_runner(css_lucb_rule, _no_memory), CSSLUCBAsRun, run_css_lucb_as_run, CSS_OPTIONS
)

ALGORITHM = Algorithm(
    name="css-lucb",
    title="CSS-LUCB",
    reference="Algorithm 1, Section IV",
    make_policy=_make_policy,
    run_fast=_run_fast,
    options=CSS_OPTIONS,
    presets=CSS_PRESETS,
    modules=("algorithms/css_lucb.py",),
)
