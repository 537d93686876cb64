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
# # 12. Betting-GBAI: testing every alternative by betting
#
# To stop, an algorithm for the paper's problem must rule out every way its answer
# could be wrong: an attribute of the answer below the threshold, another arm
# feasible and better, or, for "infeasible", an arm that is feasible after all.
# CSS-LUCB (Algorithm 1) and CSS-LUCB+ (notebook 10) rule them out with confidence
# intervals, LMA-GLR (notebook 11) with likelihood-ratio tests. Betting-GBAI tests
# each alternative *by betting* (Shafer 2021; Waudby-Smith and Ramdas 2024): a
# gambler who bets against the alternative, at fair odds if it were true, cannot
# multiply their capital by $1/\delta'$ except with probability $\delta'$ (Ville's
# inequality), so a large capital is evidence against it. The bets adapt to the
# law of the rewards, which brings Betting-GBAI within a small factor of the limit
# $T^\star(\mu)\,\mathrm{kl}(\delta, 1-\delta)$ (notebook 2) on the paper's Beta
# rewards.
#
# Section 1 builds the tests, section 2 the stopping rule and why it is
# $\delta$-correct with only $N + M - 1$ union terms, section 3 the sampling
# rule; sections 4 to 6 measure it on the paper's experiments. Section 7 presents
# the package's recommended algorithm, Betting-GBAI with a sampling rule that never
# reads $\delta$, so that one run serves every $\delta$. How the ratio to the limit
# falls as $\delta \to 0$ is in notebook 11, section 5; notebook 13 sets the
# recommended algorithm against the best proven algorithms of the literature.

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 300  # runs per point (paired seeds: run r uses the same rewards for every algorithm)
delta = PAPER_DELTA  # the paper's confidence level
seed = 2024  # the seed of notebooks 4-8, so the CSS-LUCB runs come from the cache
workers = None  # processes for the sweeps (None: all cores)
quick = False  # True: a small, fast configuration (used by the tests)
n_runs_error = 1000  # runs for the error-rate check on two instances
ablation_deltas = [1e-1, 1e-6]  # the confidence levels of the ablation
recommended_deltas = [1e-1, 1e-3, 1e-6, 1e-10]  # the confidence levels of section 7 (one pass)

# %%
if quick:
    n_runs, n_runs_error = 6, 20

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gbai
from gbai.plotting import plot_grouped_bars, readable_number, savefig
from gbai.studies import error_check, every_experiment, record_range

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

TITLES = gbai.EXPERIMENT_TITLES

