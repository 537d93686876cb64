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
# # 3. CSS-LUCB at work
#
# Section IV of the paper defines Confidence Set Sampling (CSS-LUCB, Algorithm 1).
# This notebook runs it one round at a time with the `gbai` step engine on the
# Table I instance, looks at its confidence intervals and confidence sets as they
# evolve, marks the round where it stops, and then plugs a home-made policy into
# the same engine to compare the two on identical data.
#
# **The algorithm in words.** Every round, each arm-attribute pair gets a
# confidence interval $[L_{ij}, U_{ij}]$ and each arm an interval $[L_i, U_i]$ for
# its mean, with radius $\alpha(t, T) = \sqrt{\ln(4NMt^4/\delta)/(2T)}$. A pair whose
# upper bound reaches the threshold may still be feasible (set $F_t^A$), a pair
# whose lower bound does is surely feasible ($F_{Pt}^A$). An arm is
# *feasible-looking* ($F_t$) when all its pairs are in $F_t^A$, and *certified*
# ($F_{Pt}$) when all are in $F_{Pt}^A$. The leader $i_t$ is the empirically best
# feasible-looking arm; the competitor $c_t$ is the feasible-looking arm with the
# highest upper bound among the others. CSS-LUCB samples every feasible-looking
# pair of $i_t$ and $c_t$ and stops when no feasible-looking arm can still beat the
# best certified arm (the *potential set* $P_t$ is empty within $F_t$). Reading
# notes 3-5 fix the details the paper leaves open.

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 30  # paired runs per policy for the comparison at the end (step engine: ~1 s a run)
delta = PAPER_DELTA  # confidence parameter
seed = 2024  # seeds every run in this notebook
workers = None  # unused here: the step engine runs in this process
quick = False  # True: a small, fast configuration (used by the tests)

# %%
if quick:
    n_runs = 3

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gbai
from gbai.plotting import panel_grid, plot_confidence_intervals, plot_set_evolution, readable_number, savefig

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

instance = gbai.table1_example()
snapshot_rounds = [20, 200, 2000]

# %% [markdown]
# ## Algorithm 1 beside its code
#
# The package's paper layer (`gbai.paper`) writes the algorithm as the paper states
# it, in plain NumPy. Lines 12 to 20 of Algorithm 1, in our words: if no arm of
# $F_t$ is in $P_t$, stop, and output $i_t$ when $F_t$ is non-empty, "infeasible"
# otherwise; if $F_t$ holds one arm, pull the pairs of $i_t$ that lie in $F_t^A$;
# otherwise pull those of $i_t$ and of $c_t$. The function below is that rule,
# applied to one round's state; the sets it reads are computed once, in
# `gbai.paper.bounds`, from the radius of eqs. (3)-(4) (both printed below).

# %%
import inspect

print(inspect.getsource(gbai.paper.css_lucb))  # the function; its module is gbai/paper/css_lucb.py
print(inspect.getsource(gbai.paper.bounds.confidence_sets))

# %% [markdown]
# ## One run, round by round
#
# `StepEngine` samples every pair once (round 1) and then asks the policy for a
# decision each round. `step()` plays one round and returns its state and the
# decision; `trace()` plays to the end and keeps a compact record of every round.

# %%
engine = gbai.StepEngine(instance, gbai.CSSLUCB(), delta=delta, seed=seed)
first = engine.step()
state = first.state
print(f"round t = {state.t}, samples so far k(t) = {state.total_samples}")
print("empirical attribute means:\n", np.round(state.means, 3))
print("pair radius alpha(t, T_ij):", np.round(state.bounds.pair_radius[0, 0], 3))
print("F_t^A (pairs that may be feasible):\n", state.sets.feasible_attribute_set)
print(f"i_t = {state.sets.best_feasible_arm}, c_t = {state.sets.competitor_arm}")
print("pulled pairs:\n", first.decision.pulls)

# %% [markdown]
# With a single sample per pair the radius is larger than 1: every interval
# covers the whole of $[0, 1]$, every arm is feasible-looking, and nothing is
# certified. Let us play the rest of the run.

