"""Error rates of the paper's algorithms stay within what delta allows (fixed seeds)."""

import pytest
from scipy import stats

import gbai
from gbai import Instance

DELTA = 0.1
N_RUNS = 300
# If an algorithm's true error probability were exactly delta, the number of errors in
# N_RUNS independent runs would be Binomial(N_RUNS, delta); exceeding its 1 - 1e-4
# quantile (44 errors for 300 runs) then has probability below 1e-4. A rule whose
# error rate is really above delta (say 0.2, i.e. 60 errors on average) fails.
MAX_ERRORS = int(stats.binom.ppf(1 - 1e-4, N_RUNS, DELTA))

INSTANCES = {
    "easy (Table I)": gbai.table1_example(),
    "hard feasible (exp1 x=0.35)": gbai.paper_instance("exp1", 0.35),
    "risky arm (exp3 x=0.3)": gbai.paper_instance("exp3", 0.3),
    "infeasible": Instance([[0.25, 0.8, 0.6], [0.7, 0.2, 0.9], [0.27, 0.27, 0.9]], 0.3),
}


@pytest.mark.slow
@pytest.mark.parametrize("reward", ["beta", "bernoulli"])
def test_error_rates_within_delta(reward):
    table = gbai.sweep(
        INSTANCES,
        gbai.PAPER_ALGORITHMS,
        n_runs=N_RUNS,
        delta=DELTA,
        seed=99,
        reward=reward,
        workers=1,
        cache_dir=None,
        progress=False,
    )
    summary = gbai.summarize(table)
    assert (summary["runs"] == N_RUNS).all()
    assert (summary["unstopped"] == 0).all()
    errors = table.groupby(["instance", "algorithm"])["error"].sum()
    assert (errors <= MAX_ERRORS).all(), errors[errors > MAX_ERRORS]
    # The infeasible instance is declared infeasible by every correct run.
    infeasible = table[table["instance"] == "infeasible"]
    assert (infeasible["answer"][infeasible["correct"]] == gbai.INFEASIBLE).all()
