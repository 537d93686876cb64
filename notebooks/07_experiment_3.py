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
n_runs = 300  # runs per (x, algorithm) point
delta = 0.1  # the paper's confidence level
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
from gbai.plotting import replicate_experiment

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

# %%
comparison.round(3)

# %%
print(replication.report())

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
# **Exercise 1.** For $x = 0.3$, store the arms of the risky set $R$ in `risky`
# and the arms of $F^c \cap S$ in `infeasible_suboptimal`.

# %% nbgrader={"grade": false, "grade_id": "nb07_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
risky = (2,)
infeasible_suboptimal = (3, 4)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb07_ex1_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
instance = experiment.instance(0.3)
assert tuple(risky) == instance.risky_set
assert tuple(infeasible_suboptimal) == tuple(
    i for i in instance.suboptimal_set if not instance.feasible_mask[i])
print("Exercise 1: correct")

# %% [markdown]
# **Exercise 2.** Compare the number of *rounds* of CSS-LUCB and Action
# Elimination at $x = 0.3$: store the ratio of their mean round counts
# (CSS-LUCB / AE) in `round_ratio`. Why does it matter for the radius?

# %% nbgrader={"grade": false, "grade_id": "nb07_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
at_03 = runs[runs["instance"] == experiment.instance(0.3).label]
mean_rounds = at_03.groupby("algorithm")["rounds"].mean()
round_ratio = float(mean_rounds["css-lucb"] / mean_rounds["ae"])
# CSS-LUCB plays more rounds for a similar number of samples; ln(t^4) is larger.
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb07_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert round_ratio > 1
print(f"Exercise 2: correct, CSS-LUCB plays {round_ratio:.2f} times as many rounds")

# %% [markdown]
# **Exercise 3.** The radius of a pair after $T$ samples at round $t$ is
# $\sqrt{\ln(4NMt^4/\delta)/(2T)}$. For $T = 10^4$, compute how much wider it is
# at $t = 4\cdot10^4$ than at $t = 10^4$ (`widening`, a ratio).

# %% nbgrader={"grade": false, "grade_id": "nb07_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
widening = float(gbai.confidence_radius(40_000, 10_000, 25, delta) / gbai.confidence_radius(10_000, 10_000, 25, delta))
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb07_ex3_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
expected = np.sqrt((np.log(4 * 25 / delta) + 4 * np.log(4e4)) / (np.log(4 * 25 / delta) + 4 * np.log(1e4)))
assert abs(widening - expected) < 1e-12
print(f"Exercise 3: correct, {100 * (widening - 1):.1f}% wider")