# %% [markdown]
# ## 1. How the tests work
#
# **E-values and Ville's inequality.** A *test supermartingale* for a null hypothesis
# is a nonnegative process $K_0 = 1, K_1, K_2, \dots$ that is a supermartingale
# whenever the null holds: $\mathbb{E}[K_t \mid \text{past}] \le K_{t-1}$. Ville's
# inequality bounds the chance that it *ever* gets large:
#
# $$\Pr\bigl(\exists t:\ K_t \ge 1/\alpha\bigr) \le \alpha \qquad \text{under the null.}$$
#
# So rejecting the null as soon as $\ln K_t \ge \ln(1/\alpha)$ errs with probability
# at most $\alpha$, however long we watch and whatever rule decides when to look;
# $K_t$ at any stopping time is an *e-value*.
#
# **Betting against a mean.** For rewards $X_k \in [0, 1]$ with mean $\mu$ and the
# null $\mu \le m$, the capital of a gambler who stakes the fraction $\lambda$ on
# "the next reward exceeds $m$",
#
# $$K_t(\lambda) = \prod_{k \le t} \bigl(1 + \lambda (X_k - m)\bigr), \qquad 0 \le \lambda < 1/m,$$
#
# is nonnegative (every factor is positive, since $X_k - m \ge -m$) and, under the
# null, $\mathbb{E}[1 + \lambda(X_k - m) \mid \text{past}] = 1 + \lambda(\mu - m) \le 1$:
# a test supermartingale (Waudby-Smith and Ramdas 2024, Sections 3-4). When
# $\mu > m$, the best constant bet makes $\ln K_t$ grow at the rate
# $\max_\lambda \mathbb{E}\ln(1 + \lambda(X - m))$ per reward, which is the divergence
# $K_{\inf}$ of the reward law to the means $\le m$ in its dual form (Honda and
# Takemura 2010): $\mathrm{kl}(\mu, m)$ for Bernoulli rewards, more for rewards that
# vary less. This is why betting can reach the $K_{\inf}$ limit of notebook 2.
#
# **Not knowing the best bet.** The best $\lambda$ depends on the unknown law, so
# each test holds a uniform mixture of $G = 20$ constant bets
# $\lambda_g = \rho_g \lambda_{\max}$, $\rho_g = 0.95/1.33^{g}$ ($g = 0, \dots, 19$,
# from $0.95\lambda_{\max}$ down to about $0.004\lambda_{\max}$). A fixed convex
# combination of test supermartingales is a test supermartingale, and
# $\ln \frac{1}{G}\sum_g K_t(\lambda_g) \ge \max_g \ln K_t(\lambda_g) - \ln G$: the
# mixture loses at most $\ln G$ nats to the best bet of the grid, and adjacent bets
# lose little growth rate to each other.
#
# **The three kinds of tests.**
#
# * *Pair above the threshold* (null $\mu_{ij} \le \mu_{TH}$): factors
#   $1 + \lambda(X_{ijk} - \mu_{TH})$, $\lambda_{\max} = 1/\mu_{TH}$.
# * *Pair below the threshold* (null $\mu_{ij} \ge \mu_{TH}$): factors
#   $1 + \lambda(\mu_{TH} - X_{ijk})$, $\lambda_{\max} = 1/(1 - \mu_{TH})$.
# * *Arm $a$ above arm $b$* (null $\mu_a \le \mu_b$ for the arm means): on complete
#   arm-rounds (notebook 10, section 2), the $k$-th rewards of every attribute of
#   $a$ and $b$ give $z_{jk} = X_{ajk} - X_{bjk} \in [-1, 1]$, and the capital is
#
#   $$K_n(\lambda) = \prod_{k \le n} \prod_{j=1}^{M} \bigl(1 + \lambda z_{jk}\bigr), \qquad
#     n = \min(T_a, T_b),\ \ 0 \le \lambda < 1.$$
#
# **Why the product form is a fair bet.** The reward sequences are fixed in
# advance (notebook 10, section 2), so the arm-rounds are i.i.d. whatever the
# sampling rule, and the $2M$ rewards of a round are independent. With
# $d_j = \mu_{aj} - \mu_{bj}$, one round multiplies the capital in expectation by
#
# $$\mathbb{E}\prod_{j=1}^{M}(1 + \lambda z_{jk}) = \prod_{j=1}^{M}(1 + \lambda d_j)
#   \le \exp\Bigl(\lambda \sum_{j=1}^{M} d_j\Bigr) = \exp\bigl(\lambda M (\mu_a - \mu_b)\bigr) \le 1$$
#
# under the null, using $1 + x \le e^x$ and $\lambda \ge 0$: the capital is a test
# supermartingale. One test on one stream of arm-rounds replaces the $2M$ pairs that the
# GLR of alternative (B) must move in notebook 11. Betting on each difference in
# turn, rather than on their average $D_k = \frac{1}{M}\sum_j z_{jk}$ (which lies in
# $[-1, 1]$ and so allows bets up to 1 only), lets the effective bet on $D_k$ reach
# $M$: to first order $\prod_j(1 + \lambda z_{jk}) \approx 1 + \lambda M D_k$. The
# average form is the ablation `arm_test=average` (section 5).
#
# ## 2. The stopping rule, and why it is δ-correct
#
# Let $a$ be the empirical answer of the pair means and $c = \ln((N + M - 1)/\delta)$.
# Betting-GBAI stops and answers $a$ when every alternative is rejected, that is
# has a log e-value of at least $c$:
#
# * (A) every attribute $j$ of $a$: its *above* test;
# * (B) every arm $b \ne a$: the *below* test of some attribute of $b$, or the arm
#   test "$a$ above $b$";
# * (C) when no arm is empirically feasible ($a$ is "infeasible"), every arm $b$: the
#   *below* test of some attribute of $b$.
#
# **Why $N + M - 1$ union terms suffice.** There are $2NM + N(N - 1)$ tests in all,
# but an error needs one of only $N + M - 1$ events fixed by the truth. Fix the true
# means $\mu$ and, for each infeasible arm $i$, one attribute $j(i)$ with
# $\mu_{i j(i)} < \mu_{TH}$. A wrong answer needs one of:
#
# * the answer $a$ is an infeasible arm: then (A) rejected the above test of
#   $(a, j(a))$, whose null $\mu_{a j(a)} \le \mu_{TH}$ is true;
# * the best arm $a^\star$ exists and was dismissed in (B) or (C): then either a
#   below test of one of its $M$ pairs crossed (null true, since $a^\star$ is
#   feasible), or, when $a$ is a feasible arm, the arm test "$a$ above $a^\star$"
#   crossed (null true, since $\mu_a < \mu_{a^\star}$).
#
# Each arm $i \ne a^\star$ contributes one event (infeasible: its pair event;
# feasible: its arm event against $a^\star$) and $a^\star$ contributes $M$: at most
# $N - 1 + M$ events ($N$ when no arm is feasible). Each is a test supermartingale
# with a true null reaching $e^c$, of probability at most $e^{-c} = \delta/(N + M - 1)$ by
# Ville's inequality, at any time and so at the stopping time; their union has
# probability at most $\delta$, for any rewards in $[0, 1]$. The option
# `union=every` splits $\delta$ over all $2NM + N(N - 1)$ tests instead
# (section 5).
#
# ## 3. The sampling rule
#
# The stopping rule waits for its weakest alternative, so every round Betting-GBAI
# feeds the alternative furthest from rejection. *Furthest* is measured by a
# plug-in statistic $Z$, the empirical GLR of the alternative's best route:
# $N_{aj}\,\mathrm{kl}(\hat\mu_{aj}, \mu_{TH})$ for an attribute of $a$ above the
# threshold; for an arm $b$, the larger of $N_{bj}\,\mathrm{kl}(\hat\mu_{bj},
# \mu_{TH})$ over its attributes below the threshold and the arm test's rounds times
# its plug-in growth per round; and 0 on the wrong side of the threshold. The
# alternative with the smallest $Z + \ln(\text{samples of its pair or arm})$ is
# served, ties going to the smaller log e-value. The logarithmic penalty is the one
# of the TCI challenger of Jourdan et al. (2022): when the leader is wrong, a near
# tie between two wrong arms keeps $Z$ small for ever, while the cheap correction (a
# pair of the true best arm seen under the threshold) has few samples; the e-values
# alone cannot tell the two apart, as both sit near their floor $-\ln G$.
#
# The alternative served is then fed by its cheaper route, by a plug-in estimate
# of the samples still needed: for (A), that attribute of $a$; for (B) and (C),
# either a below test of $b$'s most promising attribute, needing about
# $(c - \ln K)/\mathrm{kl}(\hat\mu_{bj}, \mu_{TH})$ samples, or the arm test, needing
# $(c - \ln K)$ over its growth per round times the samples per round. The arm test
# samples one arm-round (the lagging attributes) of whichever of $a$ and $b$ has
# fewer complete rounds. Its plug-in growth per round comes from the quadratic
# approximation $\ln(1 + \lambda z) \approx \lambda z - \lambda^2 z^2/2$: with
# $S_1 = \sum z$ and $S_2 = \sum z^2$ over the rounds so far, the best bet is
# $\lambda = S_1/S_2$ (at most 1), with one pseudo-round at the variance bound so
# that the first rounds, whose spread is often 0, do not promise a test that is
# nearly done. The option `sampling=uniform` samples every pair every round instead
# (section 5). As in notebooks 10 and 11, the sampling rule plays no part in the
# correctness argument.
#
# ## 4. Every paper experiment, at the paper's δ = 0.1
#
# Betting-GBAI on every instance of experiments 1 to 3 and of the varying tables,
# beside CSS-LUCB and CSS-LUCB+ (notebook 10, same seeds), against the limit for
# the Beta rewards of the experiments. On the varying tables the three sizes are
# pooled along the x axis by their limit.

