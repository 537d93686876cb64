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
# # 1. Problem setup: grouped arms, attributes and a threshold
#
# This notebook accompanies Section II (problem setting) and the definitions of
# Section V of *Constrained Best Arm Identification in Grouped Bandits* (Dharod,
# Sravani, Heda, Moharir; arXiv 2412.08031). It builds the paper's illustrative
# example (Table I) with the `gbai` package and walks through every quantity the
# later notebooks rely on: feasibility, the answer, the sets S and R, the gaps and
# the hardness index $H_{id}$.
#
# **The problem in one paragraph.** There are $N$ arms. Each arm is a *group* of
# $M$ independent attributes, and pulling a pair $(i, j)$ returns a reward in
# $[0, 1]$ with mean $\mu_{ij}$. Arm $i$ is *feasible* when every one of its
# attribute means reaches the threshold $\mu_{TH}$ (eq. (1) of the paper). The
# learner wants the feasible arm with the largest average
# $\mu_i = \frac1M \sum_j \mu_{ij}$, or the verdict "no arm is feasible", and must
# be right with probability at least $1-\delta$ while drawing as few samples as
# possible. Indices in `gbai` start at 0; the paper counts from 1.

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 300  # runs for the small simulation at the end
delta = PAPER_DELTA  # confidence parameter used throughout the paper
seed = 2024  # every random number below derives from this seed
workers = None  # processes for simulations (None: all cores)
quick = False  # True: a small, fast configuration (used by the tests)

# %%
if quick:
    n_runs = 20

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gbai
from gbai.plotting import legend_below, panel_grid, plot_instance, readable_number, savefig

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

# %% [markdown]
# ## The illustrative example (Table I)
#
# Three arms with two attributes each and threshold $\mu_{TH} = 0.3$.

# %%
example = gbai.table1_example()
table = pd.DataFrame(example.means, columns=["attribute 0", "attribute 1"])
table["arm mean"] = example.arm_means
table["feasible"] = example.feasible_mask
table.index.name = "arm"
table

# %% [markdown]
# Arm 1 has the highest average (0.6) but its attribute 0 has mean 0.2, below the
# threshold, so it is not feasible. Among the feasible arms 0 and 2, arm 0 has the
# larger average: it is the answer.

# %%
print("feasible set F:", example.feasible_set)
print("feasibility flag f:", int(example.is_feasible))
print("best feasible arm i*:", example.best_arm)

# %% [markdown]
# ## The sets S and R, the gaps and the hardness index (Section V)
#
# Relative to the best feasible arm $i^\star$ the paper splits the other arms into
# the *sub-optimal set* $S$ (mean below $\mu_{i^\star}$, feasible or not) and the
# *risky set* $R$ (mean above $\mu_{i^\star}$; such arms must be infeasible). The
# runner-up $i^{\star\star}$ is the best arm of $S$, and
#
# * $\Delta_i = |\mu_{i^\star} - \mu_i|$ for $i \neq i^\star$, $\Delta_{i^\star} = |\mu_{i^\star} - \mu_{i^{\star\star}}|$;
# * $\Delta_i^{attr} = |\min_j \mu_{ij} - \mu_{TH}|$, the distance of the weakest attribute to the threshold.
#
# The hardness index adds one term per arm:
#
# $$\begin{aligned}
# H_{id} = {} & \frac{1}{\min(\Delta_{i^\star}/2, \Delta^{attr}_{i^\star})^2}
#   + \sum_{i \in F \cap S} \frac{1}{(\Delta_i/2)^2} \\
#   & + \sum_{i \in F^c \cap R} \frac{1}{(\Delta_i^{attr})^2}
#   + \sum_{i \in F^c \cap S} \frac{1}{\max(\Delta_i/2, \Delta_i^{attr})^2}.
# \end{aligned}$$
#
# The best arm must be shown feasible *and* better than the runner-up; a feasible
# sub-optimal arm must be shown worse; a risky arm must be shown infeasible; an
# infeasible sub-optimal arm can be dismissed either way, whichever is easier.

# %%
terms = pd.DataFrame(
    {
        "arm mean": example.arm_means,
        "feasible": example.feasible_mask,
        "in S": example.suboptimal_mask,
        "in R": example.risky_mask,
        "Delta_i": example.gaps,
        "Delta_i^attr": example.arm_attribute_gaps,
        "H_id term": example.hardness_terms(),
    }
)
terms.index.name = "arm"
print(f"H_id = {example.hardness_index():.1f}")
terms.round(4)