# %%
trace, kept = engine.trace(snapshot_rounds)
result = engine.result
print(result)
print(f"answer: {result.answer_label}; the true answer is arm {instance.answer}")
trace.iloc[[0, 1, 2, -3, -2, -1]]

# %% [markdown]
# ## Confidence intervals at several rounds
#
# Thin lines are attribute intervals (grey: the threshold lies inside, green: the
# pair is certified feasible, red: the pair's upper bound fell below the
# threshold); thick blue bars are arm-mean intervals. A star marks $i_t$, a
# diamond $c_t$, and a yellow background the arms of $P_t$.

# %%
final_round = trace["t"].iloc[-1]
shown = [t for t in snapshot_rounds if t in kept] + [final_round]
fig, axes = panel_grid(len(shown), panel_size=(3.2, 3.0), sharey=True)
for ax, t in zip(axes, shown):
    label = f"round t = {t}" + (" (stop)" if t == final_round else "")
    plot_confidence_intervals(kept[t].state, ax=ax, title=label)
fig.tight_layout()
intervals = pd.concat(
    [
        pd.DataFrame(
            {
                "t": t,
                "arm": np.repeat(np.arange(instance.n_arms), instance.n_attributes),
                "attribute": np.tile(np.arange(instance.n_attributes), instance.n_arms),
                "L_ij": kept[t].state.pair_lower.ravel(),
                "U_ij": kept[t].state.pair_upper.ravel(),
                "L_i": np.repeat(kept[t].state.arm_lower, instance.n_attributes),
                "U_i": np.repeat(kept[t].state.arm_upper, instance.n_attributes),
            }
        )
        for t in shown
    ]
)
savefig(fig, "css_lucb_intervals", data=intervals)
plt.show()

# %% [markdown]
# **Figure.** CSS-LUCB's confidence intervals on Table I at a few rounds and at
# stopping: attribute intervals (thin), arm-mean intervals (thick), with the arms it
# compares marked.

# %% [markdown]
# ## How the sets evolve
#
# Each band is one arm over the rounds (log scale): light when the arm is in
# $F_t$, dark once it is certified ($F_{Pt}$); the orange line shows membership of
# $P_t$, and ticks show the rounds in which the arm was sampled.

# %%
fig, ax = plot_set_evolution(trace, instance.n_arms, title="CSS-LUCB on Table I")
savefig(fig, "css_lucb_sets", data=trace.astype({column: str for column in
                                                  ["feasible_set", "perfectly_feasible_set", "potential_set",
                                                   "pulled_arms"]}))
plt.show()

# %% [markdown]
# **Figure.** How CSS-LUCB's sets evolve on Table I: for each arm, membership of the
# feasible set, of the certified set and of the potential set over the rounds (log
# scale), with the rounds it was sampled.

# %% [markdown]
# Reading the picture:
#
# * Arm 1, the risky arm (highest mean 0.6, attribute 0 at 0.2), leaves $F_t$ once
#   the upper bound of its attribute 0 drops below 0.3. After that it is never
#   sampled, but since the radius grows slowly with $t$ (the $\ln t^4$ term) while
#   its count stays frozen, its upper bound can creep back above the threshold:
#   the arm then briefly re-enters $F_t$.
# * Arms 0 and 2 stay feasible-looking and are sampled as leader and competitor
#   until both are certified; arm 0 becomes $i^\star_t$ and so leaves $P_t$, which
#   excludes the best certified arm by definition (reading note 3).
# * The run stops when arm 2's upper bound falls below arm 0's lower bound: then
#   no arm of $F_t$ is left in $P_t$.

# %%
events = []
for arm in range(instance.n_arms):
    in_feasible = trace["feasible_set"].map(lambda members: arm in members)
    certified = trace["perfectly_feasible_set"].map(lambda members: arm in members)
    left = trace["t"][~in_feasible]
    events.append(
        {
            "arm": arm,
            "first round outside F_t": int(left.iloc[0]) if len(left) else None,
            "first round in F_Pt": int(trace["t"][certified].iloc[0]) if certified.any() else None,
            "rounds pulled": int(trace["pulled_arms"].map(lambda members: arm in members).sum()),
        }
    )
pd.DataFrame(events)

