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
# # 11. LMA-GLR and the limit: tracking w*, stopping on the GLR
#
# The paper bounds the samples of any $\delta$-correct algorithm from below with its
# hardness index (Theorem 1); notebook 2 computed the exact limit instead, the
# characteristic time $T^\star(\mu)$ of Garivier and Kaufmann (2016): every
# $\delta$-correct algorithm needs at least $T^\star(\mu)\,\mathrm{kl}(\delta,
# 1-\delta)$ samples in expectation, about $T^\star(\mu)\ln(1/\delta)$ for small
# $\delta$. Algorithms that reach it asymptotically sample in the proportions
# $w^\star(\mu)$ and stop with a generalised likelihood ratio (GLR) test, as
# Track-and-Stop does (Garivier and Kaufmann 2016). LMA-GLR applies this recipe to
# grouped bandits with a threshold: it learns $w^\star$ online by lazy mirror
# ascent (Ménard 2019) and stops when a mixture of likelihood ratios, built on the
# estimator of Krichevsky and Trofimov (1981), rejects every alternative of notebook 2.
#
# Section 1 states the two time-uniform tools that CSS-LUCB+ (notebook 10) and
# LMA-GLR rest on; section 2 derives LMA-GLR's stopping rule
# and why it is $\delta$-correct; sections 3 and 4 run it on the paper's
# experiments; section 5 measures how every algorithm of notebooks 10 to 12
# approaches the limit as $\delta \to 0$, for Bernoulli and for Beta rewards.

# %% tags=["parameters"]
from gbai import PAPER_DELTA
n_runs = 300  # runs per point (paired seeds: run r uses the same rewards for every algorithm)
delta = PAPER_DELTA  # the paper's confidence level
seed = 2024  # the seed of notebooks 4-8, so the CSS-LUCB runs come from the cache
workers = None  # processes for the sweeps (None: all cores)
quick = False  # True: a small, fast configuration (used by the tests)
n_runs_error = 1000  # runs for the error-rate check on two instances
deltas = [1e-1, 1e-3, 1e-6, 1e-10]  # for the asymptotic comparison

# %%
if quick:
    n_runs, n_runs_error = 6, 20

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gbai
from gbai.plotting import ALGORITHM_STYLES, readable_number, savefig
from gbai.studies import error_check, every_experiment, record, record_range

pd.set_option("display.float_format", readable_number)  # tables show 2,859,987 and 1e-10

ALGORITHMS = ["css-lucb", "css-lucb-plus", "lma-glr", "betting"]
TITLES = gbai.EXPERIMENT_TITLES