# %% [markdown]
# Every term here is 400 or 100, so $H_{id} = 900$: an algorithm needs on the order
# of $H_{id}\ln(1/\delta)$ samples (Theorems 1 and 2).
#
# ## A picture of an instance
#
# Bars are arm means (hatched when infeasible, outlined for the answer), dots are
# attribute means, the dashed line is the threshold.

# %%
fig, ax = plot_instance(example, title="Table I (threshold 0.3)")
savefig(fig, "setup_table1", data=table.reset_index())
plt.show()

# %% [markdown]
# **Figure.** The instance of Table I: arm means (bars; hatched when infeasible,
# outlined for the answer), attribute means (dots) and the threshold 0.3 (dashed
# line).

# %% [markdown]
# The paper's experiments (Tables III and IV) are named families with one free
# entry $x$. Here is each of them at one value of its grid.

# %%
shown = [("exp1", 0.31, None), ("exp2", 0.6, None), ("exp3", 0.3, None), ("vary-n", 0.42, 6), ("vary-m", 0.42, 4)]
fig, axes = panel_grid(len(shown), panel_size=(3.6, 3.0))
rows = []
for ax, (name, x, size) in zip(axes, shown):
    instance = gbai.paper_instance(name, x, size)
    plot_instance(instance, ax=ax)
    rows.append({"instance": instance.label, "answer": instance.answer, "feasible set": instance.feasible_set,
                 "risky set": instance.risky_set, "H_id": round(instance.hardness_index(), 1)})
legend_below(fig)
overview = pd.DataFrame(rows)
savefig(fig, "setup_paper_instances", data=overview.astype(str))
plt.show()
overview

# %% [markdown]
# **Figure.** One instance of each experiment of the paper, drawn as in the figure
# above: experiments 1 to 3 at one value of $x$, and the varying-$N$ and varying-$M$
# tables at one size.

# %% [markdown]
# Experiment 3 is worth a second look: arm 2 has the largest mean of all but is
# infeasible (a *risky* arm), and arm 4 is infeasible too because its attribute 0
# (0.3) is below that experiment's threshold 0.35, although Table III does not
# shade it.
#
# ## Rewards and common random numbers
#
# The paper draws attribute rewards from a beta distribution; following the
# authors' code we use $\mathrm{Beta}(1, 1/\mu - 1)$, whose mean is exactly $\mu$
# (reading note 8). Bernoulli rewards are available too. Both live in $[0, 1]$,
# but the beta rewards vary much less:

# %%
mus = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
pd.DataFrame(
    {
        "mu": mus,
        "variance, Beta(1, 1/mu - 1)": gbai.reward_variance(mus, "beta"),
        "variance, Bernoulli(mu)": gbai.reward_variance(mus, "bernoulli"),
    }
).round(4)

# %% [markdown]
# Every run is driven by one integer seed. The seed gives each pair its own random
# stream, and the $k$-th sample of pair $(i, j)$ depends only on the seed, the pair
# and $k$, never on which algorithm asks or in which order. Two algorithms run on
# the same seed therefore see the same data: comparisons between them are paired.

# %%
stream = gbai.RewardStream(example.means, seed=seed)
first_draws = pd.DataFrame({f"pair (0, {j})": stream.samples(0, j, 5) for j in range(2)})
first_draws.index.name = "k"
first_draws.round(6)

# %% [markdown]
# ## A first simulation
#
# CSS-LUCB (notebook 3) on Table I, `n_runs` times. The error rate must stay below
# $\delta$, and the number of samples is of the order of $H_{id}\ln(1/\delta)$.

# %%
results = gbai.sweep({"Table I": example}, ["css-lucb"], n_runs=n_runs, delta=delta, seed=seed,
                     workers=workers, progress=False)
gbai.summarize(results).round(2)

# %% [markdown]
# ## Exercises
#
# **Exercise 1** (1 point). Raise the threshold of Table I to 0.45. Which arms are
# feasible, and what must a correct algorithm answer? Work it out by hand from the
# table above, then set `feasible_045` to the feasible arms (a tuple of arm indices)
# and `answer_045` to an arm index or `gbai.INFEASIBLE`.