# %% [markdown]
# ## A policy of our own, on the same data
#
# The step engine accepts any object with a `name`, a `reset(n_arms,
# n_attributes)` method and a `decide(state)` method returning
# `gbai.Decision.stop(answer)` or `gbai.Decision.sample(pairs)`. Here is a variant
# of CSS-LUCB with the same stopping rule that samples *only* the pairs whose
# feasibility is still open (the almost-feasible pairs $\partial F_t^A$) of $i_t$
# and $c_t$, and both arms whole once their feasibility is settled. Attribute
# counts within an arm then differ; the engine's arm radius uses
# $T_i = \min_j T_{ij}$ as the paper prescribes, which keeps the bounds valid.


# %%
class FocusedCSS:
    """CSS-LUCB's stopping rule, sampling only the pairs that are still undecided."""

    name = "focused-css"

    def reset(self, n_arms, n_attributes):
        pass

    def decide(self, state):
        paper = gbai.CSSLUCB().decide(state)  # CSS-LUCB keeps no state: reuse its stopping rule
        if paper.stops:
            return paper
        sets = state.sets
        arms = [sets.best_feasible_arm] + ([sets.competitor_arm] if sets.competitor_arm >= 0 else [])
        pulls = np.zeros_like(sets.feasible_attribute_set)
        for arm in arms:
            open_pairs = sets.almost_feasible_attribute_set[arm]
            pulls[arm] = open_pairs if open_pairs.any() else sets.feasible_attribute_set[arm]
        return gbai.Decision.sample(pulls)


mine = gbai.StepEngine(instance, FocusedCSS(), delta=delta, seed=seed).run()
pd.DataFrame(
    [
        {"policy": "css-lucb", "answer": result.answer_label, "samples": result.samples, "rounds": result.rounds},
        {"policy": mine.algorithm, "answer": mine.answer_label, "samples": mine.samples, "rounds": mine.rounds},
    ]
)

# %% [markdown]
# On Table I the two policies cost about the same: the hard part there is
# comparing the means of arms 0 and 2, which needs every attribute. The focused
# policy pays off when one attribute sits close to the threshold, as in experiment
# 1, where arm 0's attribute 0 is $x$ and the threshold is 0.3. We repeat both
# policies there on `n_runs` paired seeds (the same reward streams for both, run by
# run).

# %%
near_threshold = gbai.paper_instance("exp1", 0.35)
rows = []
for run_index in range(n_runs):
    run_seed = gbai.run_seed(seed, run_index)
    paper = gbai.run(near_threshold, "css-lucb", delta=delta, seed=run_seed)
    focused = gbai.StepEngine(near_threshold, FocusedCSS(), delta=delta, seed=run_seed).run()
    rows.append({"run": run_index, "css-lucb": paper.samples, "focused-css": focused.samples,
                 "css-lucb correct": paper.answer == near_threshold.answer,
                 "focused correct": focused.answer == near_threshold.answer})
paired = pd.DataFrame(rows)
ratio = paired["focused-css"] / paired["css-lucb"]
print(f"mean samples: css-lucb {paired['css-lucb'].mean():.0f}, focused {paired['focused-css'].mean():.0f}")
print(f"focused / css-lucb per run: mean {ratio.mean():.3f}, min {ratio.min():.3f}, max {ratio.max():.3f}")
print(f"correct answers: {paired['css-lucb correct'].mean():.3f} and {paired['focused correct'].mean():.3f}")

# %% [markdown]
# Notebook 10 (CSS-LUCB+) pushes this idea, and the confidence bounds themselves, much further.
#
# ## Exercises
#
# **Exercise 1** (1 point). Using `trace`, check that the stopping rule really held
# at the last round: no arm of $F_t$ is in $P_t$. Store the set of arms of
# $F_t \cap P_t$ at the final round in `final_overlap`.

# %% nbgrader={"grade": false, "grade_id": "nb03_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
last = trace.iloc[-1]
final_overlap = set(last["feasible_set"]) & set(last["potential_set"])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb03_ex1_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
assert isinstance(final_overlap, set), "final_overlap should be a set of arm indices"
assert final_overlap <= set(range(instance.n_arms)), "final_overlap should hold arm indices of Table I"
### BEGIN HIDDEN TESTS
end = trace.iloc[-1]
assert final_overlap == set(end["feasible_set"]) & set(end["potential_set"]), (
    "final_overlap is not the intersection of F_t and P_t at the last round of trace")