# %% [markdown]
# ## 1. Two time-uniform tools
#
# Both tools below control a process *at every time at once*, so they hold at a
# stopping time chosen by the algorithm. Both rest on Ville's inequality: a
# nonnegative supermartingale $(Z_t)$ with $Z_0 = 1$ ever reaches $1/\alpha$ with
# probability at most $\alpha$.
#
# ### Howard et al. (2021): stitched boundaries
#
# A process $S_t$ is *sub-$\psi$* with variance process $V_t$ when
# $\exp(\lambda S_t - \psi(\lambda) V_t)$ is bounded by a nonnegative
# supermartingale for every $\lambda$ in a range; $\psi(\lambda) = \lambda^2/2$ is
# the sub-Gaussian case, and the sub-exponential case adds a scale $c \ge 0$
# ($c = 0$ is sub-Gaussian). Howard et al. (2021, Theorem 1, with the boundary of
# their eq. (10)) show that for $\eta > 1$, $s > 1$, $m > 0$ and $\alpha \in (0, 1)$,
#
# $$\Pr\bigl(\exists t:\ S_t \ge u_\alpha(\max(V_t, m))\bigr) \le \alpha, \qquad
#   u_\alpha(v) = \sqrt{k_1^2\, v\, \ell(v) + (k_2\, c\, \ell(v))^2} + k_2\, c\, \ell(v),$$
#
# $$\ell(v) = s \ln\ln\frac{\eta v}{m} + \ln\frac{\zeta(s)}{\alpha (\ln \eta)^s}, \qquad
#   k_1 = \frac{\eta^{1/4} + \eta^{-1/4}}{\sqrt 2}, \qquad k_2 = \frac{\sqrt\eta + 1}{2}.$$
#
# The idea: cut the intrinsic time $v$ into geometric epochs $[m\eta^k, m\eta^{k+1})$;
# in epoch $k$ a single exponential supermartingale, tuned to that epoch, crosses
# a straight line with probability at most $\alpha_k = \alpha / (\zeta(s) (k+1)^s)$
# (Ville), and the $\alpha_k$ add up to $\alpha$ because $\sum_k (k+1)^{-s} = \zeta(s)$.
# The boundary $u_\alpha$ lies above every epoch's line in its epoch; the
# $s\ln\ln$ term is the price of the epoch index $k \approx \log_\eta(v/m)$. We use
# the authors' defaults $\eta = 2$, $s = 1.4$, for which the boundary is close to
# their simplified form $1.7\sqrt{v(\ln\ln(2v) + 0.72\ln(5.2/\alpha))}$ when
# $c = 0$ and $m = 1$. Evaluated at $\max(V_t, m)$, as in their Theorem 1, it holds
# from the first sample on: while $V_t < m$ it is held at $u_\alpha(m)$.
#
# For rewards in $[0, 1]$ with mean $\mu$, the centred sum
# $S_t = \sum_{k \le t}(X_k - \mu)$ is sub-Gaussian with $V_t = t/4$ (Hoeffding's
# lemma), and an average of $M$ independent attributes with $V_t = t/(4M)$
# (notebook 10, section 2). It is also sub-exponential with scale $c = 1$ and the
# empirical variance process $\hat V_t = \sum_{k \le t}(X_k - \hat X_{k-1})^2$,
# for any predictable centre $\hat X_{k-1}$ in $[0, 1]$ (Howard et al. 2021,
# Theorem 4): the empirical-Bernstein bound of CSS-LUCB+.
#
# ### Krichevsky and Trofimov (1981): mixtures of likelihood ratios
#
# Take one pair with $n$ rewards in $[0, 1]$ summing to $s$, and write
# $L(p) = p^s (1-p)^{n-s}$: the Bernoulli likelihood of a mean $p$, a formula that
# makes sense for any rewards in $[0, 1]$. If the rewards have mean $\mu$ (any law
# on $[0, 1]$), each reward $x$ multiplies $L(p)/L(\mu)$ by
# $r(x) = \frac{1-p}{1-\mu}\exp\bigl(x\ln\frac{p(1-\mu)}{\mu(1-p)}\bigr)$, a convex
# function of $x$, which therefore lies below its chord on $[0, 1]$:
#
# $$\mathbb{E}\, r(X) \le (1-\mu)\,\frac{1-p}{1-\mu} + \mu\,\frac{p}{\mu} = 1 .$$
#
# So $L(p)/L(\mu)$ is a nonnegative supermartingale (a martingale for Bernoulli
# rewards) whatever the sampling rule, since the pair's next reward is a fresh draw
# whichever pair is chosen; so is an average of such ratios over a prior on $p$ fixed
# in advance, and a product of them over different pairs, because a sample moves one
# factor only. The Krichevsky-Trofimov (KT) mixture averages over the arcsine prior
# $\mathrm{Beta}(1/2, 1/2)$:
#
# $$\mathrm{KT}(s, n) = \int_0^1 L(p)\,\frac{dp}{\pi\sqrt{p(1-p)}} = \frac{B(s + \frac12, n - s + \frac12)}{B(\frac12, \frac12)},
#   \qquad R(s, n) = \ln\frac{\max_p L(p)}{\mathrm{KT}(s, n)} \ge 0 .$$
#
# The *KT regret* $R$ is what the mixture loses to the best fit, about
# $\frac12\ln n$ (at most $\frac12\ln n + \ln 2$; the book page on proven stops
# proves it for the fractional sums of rewards in $[0, 1]$). A one-sided test of
# $\mu \le \mu_{TH}$ restricts the prior to $(\mu_{TH}, 1)$ and renormalises it:
#
# $$E^{+} = \frac{\int_{\mu_{TH}}^1 L(p)\,\pi(dp) \,/\, \pi((\mu_{TH}, 1))}{\max_{p \le \mu_{TH}} L(p)}, \qquad
#   \ln E^{+} = n\, d(\hat\mu, \mu_{TH})\,\mathbb{1}\{\hat\mu > \mu_{TH}\} - R(s, n) + \ln\frac{P_{\mathrm{post}}(p > \mu_{TH})}{\pi((\mu_{TH}, 1))},$$
#
# with $\pi$ the arcsine prior and $P_{\mathrm{post}}$ its posterior
# $\mathrm{Beta}(s + \frac12, n - s + \frac12)$. If $\mu \le \mu_{TH}$ the denominator
# is at least $L(\mu)$, so $E^{+}$ is at most a mixture of ratios $L(p)/L(\mu)$: a
# test with a valid level whose numerator ignores means it has no use for, which
# gains up to $-\ln \pi((\mu_{TH}, 1))$ nats over the two-sided mixture. $E^{-}$, the
# test of $\mu \ge \mu_{TH}$, is its mirror image. Mixtures pay for the unknown means
# only what the data at hand cost, where a threshold on the GLR alone (such as
# Kaufmann and Koolen's (2021) calibration) must cover every value the counts could
# take.
#
# ## 2. LMA-GLR
#
# **The alternatives and their tests.** Let $\hat\mu$ be the empirical means, $N_p$
# the counts, $s_p = N_p \hat\mu_p$ the reward sums and $a$ the answer of $\hat\mu$.
# Notebook 2 split the instances whose answer differs from $a$ into closed sets, one
# per way of being wrong, each moving only a few pairs. LMA-GLR gives each a test
# whose logarithm must exceed the same level $\ln(N/\delta)$:
#
# * (A) for each attribute $j$ of $a$, $\lambda_{aj} \le \mu_{TH}$: the one-sided
#   mixture $E^{+}_{aj}$ of the pair $(a, j)$;
# * (B) for each arm $b \ne a$, "$b$ is feasible and its mean is at least $a$'s": the
#   product of the KT mixtures of the $2M$ pairs of arms $a$ and $b$ over the largest
#   likelihood under (B),
#
#   $$\ln E^{B}_{b} = \ln\frac{\prod_{p \in S}\mathrm{KT}(s_p, N_p)}{\max_{\lambda \in (B)}\prod_{p \in S} L_p(\lambda_p)}
#     = \mathrm{GLR}_{b} - \sum_{p \in S} R(s_p, N_p),$$
#
#   where $S$ holds the $2M$ pairs and $\mathrm{GLR}_b = \inf_{\lambda \in (B)}
#   \sum_p N_p\, d(\hat\mu_p, \lambda_p)$ is the best response of notebook 2 with the
#   counts as weights (`gbai.alternative_values`); or else the feasibility test of
#   $b$ below;
# * (C) when $a$ is "infeasible", for each arm $b$, "$b$ is feasible": the feasibility
#   test $F_b = \frac1M \sum_j E^{-}_{bj}$, the average of the one-sided tests of
#   $\mu_{bj} \ge \mu_{TH}$ over $b$'s attributes (it loses at most $\ln M$ to the best
#   of them, and needs only one attribute below the threshold).
#
# LMA-GLR stops with the answer $a$ when every alternative of $a$ is rejected: each
# (A) by $\ln E^{+}_{aj} > \ln(N/\delta)$, each (B) by $\ln E^{B}_b$ or $\ln F_b$ above
# $\ln(N/\delta)$, each (C) by $\ln F_b > \ln(N/\delta)$.
#
# **Why it is $\delta$-correct: $N$ events fixed by the truth.** Each test is, under
# its own null hypothesis, at most a nonnegative supermartingale that starts at 1
# (section 1): when the true means $\mu$ lie in (B) for the pair $(a, b)$, the
# denominator of $E^{B}_b$ is at least the likelihood of $\mu$, so $E^{B}_b$ is at most
# the product of the $2M$ ratios $\mathrm{KT}/L(\mu_p)$; $E^{+}_{aj}$ when
# $\mu_{aj} \le \mu_{TH}$ and $F_b$ when every $\mu_{bj} \ge \mu_{TH}$ likewise. By
# Ville's inequality each one ever exceeds $N/\delta$ with probability at most
# $\delta/N$. Now let $a^\star$ be the true answer and suppose the run stops with a
# wrong one. The events that can cause it are fixed by $\mu$ before any sample:
#
# * a truly infeasible arm $a$ was answered: its (A) test for its first attribute
#   below the threshold, $E^{+}_{a j(a)}$, crossed;
# * a feasible arm $a \ne a^\star$ was answered: its (B) alternative for
#   $b = a^\star$ was rejected, so $E^{B}_{a^\star}$ (for the pair $a, a^\star$) or
#   $F_{a^\star}$ crossed;
# * "infeasible" was answered although $a^\star$ exists: (C) for $b = a^\star$, so
#   $F_{a^\star}$ crossed.
#
# That is one event per arm other than $a^\star$ plus the single event $F_{a^\star}$,
# or one per arm when the instance is infeasible: at most $N$ events of probability
# at most $\delta/N$ each, so the error probability is at most $\delta$, for every
# reward law on $[0, 1]$ and every sampling rule. Every pair is sampled once before
# the first test. The book page "Proven stops for plain best-arm identification"
# makes the same argument for the references of plain best-arm identification.
#
# **Sampling: learning $w^\star$ online.** $1/T^\star(\mu) = \max_w \min_{\lambda \in
# \mathrm{Alt}(\mu)} \sum_p w_p\, d(\mu_p, \lambda_p)$ is a game between an allocation
# $w$ and an alternative $\lambda$ (notebook 2). Ménard (2019) plays it online:
# an exponential-weights learner over the $NM$ pairs chooses $w$, and its gain
# vector is $g_p = d(\hat\mu_p, \lambda_p)$ at the best response $\lambda$ to $w$, a
# supergradient of the concave inner minimum. LMA-GLR sets the learner's rate with
# AdaHedge (de Rooij et al. 2014), so nothing needs tuning; mixes in the uniform
# allocation with weight $\varepsilon = 1/(2\sqrt{(NM)^2 + n})$ per pair after $n$
# samples, so that every pair keeps being sampled and $\hat\mu \to \mu$; and samples
# the pair whose count lags most behind the cumulated allocations (C-tracking,
# Garivier and Kaufmann 2016). The learner is updated, and the stopping rule
# checked, each time the sample count has grown by 1%, which costs at most about 1%
# extra samples. As the empirical allocation approaches $w^\star(\mu)$, the GLR grows
# like $n/T^\star(\mu)$ while the level grows like $\ln(1/\delta)$ and the KT regrets
# only like $\ln n$, which is why the rule is designed to stop after about
# $T^\star(\mu)\ln(1/\delta)$ samples as $\delta \to 0$. The sampling rule plays no
# part in the correctness argument above.
#
# ## 3. Every paper experiment, at the paper's δ = 0.1
#
# LMA-GLR on every instance of experiments 1 to 3 and of the varying tables,
# beside CSS-LUCB and CSS-LUCB+ (notebook 10, same seeds), against the limit for
# the Beta rewards of the experiments. On the varying tables the three sizes are
# pooled along the x axis by their limit.