# %%
study = every_experiment(["css-lucb", "css-lucb-plus", "betting"], n_runs=n_runs, delta=delta, seed=seed,
                         workers=workers)
summary = study.summary
fig = study.draw("beyond_betting")
plt.show()

# %% [markdown]
# **Figure.** CSS-LUCB, CSS-LUCB+ and Betting-GBAI against the limit on every paper
# experiment, drawn as the CSS-LUCB+ figure of notebook 10.

# %%
table = study.ratios({"CSS-LUCB / Betting-GBAI": ("css-lucb", "betting"),
                      "CSS-LUCB+ / Betting-GBAI": ("css-lucb-plus", "betting"),
                      "Betting-GBAI / limit": ("betting", "limit")})
table.round(2)

# %% [markdown]
# **What we measured.** Betting-GBAI needs two orders of magnitude fewer samples
# than CSS-LUCB and several times fewer than CSS-LUCB+ on these Beta rewards,
# within a small factor of their $K_{\inf}$ limit. Its ratio to the limit is
# highest where one pair just above the threshold decides the run (experiments 1
# and 3): a single pair test must then reach the whole level
# $\ln((N + M - 1)/\delta)$ on its own.

# %%
over_css, over_plus, over_limit = (table[column] for column in table.columns)
print(f"Betting-GBAI needs {over_css.min():.0f} to {over_css.max():.0f} times fewer samples than CSS-LUCB, "
      f"{over_plus.min():.1f} to {over_plus.max():.1f} times fewer than CSS-LUCB+, and "
      f"{over_limit.min():.1f} to {over_limit.max():.1f} times the K_inf limit")
