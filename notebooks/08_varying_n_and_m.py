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
# # 8. Varying the number of arms and attributes (Figure 2)
#
# Section VI, Table IV: threshold 0.5, the highest-mean arm (arm 1 here) is
# infeasible through its first attribute $x \in \{0.38, \dots, 0.46\}$. Figure 2(a)
# keeps $M = 2$ and uses the first $N \in \{4, 5, 6\}$ arms; Figure 2(b) keeps
# $N = 5$ and uses the first $M \in \{2, 3, 4\}$ attributes. Only CSS-LUCB is run.
# The paper reports that the sample complexity grows with $N$ and with $M$.

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 300  # runs per (size, x) point
delta = PAPER_DELTA  # the paper's confidence level
seed = 2024  # run r of every point uses the seed sequence (seed, r)
workers = None  # processes for the sweep (None: all cores)
quick = False  # True: a small, fast configuration (used by the tests)

# %%
if quick:
    n_runs = 6

import matplotlib.pyplot as plt
import pandas as pd

import gbai
from gbai.plotting import plot_sample_complexity, readable_number, savefig
from gbai.studies import record, record_range

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

# %%
results = {}
for name in ("vary-n", "vary-m"):
    experiment = gbai.EXPERIMENTS[name]
    print(f"{experiment.title}: sizes {experiment.sizes}, x grid {experiment.x_grid}")
    results[name] = gbai.sweep_experiment(name, ["css-lucb"], n_runs=n_runs, delta=delta, seed=seed,
                                          workers=workers)
columns = ["experiment", "size", "x", "H_id", "mean_samples", "ci95_low", "ci95_high", "T_star_kl",
           "ratio_to_T_star_kl", "error_rate", "unstopped"]
summary = pd.concat([results[name][1] for name in results], ignore_index=True)
summary[columns].round(3)

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
for ax, name, label, title in [(axes[0], "vary-n", "N = ", "(a) varying the number of arms, M = 2"),
                               (axes[1], "vary-m", "M = ", "(b) varying the number of attributes, N = 5")]:
    plot_sample_complexity(results[name][1], x="x", group="size", group_label=label, reference="T_star_kl",
                           ax=ax, title=title)
    ax.set_xlabel("x (first attribute of arm 1)")
fig.tight_layout()
savefig(fig, "fig2_varying_n_m", data=summary[columns])
plt.show()

# %% [markdown]
# **Figure.** Figure 2 of the paper rerun: CSS-LUCB's mean samples against $x$ for
# three numbers of arms (left) and three numbers of attributes (right), each with its
# limit (dotted).

# %% [markdown]
# ## Does the sample complexity grow with N and with M?

# %%
pivot = summary.pivot_table(index=["experiment", "x"], columns="size", values="mean_samples")
pivot.round(0)

# %%
for name, sizes in (("vary-n", (4, 5, 6)), ("vary-m", (2, 3, 4))):
    table = pivot.loc[name]
    increasing = (table[list(sizes)].diff(axis=1).iloc[:, 1:] > 0).all(axis=1)
    print(f"{name}: samples increase with the size at {increasing.sum()} of {len(increasing)} values of x")
    for smaller, larger in zip(sizes, sizes[1:]):
        growth = table[larger] / table[smaller]
        print(f"    size {smaller} -> {larger}: samples x {growth.min():.2f} to {growth.max():.2f}")
        record_range(f"{name}.growth-{smaller}-to-{larger}", growth, fmt=".2f", figure="fig2_varying_n_m",
                     description=f"{name}: CSS-LUCB's mean samples at size {larger} over size {smaller}, per x")

# %% [markdown]
# **What we measured.** The claim holds only in part.
#
# * Over $N$ the sample count grows, but not evenly (the factors above): adding
#   arm 4 ($N = 5$, mean 0.3, infeasible and far below) costs little, while adding
#   arm 5 ($N = 6$, feasible, mean 0.575 against the answer's 0.65) costs a lot. What matters
#   is how close the new arm is, as $H_{id}$ says, not the count of arms.
# * Over $M$ the sample count *falls*: with the first two attributes only, arm 0
#   (0.55, 0.6; mean 0.575) is just 0.025 above arm 3 (0.55, 0.55), while with four
#   attributes the gap is 0.075. Taking more attributes changed the instance,
#   making it easier, and $H_{id}$ falls from about 13000 to 1500 with it.
#
# Both trends follow $H_{id}$, which is what Theorem 2 predicts; the number of
# arms or attributes by itself is not the driver on these tables.
#
# ## Exercises
#
# **Exercise 1** (1 point). At $x = 0.42$, compute $H_{id}$ of the vary-M instance
# for $M = 2$ and $M = 4$ and store their ratio ($M = 2$ over $M = 4$) in `ratio_m`.