# %%
study = every_experiment(["css-lucb", "css-lucb-plus", "lma-glr"], n_runs=n_runs, delta=delta, seed=seed,
                         workers=workers)
summary = study.summary
fig = study.draw("beyond_lma_glr")
plt.show()

# %% [markdown]
# **Figure.** CSS-LUCB, CSS-LUCB+ and LMA-GLR against the limit on every paper
# experiment, drawn as the CSS-LUCB+ figure of notebook 10.

# %%
table = study.ratios({"CSS-LUCB / LMA-GLR": ("css-lucb", "lma-glr"), "LMA-GLR / CSS-LUCB+": ("lma-glr", "css-lucb-plus"),
                      "LMA-GLR / limit": ("lma-glr", "limit")})
table.round(2)

# %% [markdown]
# **What we measured.** At $\delta = 0.1$ LMA-GLR needs fewer samples than CSS-LUCB
# on every paper instance, but more than CSS-LUCB+ on these Beta rewards. Its tests
# are built for the worst reward law on $[0, 1]$ with the given means, the Bernoulli
# law, and each pays the KT regret, about $\frac12\ln N_p$, of every pair it involves
# (up to $2M$ of them), which is large next to $\ln(N/\delta)$ when $\delta$ is large;
# CSS-LUCB+'s empirical-Bernstein bounds profit from the small variance of the Beta
# rewards. Its strength is asymptotic (section 5).