for name, values in table["Betting-GBAI / limit"].groupby(level="experiment", sort=False):
    print(f"   {TITLES[name]:<21} {values.min():.2f} to {values.max():.2f} times the limit")
record_range("betting.gain", over_css, fmt=".2r", figure="beyond_betting",
             description="CSS-LUCB's mean samples over Betting-GBAI's, paper instances, δ = 0.1, same seeds")
record_range("betting.gain-over-plus", over_plus, fmt=".2r", figure="beyond_betting",
             description="CSS-LUCB+'s mean samples over Betting-GBAI's, paper instances, δ = 0.1, same seeds")
record_range("betting.over-limit", over_limit, fmt=".2r", figure="beyond_betting",
             description="Betting-GBAI's mean samples over T*·kl(δ, 1−δ) with K_inf, paper instances, δ = 0.1")

# %% [markdown]
# ## 5. What each ingredient buys: an ablation
#
# Each variant below replaces one ingredient of Betting-GBAI by the simpler choice
# it improves on, everything else unchanged:
#
# * `arm_test=average`: the arm test bets on the *average* difference of the two
#   arm-rounds, which lies in $[-1, 1]$, so its bets are capped at 1 (section 1);
# * `arm_test=none`: no arm test at all; a competing arm can then be rejected only
#   by showing one of its attributes under the threshold, which for a feasible arm
#   happens only when a test errs, so runs with a second feasible arm practically
#   never stop (here they end at a small sample budget);
# * `union=every`: $\delta$ is split over every test of the problem
#   ($2NM + N(N-1)$ of them) instead of the $N + M - 1$ that can err together
#   (section 2);
# * `sampling=uniform`: every pair is sampled every round, with the same tests.
#
# Bernoulli rewards, so the ratio is to the matching limit
# $T^\star\mathrm{kl}(\delta, 1-\delta)$ with the Bernoulli divergence:

