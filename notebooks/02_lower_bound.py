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
# # 2. Lower bounds: Theorem 1 and the characteristic time T*(μ)
#
# How many samples must *any* $\delta$-correct algorithm draw? Section III of the
# paper answers with Theorem 1,
#
# $$\mathbb{E}[\tau_\delta] \;\ge\; \ln\!\Big(\frac{1}{2.4\,\delta}\Big)\, C(\nu, \mu_{TH})\, H_{id},$$
#
# for Bernoulli rewards, where the constant $C = \min(c_1, c_2, c_3)$ is built in
# the appendix from three families of perturbed instances: making an infeasible
# arm feasible ($c_1$), making the best arm infeasible or another feasible arm
# better ($c_2$), and lifting an infeasible sub-optimal arm above the best ($c_3$).
#
# The tight answer is the *characteristic time* of Garivier and Kaufmann (2016):
# every $\delta$-correct algorithm satisfies
# $\mathbb{E}[\tau_\delta] \ge T^\star(\mu)\,\mathrm{kl}(\delta, 1-\delta)$ with
#
# $$\frac{1}{T^\star(\mu)} = \max_{w \in \Sigma_{NM}} \; \min_{\lambda \in \mathrm{Alt}(\mu)} \; \sum_{i,j} w_{ij}\, d(\mu_{ij}, \lambda_{ij}),$$
#
# where $w$ spreads the sampling effort over the $NM$ pairs, $\mathrm{Alt}(\mu)$ is
# the set of instances whose answer differs, and $d$ is the Bernoulli KL
# divergence. `gbai` computes it exactly for this grouped, thresholded problem.
#
# **The alternatives.** To change the answer $a$ of a feasible instance, nature
# can (A) push one attribute of $a$ below the threshold, or (B) make another arm
# $b$ feasible *and* better than $a$ on average, a small convex problem solved
# with one Lagrange multiplier. For an infeasible instance, the only way is (C) to
# make some arm feasible. The inner minimum is the *best response*; evaluated at
# sample counts and empirical means it is the GLR statistic used in notebook 11 (LMA-GLR).

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 300  # not used here: this notebook only computes bounds
delta = PAPER_DELTA  # confidence level of the bounds
seed = 2024  # not used here: nothing is random
workers = None  # not used here
quick = False  # True: a small, fast configuration (used by the tests)

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gbai
from gbai.plotting import plot_allocation, readable_number, savefig
from gbai.studies import record, record_range

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

# %% [markdown]
# ## Table I, by hand and by machine
#
# Theorem 1's constants and both bounds for the illustrative example:

# %%
example = gbai.table1_example()
constants = gbai.theorem1_constants(example)
tstar = gbai.characteristic_time(example)
print(f"case: {constants['case']}, constants entering C: {constants['entering']}")
print(f"c1 = {constants['c1']:.4f}, c2 = {constants['c2']:.4f}, c3 = {constants['c3']}, C = {constants['C']:.4f}")
print(f"H_id = {example.hardness_index():.1f}")
print(f"Theorem 1 at delta = {delta}: {gbai.theorem1_bound(example, delta):.1f} samples")
print(f"T* = {tstar.T_star:.2f} (certified relative gap {tstar.gap:.1e}); "
      f"T* kl(delta, 1-delta) = {gbai.lower_bound_tstar(example, delta):.1f} samples")
pd.DataFrame(tstar.w_star, columns=["attribute 0", "attribute 1"]).rename_axis("arm").round(4)

# %% [markdown]
# The optimal allocation $w^\star$ explains where the effort must go: arm 1 is
# risky (it has the highest mean), but proving it infeasible only needs its
# attribute 0 (mean 0.2), so its attribute 1 gets no weight at all. Arms 0 and 2
# must be compared on their means, which needs both of their attributes.
#
# ## Every paper instance
#
# For each instance: $H_{id}$, Theorem 1's constant and bound, $T^\star$ with the
# Bernoulli divergence, the bound $T^\star\mathrm{kl}(\delta, 1-\delta)$, and the
# ratio $C\,H_{id}/T^\star$. Theorem 1 and this $T^\star$ are both stated for
# Bernoulli rewards, the paper's model; both grow like $\ln(1/\delta)$, so the
# ratio says how Theorem 1 compares with the Bernoulli limit when $\delta$ is small.
#
# The experiments draw Beta rewards, and every algorithm of the package is
# $\delta$-correct for *any* rewards in $[0, 1]$. For such algorithms the limit on
# a given instance uses, per pair, $K_{\inf}(\nu, x)$, the smallest KL divergence
# from the pair's actual law $\nu$ to a law on $[0, 1]$ whose mean is on the other
# side of $x$ (Honda & Takemura 2010; Agrawal, Juneja & Glynn 2020), computed by
# its one-dimensional dual (`divergence="kinf"`). The Bernoulli law is the hardest
# law with a given mean, so $K_{\inf} \ge \mathrm{kl}$ and
# $T^\star_{K_{\inf}} \le T^\star_{\mathrm{Bernoulli}}$: the column "T* Kinf kl" is the
# limit for the Beta runs of notebooks 4 to 9.