# %%
gain = table["CSS-LUCB / LMA-GLR"]
print(f"LMA-GLR needs {gain.min():.1f} to {gain.max():.1f} times fewer samples than CSS-LUCB, and "
      f"{table['LMA-GLR / CSS-LUCB+'].min():.1f} to {table['LMA-GLR / CSS-LUCB+'].max():.1f} times more than CSS-LUCB+")
print(f"LMA-GLR needs {table['LMA-GLR / limit'].min():.0f} to {table['LMA-GLR / limit'].max():.0f} times the limit "
      f"of the Beta rewards")
for name, values in gain.groupby(level="experiment", sort=False):
    print(f"   {TITLES[name]:<21} {values.min():.1f} to {values.max():.1f} times fewer than CSS-LUCB")
record_range("lma-glr.gain", gain, fmt=".2r", figure="beyond_lma_glr",
             description="CSS-LUCB's mean samples over LMA-GLR's, paper instances, δ = 0.1, same seeds")
record_range("lma-glr.over-limit", table["LMA-GLR / limit"], fmt=".2r", figure="beyond_lma_glr",
             description="LMA-GLR's mean samples over T*·kl(δ, 1−δ) with K_inf, paper instances, δ = 0.1")

# %% [markdown]
# ## 4. Empirical error rates
#
# Every run of section 3 is checked against the true answer (among the runs that
# stopped; the share that hit the sample budget is shown beside it), and LMA-GLR
# runs more often on two instances: a feasible one, and one whose highest-mean arm
# is infeasible, with the exact (Clopper-Pearson) 95% upper confidence limit on the
# error probability.

# %%
lma = summary[summary["algorithm"] == "lma-glr"]
print(f"LMA-GLR, section 3: largest error rate among stopped runs {lma['error_rate'].max():.4f} "
      f"(delta = {delta}); runs that hit the sample budget: {lma['unstopped_runs'].sum()} of {lma['runs'].sum()}")
rates = error_check("lma-glr", n_runs=n_runs_error, delta=delta, seed=seed, workers=workers)
print(f"{rates['errors'].sum()} wrong answers in {rates['stopped'].sum()} stopped runs")
rates.round(4)