# %%
betting_variants = {
    "Betting-GBAI": "betting",
    "arm test on the average": "betting:arm_test=average",
    "no arm test": "betting:arm_test=none",
    "delta split over every test": "betting:union=every",
    "uniform sampling": "betting:sampling=uniform",
}
betting_instances = {inst.label: inst for inst in [
    gbai.paper_instance("exp1", 0.35), gbai.paper_instance("exp2", 0.6), gbai.paper_instance("exp3", 0.3),
    gbai.paper_instance("vary-m", 0.42, 4)]}
ablation_budget = 200_000  # samples; ample for every variant that can stop
no_stop_budget = 20_000  # without an arm test no run can stop here: a few short runs show it
rows = []
for level in ablation_deltas:
    runs_level = pd.concat([
        gbai.sweep(betting_instances, [spec for spec in betting_variants.values() if spec != "betting:arm_test=none"],
                   n_runs=n_runs, delta=level, seed=seed, reward="bernoulli", max_samples=ablation_budget,
                   workers=workers),
        gbai.sweep(betting_instances, ["betting:arm_test=none"], n_runs=min(n_runs, 20), delta=level, seed=seed,
                   reward="bernoulli", max_samples=no_stop_budget, workers=workers)], ignore_index=True)
    for row in gbai.summarize(runs_level).itertuples():
        limit = gbai.stored_limit(betting_instances[row.instance], level, "bernoulli")
        rows.append({"delta": level, "instance": row.instance, "algorithm": row.algorithm,
                     "ratio_to_T_star_kl": row.mean_samples / limit, "unstopped": row.unstopped,
                     "error_rate": row.error_rate})
betting_ablation = pd.DataFrame(rows)
betting_ablation["variant"] = betting_ablation["algorithm"].map(
    {gbai.resolve(spec).spec: label for label, spec in betting_variants.items()})
# A variant whose runs hit the budget has no meaningful mean: show the share that did not stop.
betting_ablation["shown"] = [f"{r:.2f}" if u == 0 else f"no stop ({u:.0%})"
                             for r, u in zip(betting_ablation["ratio_to_T_star_kl"], betting_ablation["unstopped"])]
betting_ablation.pivot(index="variant", columns=["delta", "instance"], values="shown").loc[list(betting_variants)]

