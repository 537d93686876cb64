"""The authors' as-run variants of the paper's three algorithms, on one shared compiled loop.

The published figures were drawn by the authors' research notebooks, whose rules
differ from the paper's text (the book's page "Reading decisions and as-run facts",
facts A5-A13). Each difference is an option of the algorithm it belongs to, the
text's reading first: :data:`OPTIONS`, and the named sets :data:`PRESETS`
(``as=fig1``, ``as=fig2``, ``as=published``). A variant runs in the compiled engine
only; with every option at its first value it is the text's algorithm, run for run
(tested). Runs that reach a state where the authors' code raises an error end with
:data:`CRASHED`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..fast.levels import first_round, kernel_inputs, one_level, run_result
from ..fast.paper import paper_log_constant, paper_radius
from ..fast.rewards import draw
from ..paper.model import CONTINUE, CRASHED, INFEASIBLE, NO_ANSWER, RESTART

__all__ = ["OPTIONS", "PRESETS", "run_variant"]

#: Options of each algorithm (first value: the paper's text). CSS-LUCB: radius (fact A5), init,
#: ties, count (A6), arm_count, sampling (A7); Action Elimination: radius, delta, batch (A8),
#: feasibility, elimination (A9), stopping (A10); Feasibility then BAI: radius, delta, init,
#: screening (A11), phase2_radius, restart (A12), count (A13). ``shared``: the authors' CSS-LUCB radius.
OPTIONS = {
    "css-lucb": {"radius": ("text", "authors"), "init": ("1", "20"), "ties": ("first", "authors"),
                 "count": ("samples", "authors"), "arm_count": ("min", "sum"),
                 "sampling": ("feasible", "undecided")},
    "ae": {"radius": ("text", "authors", "shared"), "delta": ("given", "authors"), "batch": ("1", "10"),
           "feasibility": ("text", "authors"), "elimination": ("text", "authors"), "stopping": ("text", "authors")},
    "feasibility-then-bai": {"radius": ("text", "authors", "shared"), "phase2_radius": ("text", "authors", "shared"),
                             "delta": ("given", "authors"), "init": ("1", "20"), "screening": ("arms", "pairs"),
                             "restart": ("no", "yes"), "count": ("samples", "authors")},
}
_FIG1 = {"radius": "authors", "init": "20", "ties": "authors", "count": "authors"}
#: Named option sets: the settings behind each published figure.
PRESETS = {
    "css-lucb": {"text": {}, "fig1": _FIG1, "fig2": {**_FIG1, "arm_count": "sum", "sampling": "undecided"}},
    "ae": {"text": {}, "published": {"radius": "authors", "delta": "authors", "batch": "10",
                                     "feasibility": "authors", "elimination": "authors", "stopping": "authors"}},
    "feasibility-then-bai": {"text": {}, "published": {
        "radius": "authors", "phase2_radius": "authors", "delta": "authors", "init": "20", "screening": "pairs",
        "restart": "yes", "count": "authors"}},
}
#: The delta the authors' Action Elimination used (a default argument) and Feasibility then BAI fixed.
AUTHORS_DELTA = {"ae": 0.2, "feasibility-then-bai": 0.1}

#: Radius formulas; ``t`` is the round for the text, the samples so far + 1 for the authors':
#: the paper's ``sqrt(ln(4NMt^4/delta)/(2T))``; the authors' CSS-LUCB radius
#: ``sqrt(ln(N(M+1)t^3/(2 delta))/(2T))`` (also the one all share in the counterfactual);
#: their Action Elimination radius ``sqrt(2 ln(2N(pi^2/6)T^2/delta)/T)``; their phase-1
#: Feasibility-then-BAI radius ``sqrt(ln(N(M+1)t^3/(2 delta))/(4T))``.
RADIUS_TEXT, RADIUS_SHARED, RADIUS_AE_AUTHORS, RADIUS_FTB_AUTHORS = 0, 1, 2, 3
SCREENING, BEST_ARM = 0, 1
_CSS, _AE, _FTB = 0, 1, 2


@njit(cache=True)
def radius(mode, count, n_arms, n_attributes, delta, t_round, samples):
    """The radius for ``count`` samples under formula ``mode`` (see the ``RADIUS_*`` codes).

    ``t_round`` is the round index (text radius), ``samples`` the number of samples
    the algorithm has counted so far (the authors' ``t`` is ``samples + 1``). Logs of
    products are evaluated as sums of logs.
    """
    if mode == RADIUS_TEXT:
        return paper_radius(paper_log_constant(n_arms * n_attributes, delta), t_round, count)
    if mode == RADIUS_AE_AUTHORS:
        value = math.log(2.0 * n_arms * (math.pi * math.pi / 6.0) / delta) + 2.0 * math.log(count)
        return math.sqrt(2.0 * value / count)
    value = math.log(n_arms * (n_attributes + 1) / (2.0 * delta)) + 3.0 * math.log(samples + 1.0)
    if mode == RADIUS_FTB_AUTHORS:
        return math.sqrt(value / (4.0 * count))
    return math.sqrt(value / (2.0 * count))


@njit(cache=True)
def draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts):
    """Draw ``pulls[i, j]`` rewards of every pair, continuing each pair's stream.

    ``drawn`` counts the rewards drawn so far (the stream index); ``sums``/``counts``
    are the statistics the algorithm currently uses (they differ from ``drawn`` after
    a restart). Returns the number of rewards drawn.
    """
    total = 0
    n_arms, n_attributes = pulls.shape
    for i in range(n_arms):
        for j in range(n_attributes):
            for _ in range(pulls[i, j]):
                sums[i, j] += draw(keys[i, j], drawn[i, j], means[i, j], exponents[i, j], model)
                drawn[i, j] += 1
                counts[i, j] += 1
                total += 1
    return total


@njit(cache=True)
def _arm_mean(means, i):
    """The plain average of arm ``i``'s attribute means, summed left to right."""
    total = means[i, 0]
    for j in range(1, means.shape[1]):
        total += means[i, j]
    return total / means.shape[1]


@njit(cache=True)
def css_lucb_decide(means, counts, t_round, samples, threshold, delta, radius_mode, arm_sum, last_ties,
                      undecided, pulls):
    """One round of CSS-LUCB under the given switches.

    Returns the answer (arm or INFEASIBLE) when ``F_t`` and ``P_t`` are disjoint;
    otherwise fills ``pulls`` (per-pair sample counts) and returns CONTINUE.
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
            r = radius(radius_mode, counts[i, j], n, m, delta, t_round, samples)
            pair_radius[i, j] = r
            if means[i, j] + r < threshold:
                possible = False
            if means[i, j] - r < threshold:
                certain = False
            fewest = min(fewest, counts[i, j])
            total += counts[i, j]
        a = radius(radius_mode, total if arm_sum else fewest, n, m, delta, t_round, samples)
        mean[i] = _arm_mean(means, i)
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
    overlap = n_feasible > 0 if best_perfect < 0 else False  # F_t and P_t share an arm
    for i in range(n):
        if best_perfect >= 0 and feasible[i] and i != best_perfect and upper[i] >= lower[best_perfect]:
            overlap = True
    if not overlap:
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
    return CONTINUE


@njit(cache=True)
def action_elimination_decide(means, counts, t_round, samples, threshold, delta, radius_mode, strict_feasibility,
                     reference_rule, authors_stopping, batch, active, pulls):
    """One round of Action Elimination under the given switches; updates ``active``.

    Returns an arm, INFEASIBLE or CRASHED when the run ends, else fills ``pulls``
    and returns CONTINUE.
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
            r = radius(radius_mode, counts[i, j], n, m, delta, t_round, samples)
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
        a = radius(radius_mode, fewest, n, m, delta, t_round, samples)
        mu = _arm_mean(means, i)
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
    return CONTINUE


@njit(cache=True)
def feasibility_then_bai_decide(means, counts, t_round, samples, threshold, delta, radius1, radius2, pair_screening,
                      restart, init, phase, status, active, pulls):
    """One round of Feasibility then BAI under the given switches.

    ``phase[0]`` is SCREENING or BEST_ARM, ``status`` the phase-1 resolution of each
    arm (0 open, 1 feasible, -1 infeasible), ``active`` the phase-2 arms. Returns an
    arm, INFEASIBLE or CRASHED when the run ends; RESTART when phase 2 starts from
    new statistics (the caller resets them, then draws ``pulls``); else fills
    ``pulls`` and returns CONTINUE. In phase 2 after a restart the caller passes the
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
                r = radius(radius1, counts[i, j], n, m, delta, t_round, samples)
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
            return CONTINUE
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
            a = radius(radius2, fewest, n, m, delta, t_round, samples)
            mu = _arm_mean(means, i)
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
    return CONTINUE


@njit(cache=True)
def authors_count(samples, phase_one_samples, restarted, init, n_arms, n_feasible, n_attributes):
    """The count the authors' Feasibility then BAI reported (see the module docstring)."""
    phase_two = samples - phase_one_samples
    if restarted:
        phase_two += init * n_arms - init * n_attributes * n_feasible
    return (phase_one_samples + 1) + phase_two + 1


#: Positions in the switches array of :func:`as_run_loop`.
_INIT, _PLUS_ONE, _AUTHORS_COUNT, _S0, _S1, _S2, _S3, _S4 = range(8)


@njit(cache=True)
def as_run_loop(algorithm, means, threshold, keys, exponents, model, max_samples, delta, switches):
    """Run one as-run variant to the end: ``(answer, samples reported, rounds, counts, stopped)``.

    Round 1 draws ``switches[_INIT]`` samples of every pair; then each round asks the
    algorithm's decision function for per-pair sample counts. After Feasibility then
    BAI's restart the statistics, round index and sample count start again (the
    streams continue).
    """
    n, m = means.shape
    sums, counts = first_round(keys, means, exponents, model, switches[_INIT])
    drawn = counts.copy()
    samples = switches[_INIT] * n * m
    pulls = np.full((n, m), switches[_INIT], dtype=np.int64)
    active = np.full(n, algorithm == _AE, dtype=np.bool_)
    phase = np.zeros(1, dtype=np.int64)
    status = np.zeros(n, dtype=np.int8)
    rounds, t = 1, 2
    phase_one, restart_t, restart_samples, n_feasible = -1, 0, 0, 0
    while True:
        t_now, samples_now = (t - restart_t + 1, samples - restart_samples) if restart_t > 0 else (t, samples)
        pair_means = sums / counts.astype(np.float64)
        if algorithm == _CSS:
            answer = css_lucb_decide(pair_means, counts, t_now, samples_now, threshold, delta, switches[_S0],
                                     switches[_S1], switches[_S2], switches[_S3], pulls)
        elif algorithm == _AE:
            answer = action_elimination_decide(pair_means, counts, t_now, samples_now, threshold, delta,
                                               switches[_S0], switches[_S1], switches[_S2], switches[_S3],
                                               switches[_S4], active, pulls)
        else:
            answer = feasibility_then_bai_decide(pair_means, counts, t_now, samples_now, threshold, delta,
                                                 switches[_S0], switches[_S1], switches[_S2], switches[_S3],
                                                 switches[_INIT], phase, status, active, pulls)
            if phase[0] == BEST_ARM and phase_one < 0:  # phase 1 ended in this decision
                phase_one = samples
        if answer != CONTINUE and answer != RESTART:
            reported = samples + switches[_PLUS_ONE]
            if switches[_AUTHORS_COUNT]:
                reported = authors_count(samples, phase_one, restart_t > 0, switches[_INIT], n, n_feasible, m)
            return answer, reported, rounds, drawn, answer != CRASHED
        n_new = pulls.sum()
        if samples + n_new > max_samples:
            return NO_ANSWER, samples, rounds, drawn, False
        if answer == RESTART:
            n_feasible = active.sum()
            sums[:, :] = 0.0
            counts[:, :] = 0
            restart_t, restart_samples = t, samples
        samples += draw_pulls(pulls, keys, means, exponents, model, drawn, sums, counts)
        rounds += 1
        t += 1


_RADIUS = {"text": RADIUS_TEXT, "shared": RADIUS_SHARED}


def _switches(name: str, options: dict) -> np.ndarray:
    """The switches array of :func:`as_run_loop` for an algorithm's options."""
    authors = {key: value != OPTIONS[name][key][0] for key, value in options.items()}
    if name == "css-lucb":
        values = [int(options["init"]), authors["count"], 0, RADIUS_SHARED if authors["radius"] else RADIUS_TEXT,
                  authors["arm_count"], authors["ties"], authors["sampling"], 0]
    elif name == "ae":
        values = [int(options["batch"]), 0, 0, _RADIUS.get(options["radius"], RADIUS_AE_AUTHORS),
                  authors["feasibility"], authors["elimination"], authors["stopping"], int(options["batch"])]
    else:
        values = [int(options["init"]), 0, authors["count"], _RADIUS.get(options["radius"], RADIUS_FTB_AUTHORS),
                  _RADIUS.get(options["phase2_radius"], RADIUS_AE_AUTHORS), authors["screening"],
                  authors["restart"], 0]
    return np.array(values, dtype=np.int64)


def run_variant(name: str, instance, deltas: np.ndarray, keys: np.ndarray, model: int, max_samples: int,
                options: dict) -> list[tuple]:
    """Run the as-run variant of ``name`` with ``options`` at the one level of ``deltas`` (its sampling reads delta)."""
    switches = _switches(name, options)
    if switches[_INIT] * instance.means.size > max_samples:
        raise ValueError(f"{name}: {switches[_INIT]} initial samples per pair exceed max_samples={max_samples}")
    means, threshold, keys, exponents = kernel_inputs(instance, keys)
    arguments = ((_CSS, _AE, _FTB)[list(OPTIONS).index(name)], means, threshold, keys, exponents, int(model),
                 np.int64(max_samples))
    delta = one_level(deltas)
    if options.get("delta", "given") == "authors":
        delta = AUTHORS_DELTA[name]
    return [run_result(*as_run_loop(*arguments, float(delta), switches))]