# %% [markdown]
# As for every algorithm here, the guarantee covers the worst reward law on
# $[0, 1]$, so the observed error rates sit far below $\delta$.
#
# ## 5. Asymptotics: the ratio to T*·kl(δ, 1−δ) as δ → 0
#
# An asymptotically optimal algorithm needs $T^\star\ln(1/\delta)(1 + o(1))$
# samples: its ratio to $T^\star\mathrm{kl}(\delta, 1-\delta)$ must fall towards 1.
# Each reward model has its own limit: $T^\star$ with the Bernoulli divergence for
# Bernoulli rewards, and with $K_{\inf}$ of the Beta laws for Beta rewards
# (notebook 2; `gbai.matching_divergence`). No $\delta$-correct algorithm can go
# below either asymptotically. We show both reward models, for CSS-LUCB, CSS-LUCB+
# (notebook 10), LMA-GLR and Betting-GBAI (notebook 12).
#
# LMA-GLR's sampling never looks at $\delta$: its learner and its tracking see only
# the samples, and it checks its stopping rule at sample counts fixed in advance.
# Two runs with the same rewards at two values of $\delta$ are therefore the same run
# until the larger $\delta$ stops. So `gbai.sweep(..., delta=deltas)` plays each seed
# once for the whole list, records where each $\delta$ would have stopped and ends at
# the smallest; each recorded run is exactly the run at that $\delta$ alone (the book
# page "Why the recommended algorithm is δ-correct", section 6, gives the argument;
# the test suite checks it run for run). The other three algorithms read $\delta$
# while sampling and run once per $\delta$.

# %%
asymptotic_instances = {inst.label: inst for inst in [
    gbai.paper_instance("exp1", 0.35), gbai.paper_instance("exp3", 0.3), gbai.paper_instance("vary-n", 0.42, 4)]}