# %%
rows = []
for name, experiment in gbai.EXPERIMENTS.items():
    for size in experiment.sizes or [None]:
        for x in experiment.x_grid or [None]:
            instance = experiment.instance(x, size)
            result = gbai.characteristic_time(instance)
            # K_inf limits take about a second each: read from the result cache the experiment notebooks share
            kinf_kl = gbai.stored_limit(instance, delta, "kinf")
            bernoulli_kl = gbai.lower_bound_tstar(instance, delta)
            theorem = gbai.theorem1_constants(instance)
            hardness = instance.hardness_index()
            rows.append({
                "instance": instance.label,
                "experiment": name,
                "H_id": hardness,
                "C": theorem["C"],
                "Theorem 1": gbai.theorem1_bound(instance, delta),
                "T*": result.T_star,
                "T* kl": bernoulli_kl,
                # a diagnostic of the solver: three digits, the same on every machine
                "certified gap": float(f"{result.gap:.3g}"),
                "T* Kinf kl": kinf_kl,
                "Bernoulli / Kinf": bernoulli_kl / kinf_kl,
                "C H_id / T*": theorem["C"] * hardness / result.T_star,
                "same, feasible runner-up": (theorem["C"] * instance.hardness_index(competitor="feasible")
                                             / result.T_star),
            })
bounds = pd.DataFrame(rows)
bounds.drop(columns="same, feasible runner-up").round(
    {"H_id": 1, "C": 4, "Theorem 1": 1, "T*": 2, "T* kl": 1, "certified gap": 10, "T* Kinf kl": 1,
     "Bernoulli / Kinf": 2, "C H_id / T*": 3})

# %%
print(f"T*_Bernoulli / T*_Kinf over the instances: {bounds['Bernoulli / Kinf'].min():.2f} "
      f"to {bounds['Bernoulli / Kinf'].max():.2f}")
record_range("limit.bernoulli-over-kinf", bounds["Bernoulli / Kinf"], fmt=".1f", figure="lower_bounds_comparison",
             description="T* of Bernoulli rewards over T* with K_inf of the Beta rewards, paper instances")

# %%
fig, ax = plt.subplots(figsize=(7, 4.2))
for name, group in bounds.groupby("experiment", sort=False):
    ax.scatter(group["T* kl"], group["Theorem 1"], label=name, s=24)
line = np.geomspace(bounds["T* kl"].min() * 0.7, bounds["T* kl"].max() * 1.4, 10)
ax.plot(line, line, color="black", linestyle=":", label="equal")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(r"$T^\star(\mu)\,\mathrm{kl}(\delta, 1-\delta)$")
ax.set_ylabel(r"Theorem 1: $\ln(1/2.4\delta)\,C\,H_{id}$")
ax.set_title(f"Two lower bounds on every paper instance (δ = {delta})")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3, frameon=False)
ax.grid(True, which="both", alpha=0.3)
savefig(fig, "lower_bounds_comparison", data=bounds)
plt.show()

# %% [markdown]
# **Figure.** Two lower bounds on every paper instance at the same $\delta$: Theorem
# 1's $\ln(1/2.4\delta)\,C\,H_{id}$ against the limit
# $T^\star(\mu)\,\mathrm{kl}(\delta, 1-\delta)$; points below the dotted diagonal are
# instances where Theorem 1 is the weaker bound.