# %%
fig, axes = plt.subplots(1, len(ablation_deltas), figsize=(8.4, 4.4), sharey=True, squeeze=False)
stopped_variants = [label for label in betting_variants if label != "no arm test"]
for ax, level in zip(axes.flat, ablation_deltas):
    stopped_rows = betting_ablation[(betting_ablation["delta"] == level) & (betting_ablation["unstopped"] == 0)]
    bars = stopped_rows.pivot(index="variant", columns="instance", values="ratio_to_T_star_kl")
    colors = plot_grouped_bars(ax, bars, stopped_variants, list(betting_instances))
    ax.axhline(1.0, color="black", linestyle=":")
    ax.set_title(f"δ = {level:g}, Bernoulli rewards", fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
axes.flat[0].set_ylabel(r"mean samples / $T^\star\,\mathrm{kl}(\delta, 1-\delta)$")
handles = [plt.Rectangle((0, 0), 1, 1, color=colors[label]) for label in stopped_variants]
fig.tight_layout(rect=(0, 0.1, 1, 1))
fig.legend(handles, stopped_variants, loc="lower center", ncol=2, fontsize=9, frameon=False)
savefig(fig, "beyond_betting_ablation", data=betting_ablation.drop(columns="shown"))
plt.show()

# %% [markdown]
# **Figure.** The ablation of Betting-GBAI: mean samples divided by the limit for each
# variant that stopped, at two values of $\delta$ on Bernoulli rewards (log scale; the
# dotted line is the limit).

# %% [markdown]
# **Reading the ablation.** Each ingredient pays where the instance needs it. The
# arm test is indispensable: without it a feasible competitor is dismissed only by
# an erring test, so no run stopped on these instances, all of which have at least
# two feasible arms. Betting on each attribute's difference rather than on the
# average pays most on experiment 1 at $x = 0.35$, where the answer leads arms 3
# and 4 by 0.2 and the average form's bets are capped below the best one; where the
# arms are close (experiments 2 and 3) the best bet is small and the two forms are
# within a few per cent. Splitting $\delta$ over the $N + M - 1$ tests that can err
# together instead of all $2NM + N(N-1)$ saves more at the larger $\delta$: the
# union costs $\ln$ of the number of tests once, which matters less as
# $\ln(1/\delta)$ grows. Sampling is the largest ingredient: sampling every pair
# every round costs several times more, the most where one pair decides the run
# (experiment 1), as the allocation $w^\star$ of notebook 2 predicts.

# %%
ratio = betting_ablation.pivot_table(index="variant", columns=["delta", "instance"], values="ratio_to_T_star_kl")
unstopped = betting_ablation.pivot_table(index="variant", columns=["delta", "instance"], values="unstopped")
print(f"no arm test: {unstopped.loc['no arm test'].mean():.0%} of its runs hit the sample budget")
print("Samples of each variant over those of Betting-GBAI:")
for label in ["arm test on the average", "delta split over every test", "uniform sampling"]:
    cost = ratio.loc[label] / ratio.loc["Betting-GBAI"]
    for level in ablation_deltas:
        print(f"   {label}, delta = {level:g}: " + ", ".join(f"{value:.2f} on {instance}"
                                                          for instance, value in cost[level].items()))

# %% [markdown]
# ## 6. Empirical error rates
#
# Every run of section 4 is checked against the true answer (among the runs that
# stopped; the share that hit the sample budget is shown beside it), and
# Betting-GBAI runs more often on two instances: a feasible one, and one whose
# highest-mean arm is infeasible, with the exact (Clopper-Pearson) 95% upper
# confidence limit on the error probability.

# %%
bet = summary[summary["algorithm"] == "betting"]
print(f"Betting-GBAI, section 4: largest error rate among stopped runs {bet['error_rate'].max():.4f} "
      f"(delta = {delta}); runs that hit the sample budget: {bet['unstopped_runs'].sum()} of {bet['runs'].sum()}")
rates = error_check("betting", n_runs=n_runs_error, delta=delta, seed=seed, workers=workers)
print(f"{rates['errors'].sum()} wrong answers in {rates['stopped'].sum()} stopped runs")
rates.round(4)

# %% [markdown]
# Betting-GBAI comes closest to the limit, yet its error rates sit as far below
# $\delta$ as the other algorithms': Ville's inequality covers the worst reward law
# with a true null, while a test whose null holds strictly (a mean strictly on one
# side) loses capital on average, and the union of section 2 counts every event
# that could lead to an error.
#
# ## 7. The recommended algorithm: sampling that never reads δ
#
# The sampling rule of section 3 looks at the level $c = \ln((N + M - 1)/\delta)$
# twice: it serves only alternatives not yet rejected at $c$, and it sends a
# competitor to the route with fewer samples still needed to reach $c$. So a run
# depends on $\delta$ before it stops, and each $\delta$ needs its own run. The
# option `sampling=level-free` reads neither:
#
# * while some alternative has no evidence yet (a log e-value at most 0), it serves
#   the smallest plug-in statistic $Z$ plus the log of its samples among all
#   alternatives, as section 3 does early in a run;
# * afterwards it serves only the alternatives whose log e-value is the smallest: the
#   one the stopping rule waits for, whatever the level;
# * it sends a competitor to the route that gains more per sample by the plug-in
#   rates, the choice of section 3 when the level is far.
#
# The stopping rule and the argument of section 2 are unchanged (they hold for any
# sampling rule), and now two runs with the same rewards at two values of $\delta$
# take the same samples until the larger one stops. `gbai.run_deltas` and `gbai.sweep` given
# a list of deltas therefore play each seed once, record where each $\delta$ stops,
# and end at the smallest; each recorded run is the run at that $\delta$ alone (the
# book page "Why the recommended algorithm is δ-correct" gives the argument, and the
# test suite checks it run for run). This variant is the package's recommended
# algorithm, `gbai.RECOMMENDED`. Below, on the instances of section 5 with Bernoulli
# rewards, one sweep over a list of deltas runs it in one pass and Betting-GBAI once
# per delta, on the same seeds; each row compares the two run by run.

# %%
recommended = gbai.RECOMMENDED
table_deltas = gbai.sweep(betting_instances, [recommended, "betting"], n_runs=n_runs, delta=recommended_deltas,
                          seed=seed, reward="bernoulli", workers=workers)
rows = []
for level in recommended_deltas:
    comparison = gbai.paired_comparison(table_deltas[table_deltas["delta"] == level], recommended, ["betting"])
    rows.append(comparison.assign(delta=level))
level_free = pd.concat(rows, ignore_index=True)
level_free[["delta", "instance", "ratio", "difference", "ci95_low", "ci95_high", "verdict"]]

# %%
verdicts = level_free["verdict"].value_counts()
print(f"{recommended} against betting, {len(level_free)} (delta, instance) points of {n_runs} paired runs: "
      f"fewer samples at {verdicts.get('fewer', 0)}, more at {verdicts.get('more', 0)}, "
      f"no difference at 95% at {verdicts.get('undecided', 0)}; ratios of mean samples "
      f"{level_free['ratio'].min():.3f} to {level_free['ratio'].max():.3f}")
wrong = table_deltas[table_deltas["algorithm"] == recommended]["error"].sum()
print(f"wrong answers of {recommended} in these runs: {wrong}")
record_range("recommended.over-betting", level_free["ratio"], fmt=".3f",
             description="the recommended algorithm's mean samples over Betting-GBAI's, section 7's points")

# %% [markdown]
# **Reading the comparison.** Once every alternative has some evidence, the
# alternative with the smallest log e-value is the one section 3 serves too (it is
# below the level while the run goes on), so the two rules mostly take the same
# samples; they differ early in a run and in the route chosen for a competitor that
# has two. The ratios printed above measure what reading the level buys on these
# instances. Not reading it costs nothing in correctness and lets a single run
# serve every $\delta$ of a study, which is how notebooks 11 and 13 sweep $\delta$.
# Notebook 13 measures it against the best proven algorithms of plain best-arm
# identification and against the limit on every paper instance.
#
# ## Exercises
#
# **Exercise 1** (2 points: 1 automatic, 1 for the written answer). A pair with
# rewards $0.9, 0.2, 0.7, 0.8, 0.6, 0.5, 0.9, 0.4$ is tested against the threshold
# $\mu_{TH} = 0.3$ with the *above* test of section 1: the uniform mixture of the 20
# bets $\lambda_g = \rho_g/\mu_{TH}$, $\rho_g = 0.95/1.33^g$. Compute the log of the
# mixture capital after these eight rewards (`log_e_value`). Would the test reject at
# the level $c$ of an instance with $N = M = 5$ at $\delta = 0.1$?

# %% nbgrader={"grade": false, "grade_id": "nb12_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
rewards = np.array([0.9, 0.2, 0.7, 0.8, 0.6, 0.5, 0.9, 0.4])
bets = 0.95 / 1.33 ** np.arange(20) / 0.3
log_capital = np.log1p(np.outer(rewards - 0.3, bets)).sum(axis=0)
log_e_value = float(np.log(np.mean(np.exp(log_capital))))
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb12_ex1_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
assert isinstance(log_e_value, (int, float, np.integer, np.floating)), "log_e_value should be a number"
assert np.isfinite(log_e_value), "the log of a capital is a finite number"
### BEGIN HIDDEN TESTS
# The mixture computed in closed form elsewhere; 1e-9 is the precision it is quoted to.
assert abs(log_e_value - 2.641430340582807) < 1e-9, "log_e_value is not the log of the mixture capital"
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 1, written answer** (1 point). Would the test reject at that level? Give
# the level and compare.

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb12_ex1_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# No. With the union of section 2 the level is $c = \ln((N + M - 1)/\delta) = \ln 90
# \approx 4.50$, and the log e-value after these eight rewards is about 2.64: the
# evidence that the mean is above 0.3 is real but not yet strong enough.

# %% [markdown]
# **Exercise 2** (2 points). For an instance with $N = M = 5$ at $\delta = 0.1$,
# compute the level $c$ every test must reach with the union of section 2
# (`level_structured`) and with $\delta$ split over every test (`level_every`). Their
# difference is the number of nats each test needs in addition with the second.

# %% nbgrader={"grade": false, "grade_id": "nb12_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
N, M = 5, 5
level_structured = np.log((N + M - 1) / 0.1)
level_every = np.log((2 * N * M + N * (N - 1)) / 0.1)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb12_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
for level in (level_structured, level_every):
    assert isinstance(level, (int, float, np.integer, np.floating)), "both levels should be numbers"
    assert np.isfinite(level) and level > 0, "a level ln(k / delta) is positive here"
assert level_every > level_structured, "splitting delta over more tests must raise the level"
### BEGIN HIDDEN TESTS
# Logarithms of exact integers over delta: equal up to rounding.
assert abs(level_structured - np.log(90)) < 1e-12, "level_structured does not count the tests of section 2"
assert abs(level_every - np.log(700)) < 1e-12, "level_every does not count every test"
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 3** (3 points: 2 automatic, 1 for the written answer). Using
# `betting_ablation`, find the instance where sampling every pair every round costs
# the most, relative to Betting-GBAI, at $\delta = 0.1$, and store its label in
# `costliest_uniform`. Look at its $w^\star$ in notebook 2: why there?

# %% nbgrader={"grade": false, "grade_id": "nb12_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
at_01 = betting_ablation[betting_ablation["delta"] == 0.1].pivot(index="instance", columns="variant",
                                                                 values="ratio_to_T_star_kl")
costliest_uniform = (at_01["uniform sampling"] / at_01["Betting-GBAI"]).idxmax()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb12_ex3_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert costliest_uniform in set(betting_instances), "costliest_uniform should be a label of betting_instances"
### BEGIN HIDDEN TESTS
check_rows = betting_ablation[betting_ablation["delta"] == 0.1].set_index(["variant", "instance"])["ratio_to_T_star_kl"]
costs = {i: check_rows[("uniform sampling", i)] / check_rows[("Betting-GBAI", i)] for i in betting_instances}
assert costliest_uniform == max(costs, key=costs.get), "uniform sampling costs more, relatively, on another instance"
### END HIDDEN TESTS
print("Exercise 3: checks passed")

# %% [markdown]
# **Exercise 3, written answer** (1 point). Why does uniform sampling cost most on that
# instance? Use its $w^\star$.

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb12_ex3_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# Experiment 1 at $x = 0.35$: there about 14 times the samples. Its $w^\star$ puts
# nearly all the effort on one pair, attribute 0 of the answer, only 0.05 above the
# threshold, because showing that the answer is feasible is what decides the run.
# Uniform sampling spreads every round over all 25 pairs, most of them settled early,
# so nearly all its samples are wasted; where $w^\star$ is spread over several pairs,
# uniform sampling wastes less.