assert not final_overlap and end["stops"] and not trace["stops"].iloc[:-1].any(), "the run stops only at the end"
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 2** (3 points: 2 automatic, 1 for the written answer). Find the first
# round in which the risky arm 1 is no longer in $F_t$ (store it in `risky_out`),
# and explain which bound caused it.

# %% nbgrader={"grade": false, "grade_id": "nb03_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
risky_out = int(trace["t"][~trace["feasible_set"].map(lambda members: 1 in members)].iloc[0])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb03_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(risky_out, (int, np.integer)), "risky_out should be a round number (an integer)"
assert risky_out in set(trace["t"]), "risky_out should be one of the rounds in trace['t']"
assert 1 not in trace.set_index("t").loc[risky_out, "feasible_set"], "arm 1 is still in F_t at round risky_out"
### BEGIN HIDDEN TESTS
earlier = trace[trace["t"] < risky_out]
assert earlier["feasible_set"].map(lambda members: 1 in members).all(), (
    "arm 1 already left F_t before round risky_out: look for the first such round")
check = gbai.StepEngine(instance, gbai.CSSLUCB(), delta=delta, seed=seed)
while check.t < risky_out:
    check.step()
assert check.state().pair_upper[1, 0] < instance.threshold, "the replayed run disagrees with risky_out"
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 2, written answer** (1 point). Which confidence bound crossed which
# value to push arm 1 out of $F_t$, and why does that rule the arm out for good?

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb03_ex2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# The upper confidence bound $U_{1,0}$ of arm 1's attribute 0 (true mean 0.2) fell
# below the threshold 0.3. An arm stays in $F_t$ only while every one of its
# attributes may still reach the threshold; once one upper bound is below it, the arm
# is infeasible with high confidence, and since the bounds only shrink around the true
# mean afterwards, it does not come back.

# %% [markdown]
# **Exercise 3** (3 points). Write a policy `RoundRobinCSS` that keeps CSS-LUCB's
# stopping rule but samples every pair of every arm in $F_t$ each round. Run it on
# Table I with `seed` and check that it is correct and uses at least as many samples
# as CSS-LUCB on this seed.


# %% nbgrader={"grade": false, "grade_id": "nb03_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
class RoundRobinCSS:
    name = "round-robin-css"

    def reset(self, n_arms, n_attributes):
        pass

    def decide(self, state):
        paper = gbai.CSSLUCB().decide(state)
        if paper.stops:
            return paper
        return gbai.Decision.sample(np.repeat(state.sets.feasible_set[:, None], state.n_attributes, axis=1))
### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "nb03_ex3_run", "locked": true, "schema_version": 3, "solution": false, "task": false}
# Your policy plays here: a whole run, and its first decision, which the checks below read.
robin = gbai.StepEngine(instance, RoundRobinCSS(), delta=delta, seed=seed).run()
robin_first_pulls = gbai.StepEngine(instance, RoundRobinCSS(), delta=delta, seed=seed).step().decision.pulls
print(robin)

# %% nbgrader={"grade": true, "grade_id": "nb03_ex3_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
assert robin.stopped, "a run of RoundRobinCSS on Table I did not stop"
### BEGIN HIDDEN TESTS
assert robin.answer == instance.answer, "RoundRobinCSS answered wrongly on Table I"
assert robin.samples >= result.samples, "RoundRobinCSS used fewer samples than CSS-LUCB: it skips some pairs"
# The state of the first decision does not depend on the policy: every pair has been sampled once.
first = gbai.StepEngine(instance, gbai.CSSLUCB(), delta=delta, seed=seed).step()
wanted = np.repeat(first.state.sets.feasible_set[:, None], instance.n_attributes, axis=1)
assert robin_first_pulls is not None and np.array_equal(np.asarray(robin_first_pulls) > 0, wanted), (
    "RoundRobinCSS does not sample exactly the pairs of the arms in F_t")
### END HIDDEN TESTS
print("Exercise 3: checks passed")