# %% [markdown]
# **Reading the comparison.** On most instances Theorem 1 is one to two orders of
# magnitude below $T^\star\mathrm{kl}$: it is a valid but loose bound, as the
# reverse-Pinsker steps of its proof suggest. Two groups of instances stand out:
# experiment 2 with $x \le 0.55$ and the varying-N tables at $x = 0.38$, where
# $C\,H_{id} > T^\star$. There, an asymptotically optimal algorithm (which needs
# about $T^\star\ln(1/\delta)$ samples as $\delta \to 0$) would beat Theorem 1's
# bound for small $\delta$. So the theorem, read with the paper's $H_{id}$, cannot
# hold on those instances. The culprit is the runner-up $i^{\star\star}$ of
# Section V, which may be an *infeasible* arm whose mean is just below the
# best's (reading note 9): it contributes a huge term to $H_{id}$ although that
# arm is easy to rule out through its weak attribute. With the feasible-runner-up
# variant of $H_{id}$, $C\,H_{id}/T^\star$ stays below 0.1 everywhere.

# %%
print(f"largest C H_id / T* with the feasible runner-up: {bounds['same, feasible runner-up'].max():.3f}")
record("theorem1.instances-above-limit", int((bounds["C H_id / T*"] > 1).sum()), fmt="d",
       figure="lower_bounds_comparison", description="paper instances where Theorem 1's C·H_id exceeds T*")
record_range("theorem1.excess-over-limit", bounds.loc[bounds["C H_id / T*"] > 1, "C H_id / T*"], fmt=".3r",
             description="C·H_id / T* where it exceeds 1")
record("theorem1.feasible-runner-up.max", bounds["same, feasible runner-up"].max(), fmt=".2f",
       description="largest C·H_id / T* with the feasible runner-up's H_id")
bounds[bounds["C H_id / T*"] > 1][["instance", "H_id", "C", "T*", "C H_id / T*", "same, feasible runner-up"]].round(3)

# %% [markdown]
# ## Where the optimal effort goes: w*
#
# One heat map per experiment (rows: arms, columns: attributes).

# %%
shown = [("example", None, None), ("exp1", 0.31, None), ("exp2", 0.6, None), ("exp3", 0.3, None),
         ("vary-n", 0.42, 6), ("vary-m", 0.42, 4)]
fig, axes = plt.subplots(2, 3, figsize=(14, 7.5))
allocations = []
for ax, (name, x, size) in zip(axes.ravel(), shown):
    instance = gbai.paper_instance(name, x, size)
    w_star = gbai.characteristic_time(instance).w_star
    plot_allocation(w_star, ax=ax, title=f"{instance.label}: w*")
    for i in range(instance.n_arms):
        for j in range(instance.n_attributes):
            allocations.append({"instance": instance.label, "arm": i, "attribute": j, "w_star": w_star[i, j]})
fig.tight_layout()
savefig(fig, "w_star_heatmaps", data=pd.DataFrame(allocations))
plt.show()

# %% [markdown]
# **Figure.** The optimal allocation $w^\star$ of the characteristic time on one
# instance of each experiment: the share of samples each arm-attribute pair (rows:
# arms, columns: attributes) receives.

# %% [markdown]
# **What the allocations say.**
#
# * *Experiment 1* ($x = 0.31$): nearly half of the effort goes to one pair, the
#   best arm's attribute 0, which sits 0.01 above the threshold: certifying that
#   arm's feasibility is the whole difficulty. Arms 3 and 4, whose attribute 0 is
#   also $x$, need little: they are far below the best arm on average.
# * *Experiment 2*: effort is spread over all attributes of arms 0 and 1, whose
#   means must be compared; the infeasible arms 2 to 4 get a little weight, all
#   on their failing attribute.
# * *Experiment 3*: the risky arm 2 gets a quarter of the effort, entirely on its
#   attribute 0 (the one below the threshold); arm 4, infeasible through its
#   attribute 0 too, gets the same. The feasible arms 0 and 1 share the rest
#   across their attributes.
# * In every case an infeasible arm needs only its weakest attribute. This is the
#   main waste of CSS-LUCB and of the baselines, which always sample every
#   attribute of the arms they pull (notebook 10 samples only the attributes in doubt).
#
# ## Exercises
#
# **Exercise 1** (2 points). With one attribute ($M = 1$) and a threshold below every
# mean, the problem is plain best-arm identification. Garivier and Kaufmann's example
# with $N = 4$ arms, $\mu = (0.5, 0.45, 0.43, 0.4)$, has $T^\star \approx 989.8$.
# Build that instance (`bai`) and check.

