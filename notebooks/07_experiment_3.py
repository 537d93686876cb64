# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: nbgrader,tags,-all
#     notebook_metadata_filter: -papermill,-widgets,-varInspector
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 7. Experiment 3: the highest-mean arm is infeasible (Figure 1c)
#
# Section VI, Table III (experiment 3): threshold 0.35. Arm 2 has the largest mean
# of all, but its first attribute $x \in \{0.05, \dots, 0.30\}$ lies below the
# threshold: it is a *risky* arm. The answer is arm 0 (mean 0.6). As $x$ rises
# towards 0.35 it gets harder to prove arm 2 infeasible. Note that arm 4 is
# infeasible as well (its attribute 0 is 0.3 < 0.35), although Table III does not
# shade it.

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 300  # runs per (x, algorithm) point
delta = PAPER_DELTA  # the paper's confidence level
seed = 2024  # run r of every point uses the seed sequence (seed, r)
workers = None  # processes for the sweep (None: all cores)
quick = False  # True: a small, fast configuration (used by the tests)

# %%
if quick:
    n_runs = 6

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gbai
from gbai.plotting import readable_number
from gbai.studies import replicate_experiment

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

name = "exp3"
experiment = gbai.EXPERIMENTS[name]
print(experiment.title, f"({experiment.source}), threshold {experiment.threshold}")
pd.DataFrame(experiment.instance(experiment.x_grid[-1]).means).rename_axis(index="arm", columns="attribute")

# %% [markdown]
# ## The sweep, the figure and the claim
#
# As in notebook 5: paired runs, the figure, and the paired verdict of CSS-LUCB
# against each baseline.

# %%
replication, fig = replicate_experiment(name, "fig1c_experiment3", n_runs=n_runs, delta=delta, seed=seed,
                                        workers=workers, title="Experiment 3: the risky arm's attribute x → 0.35")
runs, summary, comparison = replication.runs, replication.summary, replication.comparison
plt.show()
summary.round(3)

# %% [markdown]
# **Figure.** Figure 1c of the paper rerun: mean samples to stop against $H_{id}$ with
# 95% intervals and the limit (left), and the samples each baseline needs above
# CSS-LUCB on the same runs, in percent, with paired 95% intervals (right).

# %%
comparison.round(3)

# %%
print(replication.report())
replication.record()  # the ranges above, as headline results (figures/results.csv)

# %% [markdown]
# **What we measured.** In experiment 3 the paper's claim does not hold either:
# CSS-LUCB needs *more* samples than both baselines at every $x$, by the ratios
# above, more against Action Elimination than against Feasibility-then-BAI. A large part of
# the difference comes from the radius, not from the sampling choices: the
# paper's $\alpha(t, T)$ grows with the *round* index $t$ through
# $\ln(4NMt^4/\delta)$, and CSS-LUCB draws at most $2M$ samples per round while
# the baselines draw $M$ per active arm. For the same number of samples CSS-LUCB
# has played more rounds, so its intervals are wider. The hardness index barely
# moves with $x$ here, since the risky arm's gap to the threshold stays between
# 0.05 and 0.3, and the sample counts barely move either.
#
# ## Exercises
#
# **Exercise 1** (1 point). For $x = 0.3$, store the arms of the risky set $R$ in
# `risky` and the arms of $F^c \cap S$ in `infeasible_suboptimal` (tuples of arm
# indices).

# %% nbgrader={"grade": false, "grade_id": "nb07_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
risky = (2,)
infeasible_suboptimal = (3, 4)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb07_ex1_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
for arms in (risky, infeasible_suboptimal):
    assert isinstance(arms, tuple), "risky and infeasible_suboptimal should be tuples of arm indices"
    assert all(arm in range(experiment.instance(0.3).n_arms) for arm in arms), "arm indices of the instance only"
assert not set(risky) & set(infeasible_suboptimal), "an arm cannot be both in R and in S"
### BEGIN HIDDEN TESTS
at_03 = experiment.instance(0.3)
assert tuple(sorted(risky)) == at_03.risky_set, "risky is not the risky set R at x = 0.3"
assert tuple(sorted(infeasible_suboptimal)) == tuple(
    i for i in at_03.suboptimal_set if not at_03.feasible_mask[i]), "infeasible_suboptimal is not F^c ∩ S"
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 2** (3 points: 2 automatic, 1 for the written answer). Compare the
# number of *rounds* of CSS-LUCB and Action Elimination at $x = 0.3$: store the ratio
# of their mean round counts (CSS-LUCB / AE) in `round_ratio`. Why does it matter for
# the radius?

# %% nbgrader={"grade": false, "grade_id": "nb07_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
at_03 = runs[runs["instance"] == experiment.instance(0.3).label]
mean_rounds = at_03.groupby("algorithm")["rounds"].mean()
round_ratio = float(mean_rounds["css-lucb"] / mean_rounds["ae"])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb07_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(round_ratio, (int, float, np.integer, np.floating)), "round_ratio should be a number"
assert np.isfinite(round_ratio) and round_ratio > 0, "a ratio of round counts is positive and finite"
### BEGIN HIDDEN TESTS
rounds_03 = runs[runs["instance"] == experiment.instance(0.3).label].groupby("algorithm")["rounds"].mean()
# The same ratio of the same two means, up to rounding.
assert abs(round_ratio - rounds_03["css-lucb"] / rounds_03["ae"]) < 1e-9 * round_ratio, (
    "round_ratio is not CSS-LUCB's mean number of rounds over Action Elimination's at x = 0.3")
assert round_ratio > 1, "CSS-LUCB should play more rounds than Action Elimination here"
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 2, written answer** (1 point). Why does the number of rounds matter for
# the confidence radius, and so for the number of samples?

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb07_ex2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# The paper's radius $\sqrt{\ln(4NMt^4/\delta)/(2T)}$ grows with the round index $t$,
# not only with the count $T$ of the pair. CSS-LUCB plays more rounds than Action
# Elimination for about the same number of samples, so at the same count its
# $\ln t^4$ term is larger and its intervals wider; it needs more samples before they
# separate, which is part of why it loses here.

# %% [markdown]
# **Exercise 3** (1 point). The radius of a pair after $T$ samples at round $t$ is
# $\sqrt{\ln(4NMt^4/\delta)/(2T)}$. For $T = 10^4$, compute how much wider it is at
# $t = 4\cdot10^4$ than at $t = 10^4$ (`widening`, a ratio).

# %% nbgrader={"grade": false, "grade_id": "nb07_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
widening = float(gbai.confidence_radius(40_000, 10_000, 25, delta) / gbai.confidence_radius(10_000, 10_000, 25, delta))
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb07_ex3_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
assert isinstance(widening, (int, float, np.integer, np.floating)), "widening should be a number"
assert np.isfinite(widening) and widening > 1, "the radius is wider at the later round: the ratio exceeds 1"
### BEGIN HIDDEN TESTS
expected = np.sqrt((np.log(4 * 25 / delta) + 4 * np.log(4e4)) / (np.log(4 * 25 / delta) + 4 * np.log(1e4)))
# Closed form against the library's radius: they differ by rounding only.
assert abs(widening - expected) < 1e-12, "widening is not the ratio of the two radii (N = M = 5)"
### END HIDDEN TESTS
print("Exercise 3: checks passed")
