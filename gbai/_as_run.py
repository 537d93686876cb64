"""As-run variants of the paper's three algorithms (issue 9): shared compiled pieces.

The authors' research notebooks, which drew the published figures, differ from the
paper's text in a list of settings and rules (``AUTHORS-CODE.md``). Each difference
is one option of the algorithm it belongs to, whose default is the text's reading,
so that runs can switch them on one at a time. This module holds the pieces the
three algorithms share: the radius formulas and the reward draws of the compiled
kernels. The decision rules live with their algorithms.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .confidence import log_constant, log_term_from, radius
from .rewards import draw

__all__ = [
    "CONTINUE",
    "RADIUS_AE_AUTHORS",
    "RADIUS_FTB_AUTHORS",
    "RADIUS_SHARED",
    "RADIUS_TEXT",
    "RESTART",
    "as_run_radius",
    "draw_pulls",
]

#: Codes a decision function returns besides an arm, INFEASIBLE (-1) and CRASHED (-3).
CONTINUE = -10
RESTART = -11

#: Radius formulas (``t`` is the round index for the text, else samples so far + 1):
#: the paper's ``sqrt(ln(4NMt^4/delta)/(2T))``;
RADIUS_TEXT = 0
#: the authors' CSS-LUCB radius ``sqrt(ln(N(M+1)t^3/(2 delta))/(2T))``, ``t`` = samples + 1,
#: also the radius every algorithm shares in the counterfactual ("shared");
RADIUS_SHARED = 1
#: the authors' Action Elimination radius ``sqrt(2 ln(2N(pi^2/6)T^2/delta)/T)``;
RADIUS_AE_AUTHORS = 2
#: the authors' phase-1 radius of Feasibility then BAI ``sqrt(ln(N(M+1)t^3/(2 delta))/(4T))``.
RADIUS_FTB_AUTHORS = 3


@njit(cache=True)
def as_run_radius(mode, count, n_arms, n_attributes, delta, t_round, samples):
    """The radius for ``count`` samples under formula ``mode`` (see the ``RADIUS_*`` codes).

    ``t_round`` is the round index (text radius), ``samples`` the number of samples
    the algorithm has counted so far (the authors' ``t`` is ``samples + 1``). Logs of
    products are evaluated as sums of logs, as :mod:`gbai.confidence` does.
    """
    if mode == RADIUS_TEXT:
        return radius(log_term_from(log_constant(n_arms * n_attributes, delta), t_round), count)
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
def pair_means(sums, counts):
    """``sums / counts`` pair by pair (the float division of the step engine)."""
    return sums / counts.astype(np.float64)


@njit(cache=True)
def arm_mean(means, i):
    """The plain average of arm ``i``'s attribute means, summed left to right."""
    total = means[i, 0]
    for j in range(1, means.shape[1]):
        total += means[i, j]
    return total / means.shape[1]