# %% nbgrader={"grade": false, "grade_id": "nb01_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
feasible_045 = ()  # arm 0 has 0.4 < 0.45, arm 1 has 0.2, arm 2 has 0.4
answer_045 = gbai.INFEASIBLE
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb01_ex1_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
assert isinstance(feasible_045, tuple), "feasible_045 should be a tuple of arm indices"
assert all(arm in range(example.n_arms) for arm in feasible_045), "feasible_045 should hold arm indices of Table I"
assert answer_045 in feasible_045 or answer_045 == gbai.INFEASIBLE, (
    "answer_045 should be one of the feasible arms, or gbai.INFEASIBLE when there is none")
### BEGIN HIDDEN TESTS
raised = gbai.Instance(example.means, 0.45)
assert set(feasible_045) == set(raised.feasible_set), (
    "feasible_045 is not the feasible set at threshold 0.45: compare every attribute of each arm with it")
assert answer_045 == raised.answer, "answer_045 is not what a correct algorithm must answer at threshold 0.45"
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 2** (3 points: 2 automatic, 1 for the written answer). With threshold
# 0.25 instead of 0.3, compute $H_{id}$ of Table I by hand (which arms are in $S$, in
# $R$, feasible?) and store the number in `h_025`.

# %% nbgrader={"grade": false, "grade_id": "nb01_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
# i* = 0 (mean 0.5); arm 2 is feasible and in S, Delta = 0.1; arm 1 is risky with
# Delta^attr = |0.2 - 0.25| = 0.05; the best arm has Delta = 0.1 and Delta^attr = 0.15.
h_025 = 1 / min(0.1 / 2, 0.15) ** 2 + 1 / (0.1 / 2) ** 2 + 1 / 0.05**2
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb01_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(h_025, (int, float, np.integer, np.floating)), "h_025 should be a number"
# Every gap is at most 1, so every term of H_id is at least 1.
assert np.isfinite(h_025) and h_025 >= example.n_arms, "H_id is finite and at least 1 per arm"
### BEGIN HIDDEN TESTS
# H_id is a sum of three exact fractions: only rounding separates two correct computations.
assert abs(h_025 - gbai.Instance(example.means, 0.25).hardness_index()) < 1e-9 * h_025, (
    "h_025 is not H_id at threshold 0.25: redo the sets S and R, the feasible arms and the gaps at 0.25")
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 2, written answer** (1 point). Which terms of $H_{id}$ differ from those
# at threshold 0.3 (the table above), and why?

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb01_ex2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# Only the risky arm's. The sets stay the same: arm 0 is still the answer, arm 2 is
# feasible and in $S$, arm 1 is infeasible (its attribute 0 at 0.2 is still below the
# threshold) and in $R$. The terms of arms 0 and 2 depend on the mean gap 0.1 alone
# (for arm 0, $\Delta/2 = 0.05$ stays below $\Delta^{attr}$), so they stay at 400.
# Arm 1's term is $1/(\Delta^{attr}_1)^2$, and its weak attribute is now only 0.05 from
# the threshold instead of 0.1: the term grows from 100 to 400, and $H_{id}$ from 900
# to 1200.

# %% [markdown]
# **Exercise 3** (2 points). Design a feasible instance with 3 arms and 2 attributes
# in which the arm with the highest mean is infeasible (a risky arm) and the answer
# is arm 2. Store it in `my_instance`.

# %% nbgrader={"grade": false, "grade_id": "nb01_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
my_instance = gbai.Instance([[1.0, 0.2], [0.4, 0.45], [0.5, 0.6]], threshold=0.3)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb01_ex3_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(my_instance, gbai.Instance), "my_instance should be a gbai.Instance"
assert my_instance.n_arms == 3 and my_instance.n_attributes == 2, "my_instance should have 3 arms and 2 attributes"
### BEGIN HIDDEN TESTS
top = int(np.argmax(my_instance.arm_means))
assert my_instance.is_feasible, "my_instance has no feasible arm"
assert top not in my_instance.feasible_set and top in my_instance.risky_set, (
    "the arm with the highest mean must be infeasible (a risky arm)")
assert my_instance.answer == 2, "the answer of my_instance is not arm 2"
### END HIDDEN TESTS
print("Exercise 3: checks passed")