# %% nbgrader={"grade": false, "grade_id": "nb08_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
ratio_m = (gbai.paper_instance("vary-m", 0.42, 2).hardness_index()
           / gbai.paper_instance("vary-m", 0.42, 4).hardness_index())
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb08_ex1_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import numpy as np

assert isinstance(ratio_m, (int, float, np.integer, np.floating)), "ratio_m should be a number"
assert np.isfinite(ratio_m) and ratio_m > 0, "a ratio of hardness indices is positive and finite"
### BEGIN HIDDEN TESTS
expected = (gbai.paper_instance("vary-m", 0.42, 2).hardness_index()
            / gbai.paper_instance("vary-m", 0.42, 4).hardness_index())
# A ratio of two sums of a few terms: only rounding separates two correct computations.
assert abs(ratio_m - expected) < 1e-9 * expected, "ratio_m is not H_id(M = 2) / H_id(M = 4) at x = 0.42"
assert ratio_m > 5, "the instance with M = 2 should be far harder"
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 2** (2 points: 1 automatic, 1 for the written answer). For $N = 6$ at
# $x = 0.42$, which arm's term dominates $H_{id}$ (`dominant_arm`)? Is it the arm
# added last?

# %% nbgrader={"grade": false, "grade_id": "nb08_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
dominant_arm = int(gbai.paper_instance("vary-n", 0.42, 6).hardness_terms().argmax())
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb08_ex2_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
import numpy as np

assert isinstance(dominant_arm, (int, np.integer)), "dominant_arm should be an arm index (an integer)"
assert dominant_arm in range(6), "the instance has 6 arms, 0 to 5"
### BEGIN HIDDEN TESTS
six_terms = gbai.paper_instance("vary-n", 0.42, 6).hardness_terms()
# Two arms tie for the largest term; either is right. The tolerance absorbs rounding only.
assert six_terms[dominant_arm] >= six_terms.max() * (1 - 1e-9), "another arm has a larger term"
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 2, written answer** (1 point). Is the dominant term that of the arm added
# last (arm 5)? Explain with the terms of $H_{id}$ for $N = 5$ and $N = 6$.

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb08_ex2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# Partly: arms 0 and 5 tie for the largest term (about 711 each). Arm 5, added last,
# has mean 0.575, only 0.075 below the answer's 0.65, so it becomes the runner-up:
# its own term is $1/(0.075/2)^2$, and the answer's term $1/\min(\Delta_{i^\star}/2,
# \Delta^{attr}_{i^\star})^2$ now uses the same gap, up from 400 with $N = 5$. One arm
# close to the answer raises two terms at once, which is why $H_{id}$ doubles from
# $N = 5$ to $N = 6$ while adding a far arm hardly changes it.

# %% [markdown]
# **Exercise 3** (2 points). In the $N = 6$ instance at $x = 0.42$, replace arm 5
# (0.55, 0.6) by a feasible arm further below the answer, with attributes 0.55 and
# 0.52, and check with `gbai.sweep` (a few runs) that CSS-LUCB needs fewer samples
# than on the paper's instance. Store both mean sample counts in `easier` and `paper`.

# %% nbgrader={"grade": false, "grade_id": "nb08_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
base = gbai.paper_instance("vary-n", 0.42, 6)
means = base.means.copy()
means[5] = [0.55, 0.52]
variant = gbai.Instance(means, base.threshold, label="variant")
both = gbai.sweep({"variant": variant, "paper": base}, ["css-lucb"], n_runs=min(n_runs, 20), delta=delta,
                  seed=seed, workers=workers, progress=False)
easier, paper = both.groupby("instance")["samples"].mean()[["variant", "paper"]]
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb08_ex3_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import numpy as np

for count in (easier, paper):
    assert isinstance(count, (int, float, np.integer, np.floating)), "easier and paper should be numbers"
    assert np.isfinite(count) and count > 0, "a mean number of samples is positive and finite"
### BEGIN HIDDEN TESTS
assert easier < paper, "on the variant CSS-LUCB should need fewer samples than on the paper's instance"
### END HIDDEN TESTS
print("Exercise 3: checks passed")