asymptotic_runs = max(n_runs // 2, 6)
rows = []
t_star = {(label, reward): gbai.characteristic_time(instance, gbai.matching_divergence(reward)).T_star
          for label, instance in asymptotic_instances.items() for reward in ("bernoulli", "beta")}
for reward in ("bernoulli", "beta"):
    # One sweep over the list of deltas: LMA-GLR's sampling never reads delta, so each
    # of its seeds is played once for all four; the other algorithms run once per delta.
    table_deltas = gbai.sweep(asymptotic_instances, ALGORITHMS, n_runs=asymptotic_runs, delta=deltas,
                              seed=seed, reward=reward, workers=workers)
    for level in deltas:
        table_delta = table_deltas[table_deltas["delta"] == level]
        for (label, algorithm), group in table_delta.groupby(["instance", "algorithm"]):
            kl = gbai.kl_bernoulli(level, 1 - level)
            mean = group["samples"].mean()
            rows.append({"reward": reward, "delta": level, "instance": label, "algorithm": algorithm,
                         "mean_samples": mean, "ratio_to_T_star_kl": mean / (t_star[label, reward] * kl),
                         "ratio_to_bernoulli": mean / (t_star[label, "bernoulli"] * kl),
                         "error_rate": group["error"].sum() / group["stopped"].sum() if group["stopped"].any() else np.nan,
                         "unstopped": 1 - group["stopped"].mean()})
asymptotics = pd.DataFrame(rows)
asymptotics.pivot_table(index=["reward", "instance", "algorithm"], columns="delta",
                        values="ratio_to_T_star_kl").round(2)

# %%
fig, axes = plt.subplots(1, 2, figsize=(8.4, 4.8), sharey=True)
line_styles = dict(zip(asymptotic_instances, ["-", "--", ":"]))
for ax, reward in zip(axes, ("bernoulli", "beta")):
    for (label, algorithm), group in asymptotics[asymptotics["reward"] == reward].groupby(["instance", "algorithm"]):
        style = ALGORITHM_STYLES[algorithm]
        ax.plot(np.log(1 / group["delta"]), group["ratio_to_T_star_kl"], color=style["color"],
                marker=style["marker"], markersize=4, linestyle=line_styles[label])
    ax.axhline(1.0, color="black", linestyle=":")
    ax.set_yscale("log")
    ax.set_xlabel(r"$\ln(1/\delta)$")
    ax.set_title(f"{reward.capitalize()} rewards", fontsize=10)
    ax.tick_params(labelsize=8)
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel(r"mean samples / $T^\star\,\mathrm{kl}(\delta, 1-\delta)$")
# Two legends below the panels: colours for the algorithms, line styles for the instances.
algorithm_handles = [plt.Line2D([], [], color=ALGORITHM_STYLES[a]["color"], marker=ALGORITHM_STYLES[a]["marker"],
                                label=ALGORITHM_STYLES[a]["label"]) for a in ALGORITHMS]
instance_handles = [plt.Line2D([], [], color="grey", linestyle=style, label=label)
                    for label, style in line_styles.items()]
fig.tight_layout(rect=(0, 0.14, 1, 1))
fig.legend(handles=algorithm_handles, loc="lower left", bbox_to_anchor=(0.08, 0.0), ncol=2, fontsize=9, frameon=False)
fig.legend(handles=instance_handles, loc="lower right", bbox_to_anchor=(0.98, 0.0), ncol=1, fontsize=9,
           frameon=False)
savefig(fig, "beyond_asymptotics", data=asymptotics)
plt.show()

# %% [markdown]
# **Figure.** Mean samples divided by the limit $T^\star\mathrm{kl}(\delta, 1-\delta)$
# as $\delta$ falls, for Bernoulli (left) and Beta (right) rewards: colours for the
# algorithms, line styles for the instances; the dotted line is the limit itself.

# %% [markdown]
# **What we measured.** For LMA-GLR the ratio falls steadily as $\delta$ shrinks,
# on every instance and for both reward models, as asymptotic optimality predicts,
# and is still falling at $\delta = 10^{-10}$. The approach is slowed by the KT
# regrets: each test pays about $\frac12\ln N_p$ for every pair it involves, up to
# $2M$ pairs, and that sum grows with the samples, so a single $\ln(N/\delta)$
# dominates it only for very small $\delta$. On Bernoulli rewards LMA-GLR overtakes
# CSS-LUCB+ as $\delta$ shrinks on two of the three instances (experiment 1's and
# the varying-N one), not on experiment 3's, where CSS-LUCB+ stays ahead. On Beta
# rewards CSS-LUCB+ stays ahead everywhere: its empirical-Bernstein bounds bring it within
# a small factor of the Bernoulli limit, which is still several times the $K_{\inf}$
# limit of those rewards (right panel), while LMA-GLR's Bernoulli likelihoods cannot
# see the small variance, so its ratio there can at best fall to the Bernoulli limit.
# CSS-LUCB+'s LUCB sampling does not follow $w^\star$, so it carries no
# asymptotic-optimality guarantee. CSS-LUCB's ratio falls too, because its
# $\ln t^4$ overhead weighs relatively less when $\ln(1/\delta)$ is large.
#
# Betting-GBAI (notebook 12) is the closest to the limit at every $\delta$ and for
# both reward models. Its tests pay $\ln((N+M-1)/\delta)$ plus the cost of not
# knowing the best bet (a uniform mixture of $G$ bets loses at most $\ln G$ nats to
# the best of them), instead of a KT regret for every pair, and the extra cost
# weighs less as $\ln(1/\delta)$ grows. On Beta rewards it tracks the
# $K_{\inf}$ limit about as closely as the Bernoulli limit on Bernoulli rewards,
# because a bet on the rewards themselves grows as fast as their law allows, not
# as fast as the worst law with the same mean.

# %%
ratio = asymptotics.pivot_table(index=["reward", "instance", "algorithm"], columns="delta",
                                values="ratio_to_T_star_kl")
largest, smallest = max(deltas), min(deltas)
steps = ratio.loc[(slice(None), slice(None), "lma-glr")]
falling = (np.diff(steps[sorted(deltas, reverse=True)].to_numpy(), axis=1) < 0).all(axis=1)
print(f"LMA-GLR's ratio falls at every step of delta on {falling.sum()} of {falling.size} (reward, instance) pairs")


def span(reward, algorithm, level, values=ratio):
    column = values.loc[(reward, slice(None), algorithm), level]
    return f"{column.min():.2f} to {column.max():.2f}"


for reward in ("bernoulli", "beta"):
    print(f"{reward.capitalize()} rewards, ratio to the matching limit at delta = {largest:g} -> {smallest:g}:")
    for algorithm in ALGORITHMS:
        print(f"   {ALGORITHM_STYLES[algorithm]['label']:<13} {span(reward, algorithm, largest):<17} -> "
              f"{span(reward, algorithm, smallest)}")
per_point = asymptotics.pivot_table(index=["reward", "instance", "delta"], columns="algorithm",
                                    values="ratio_to_T_star_kl")
print(f"CSS-LUCB+ below LMA-GLR at {(per_point['css-lucb-plus'] < per_point['lma-glr']).sum()} of {len(per_point)} "
      f"points; Betting-GBAI the lowest of the four at {(per_point.idxmin(axis=1) == 'betting').sum()} of "
      f"{len(per_point)}")
to_bernoulli = asymptotics.pivot_table(index=["reward", "instance", "algorithm"], columns="delta",
                                       values="ratio_to_bernoulli")
print(f"CSS-LUCB+ on Beta rewards at delta = {smallest:g}: {span('beta', 'css-lucb-plus', smallest, to_bernoulli)} "
      f"times the Bernoulli limit, {span('beta', 'css-lucb-plus', smallest)} times the K_inf limit")
record_range(f"asymptotics.beta.css-lucb-plus.bernoulli-at-{smallest:g}",
             to_bernoulli.loc[("beta", slice(None), "css-lucb-plus"), smallest], fmt=".2r", figure="beyond_asymptotics",
             description=f"CSS-LUCB+'s mean samples over the Bernoulli limit, Beta rewards, δ = {smallest:g}")
record("lma-glr.falling", int(falling.sum()), fmt="d", figure="beyond_asymptotics",
       description="(reward, instance) pairs where LMA-GLR's ratio to the limit falls at every step of δ")
record("lma-glr.falling-of", int(falling.size), fmt="d", description="(reward, instance) pairs of section 5")
for reward in ("bernoulli", "beta"):
    for algorithm in ALGORITHMS:
        for level in (largest, smallest):
            record_range(f"asymptotics.{reward}.{algorithm}.at-{level:g}", ratio.loc[(reward, slice(None), algorithm), level],
                         fmt=".2r", figure="beyond_asymptotics",
                         description=f"{algorithm}'s mean samples over the matching limit, {reward} rewards, δ = {level:g}")

# %% [markdown]
# ## Exercises
#
# **Exercise 1** (3 points: 2 automatic, 1 for the written answer). The GLR statistic
# of LMA-GLR is the best response evaluated at the sample counts. For a run of
# LMA-GLR on Table I stopped after 500 rounds of the step engine, compute it with
# `gbai.best_response` (store it in `glr`) and compare it with what the test of the
# cheapest alternative needs (section 2).

# %% nbgrader={"grade": false, "grade_id": "nb11_ex1_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
engine = gbai.StepEngine(gbai.table1_example(), gbai.LMAGLR(), delta=delta, seed=seed)
for _ in range(500):
    engine.step()
state = engine.state()
glr = gbai.best_response(state.means, state.threshold, state.counts).value
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb11_ex1_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(glr, (int, float, np.integer, np.floating)), "glr should be a number"
assert np.isfinite(glr) and glr >= 0, "a GLR statistic is a non-negative, finite number"
### BEGIN HIDDEN TESTS
replay = gbai.StepEngine(gbai.table1_example(), gbai.LMAGLR(), delta=delta, seed=seed)
for _ in range(500):
    replay.step()
after = replay.state()
values = gbai.alternative_values(after.means, after.threshold, after.counts)
# The same minimum evaluated twice: equal up to rounding.
assert abs(glr - values["value"].min()) < 1e-9 * max(1.0, glr), (
    "glr is not the best response at the means and counts after 500 rounds")
### END HIDDEN TESTS
print("Exercise 1: checks passed")

# %% [markdown]
# **Exercise 1, written answer** (1 point). How does `glr` compare with the threshold
# the cheapest alternative must exceed, and what does that say about the run?

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb11_ex1_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# The statistic is about 1.3 after some 500 samples; the cheapest alternative is the
# third arm overtaking the answer. Its test needs the GLR minus the KT regrets of the
# four pairs of the two arms to exceed $\ln(N/\delta) = \ln 30 \approx 3.4$ on
# Table I, and with 80 to 100 samples per pair each regret is about 2.4, so the GLR
# would have to exceed about 13 (the feasibility test of the third arm cannot help:
# both its attributes lie above the threshold). Not even the cheapest alternative
# is rejected: LMA-GLR keeps sampling, the run is far from stopping.

# %% [markdown]
# **Exercise 2** (3 points: 2 automatic, 1 for the written answer). Using
# `asymptotics`, compute for each reward model and instance the factor by which
# LMA-GLR's ratio to the limit falls from the largest to the smallest $\delta$ of
# `deltas`, and store the smallest of these factors in `slowest_fall`. Is LMA-GLR
# close to the limit at $\delta = 10^{-10}$?

# %% nbgrader={"grade": false, "grade_id": "nb11_ex2_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
lma_rows = asymptotics[asymptotics["algorithm"] == "lma-glr"]
by_delta = lma_rows.pivot_table(index=["reward", "instance"], columns="delta", values="ratio_to_T_star_kl")
slowest_fall = float((by_delta[max(deltas)] / by_delta[min(deltas)]).min())
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb11_ex2_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert isinstance(slowest_fall, (int, float, np.integer, np.floating)), "slowest_fall should be a number"
assert np.isfinite(slowest_fall) and slowest_fall > 0, "a ratio of two ratios is positive and finite"
### BEGIN HIDDEN TESTS
check_rows = asymptotics[asymptotics["algorithm"] == "lma-glr"].set_index(["reward", "instance", "delta"])
factors = [check_rows.loc[(r, i, max(deltas)), "ratio_to_T_star_kl"] / check_rows.loc[(r, i, min(deltas)),
                                                                                       "ratio_to_T_star_kl"]
           for r in ("bernoulli", "beta") for i in asymptotic_instances]
# The same ratios, taken in another order: equal up to rounding.
assert abs(slowest_fall - min(factors)) < 1e-9 * min(factors), (
    "slowest_fall is not the smallest fall of LMA-GLR's ratio over the (reward, instance) pairs")
assert slowest_fall > 1, "LMA-GLR's ratio should fall as delta shrinks"
### END HIDDEN TESTS
print("Exercise 2: checks passed")

# %% [markdown]
# **Exercise 2, written answer** (1 point). Is LMA-GLR close to the limit at
# $\delta = 10^{-10}$? Use the table of section 5.

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb11_ex2_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# Not yet. Its ratio falls steadily (at least about 5.7-fold from
# $\delta = 0.1$ to $10^{-10}$), as asymptotic optimality requires, but at $10^{-10}$
# it still needs about 2.0 to 3.4 times the limit on Bernoulli rewards and 5.9 to 12
# times on Beta rewards. The KT regrets of the pairs its tests involve, about
# $\frac12\ln N_p$ each for up to $2M$ pairs, are still comparable with
# $\ln(N/\delta) \approx 24$; and on Beta rewards its Bernoulli likelihoods aim at the
# Bernoulli limit, several times the $K_{\inf}$ limit.

# %% [markdown]
# **Exercise 3** (3 points: 2 automatic, 1 for the written answer). Write Howard et
# al.'s stitched boundary $u_\alpha(v)$ of section 1 for the sub-Gaussian case
# ($c = 0$, $\eta = 2$, $s = 1.4$, evaluated at $\max(v, m)$), and use it to compute
# the radius $u_\alpha(T/4)/T$ of a pair mean after $T = 1000$ rewards, with
# $m = 1/4$ and $\alpha = 0.005$ (`stitched_radius_1000`). Compare it with the
# paper's radius (eq. (3)) for the same pair at round $t = 1000$ of an instance with
# $N = M = 5$ at $\delta = 0.1$ (`paper_radius_1000`, with `gbai.confidence_radius`).
# Which is smaller, even though $\alpha$ is the share of $\delta$ a single pair side
# gets in CSS-LUCB+?

# %% nbgrader={"grade": false, "grade_id": "nb11_ex3_solution", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
### BEGIN SOLUTION
from scipy.special import zeta


def boundary(v, alpha, m, eta=2.0, s=1.4):
    v = max(v, m)
    k1 = (eta ** 0.25 + eta ** -0.25) / np.sqrt(2)
    ell = s * np.log(np.log(eta * v / m)) + np.log(zeta(s) / (alpha * np.log(eta) ** s))
    return np.sqrt(k1 ** 2 * v * ell)


stitched_radius_1000 = boundary(1000 / 4, 0.005, 0.25) / 1000
paper_radius_1000 = float(gbai.confidence_radius(1000, 1000, 25, 0.1))
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "nb11_ex3_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
for radius in (stitched_radius_1000, paper_radius_1000):
    assert isinstance(radius, (int, float, np.integer, np.floating)), "both radii should be numbers"
    assert np.isfinite(radius) and radius > 0, "a radius is positive and finite"
### BEGIN HIDDEN TESTS
# The boundary evaluated in closed form elsewhere; 1e-8 is the precision it is quoted to.
assert abs(stitched_radius_1000 - 0.0709963196) < 1e-8, "stitched_radius_1000 is not u(T/4)/T at T = 1000"
# Closed form of eq. (3): equal up to rounding.
assert abs(paper_radius_1000 - np.sqrt((np.log(4 * 25 / 0.1) + 4 * np.log(1000)) / 2000)) < 1e-12, (
    "paper_radius_1000 is not the paper's radius at t = T = 1000, N = M = 5, delta = 0.1")
### END HIDDEN TESTS
print("Exercise 3: checks passed")

# %% [markdown]
# **Exercise 3, written answer** (1 point). Which radius is smaller, and why, although
# $\alpha$ is a small share of $\delta$?

# %% [markdown] nbgrader={"grade": true, "grade_id": "nb11_ex3_answer", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# The stitched one: about 0.071 against 0.131. Both are close to
# $\sqrt{L/(2T)}$ for a logarithmic term $L$. The paper's is
# $\ln(4NMt^4/\delta) \approx 34.5$ at $t = 1000$: it pays for a union bound over every
# round, $4\ln t$. The stitched boundary pays $\ln(\zeta(s)/(\alpha\ln(\eta)^s)) \approx
# 6.9$ once, which already holds the price of the small $\alpha$ ($\ln(1/\alpha) \approx
# 5.3$), plus $s\ln\ln$ of the count, about 2.8: some 10 in all. Paying for time
# through an iterated logarithm instead of $4\ln t$ wins by far.