# %% nbgrader={"grade": false, "grade_id": "nb02_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
bai = gbai.Instance([[0.5], [0.45], [0.43], [0.4]], threshold=0.1)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb02_ex1_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(bai, gbai.Instance), "bai should be a gbai.Instance"
assert bai.n_arms == 4 and bai.n_attributes == 1, "bai should have 4 arms and 1 attribute"
### BEGIN HIDDEN TESTS
# The means are typed in: the default tolerance of allclose (1e-5 relative) absorbs rounding only.
assert np.allclose(np.sort(bai.means.ravel()), [0.4, 0.43, 0.45, 0.5]), "bai does not have the four means given"
assert bai.threshold < bai.means.min(), "the threshold of bai is not below every mean"
# T* is certified to a relative gap of 1e-5; 0.5 is the rounding of the quoted 989.8.
assert abs(gbai.characteristic_time(bai).T_star - 989.8) < 0.5, "T* of bai is not the one quoted"
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 2** (2 points). For an infeasible instance $T^\star = \sum_b
# 1/\mathrm{kl}(\min_j \mu_{bj}, \mu_{TH})$: each arm puts all its effort on its
# weakest attribute. Compute this by hand (with `gbai.kl_bernoulli`) for the instance
# below and store it in `t_infeasible`.

# %%
infeasible = gbai.Instance([[0.2, 0.6], [0.5, 0.25], [0.1, 0.1]], threshold=0.3)

# %% nbgrader={"grade": false, "grade_id": "nb02_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
t_infeasible = sum(1 / gbai.kl_bernoulli(row.min(), 0.3) for row in infeasible.means)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb02_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(t_infeasible, (int, float, np.integer, np.floating)), "t_infeasible should be a number"
assert np.isfinite(t_infeasible) and t_infeasible > 0, "T* is a positive, finite number"
### BEGIN HIDDEN TESTS
# The same three terms summed in another order differ by rounding only (about 1e-15).
assert abs(t_infeasible - gbai.characteristic_time(infeasible).T_star) < 1e-9 * t_infeasible, (
    "t_infeasible does not match T* of the instance: one term per arm, at its weakest attribute")
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 3** (3 points: 2 automatic, 1 for the written answer). Evaluate the
# best response for Table I at uniform weights ($w_{ij} = 1/6$). Which alternative is
# the most confusing? Store its kind (`"best-infeasible"`, `"overtake"` or
# `"become-feasible"`) in `kind` and the arm that moves besides the answer, if any,
# in `other_arm` (or None).

# %% nbgrader={"grade": false, "grade_id": "nb02_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
response = gbai.best_response(example.means, example.threshold, np.full((3, 2), 1 / 6))
kind = response.kind
other_arm = response.arms[1] if len(response.arms) > 1 else None
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb02_ex3_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert kind in ("best-infeasible", "overtake", "become-feasible"), "kind should be one of the three kinds named"
assert other_arm is None or other_arm in range(example.n_arms), "other_arm should be an arm index or None"
### BEGIN HIDDEN TESTS
values = gbai.alternative_values(example.means, example.threshold, np.full((3, 2), 1 / 6))
cheapest = int(np.argmin(values["value"]))
assert kind == values["kind"][cheapest], "kind is not the kind of the most confusing alternative"
assert other_arm == (values["arm"][cheapest] if kind == "overtake" else None), (
    "other_arm is not the arm that moves in the most confusing alternative")
### END HIDDEN TESTS
print("Exercise 3: checks passed")

# %% [markdown]
# **Exercise 3, written answer** (1 point). Describe the alternative instance the best
# response returns: which means move, in which direction, and why a learner who cannot
# tell it from Table I cannot give the answer. Which alternative comes next, and how
# much dearer is it?

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb02_ex3_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# Arm 0's two attributes move down and arm 2's move up until both arms have the same
# mean, about 0.451: arm 0 becomes (0.549, 0.353), arm 2 (0.451, 0.451), and arm 1
# stays as it is. In that instance arm 2 is as good as arm 0, so data that fit both
# cannot say which arm is the answer. The next cheapest alternative pushes arm 0's
# attribute 1 from 0.4 down to the threshold 0.3, which would make arm 0 infeasible;
# its value is about 0.0038 against 0.0034, some 10% dearer.
