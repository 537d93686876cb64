"""Reward models and common random numbers."""

import numpy as np
import pytest
from scipy import stats

import gbai
from gbai.paper.rewards import RewardStream, pair_keys, reward_code

N_DRAWS = 1_000_000


@pytest.mark.parametrize("model", ["beta", "bernoulli"])
@pytest.mark.parametrize("mu", [0.05, 0.3, 0.5, 0.9])
def test_reward_mean_and_variance(model, mu):
    stream = RewardStream(np.array([[mu]]), seed=20241211, model=model)
    draws = stream.samples(0, 0, N_DRAWS)
    variance = float(gbai.reward_variance(mu, model))
    # Sample mean: standard error sqrt(var/n); 5 standard errors leave a false
    # failure probability below 6e-7 per check.
    assert abs(draws.mean() - mu) <= 5 * np.sqrt(variance / N_DRAWS)
    # Sample variance: rewards lie in [0, 1], so (X - mu)^2 lies in [0, 1] and its own
    # variance is at most E[(X - mu)^4] <= E[(X - mu)^2] = var; 5 standard errors again.
    assert abs(draws.var() - variance) <= 5 * np.sqrt(variance / N_DRAWS)


@pytest.mark.parametrize("mu", [0.1, 0.35, 0.8])
def test_beta_rewards_follow_beta_one_b(mu):
    # Kolmogorov-Smirnov against Beta(1, 1/mu - 1): with a fixed seed the p-value is a
    # fixed number; a wrong inversion formula drives it to ~0 at this sample size.
    draws = RewardStream(np.array([[mu]]), seed=7).samples(0, 0, 200_000)
    assert stats.kstest(draws, stats.beta(1.0, 1.0 / mu - 1.0).cdf).pvalue > 1e-3


def test_degenerate_means():
    stream = RewardStream(np.array([[0.0, 1.0]]), seed=3)
    assert (stream.samples(0, 0, 1000) == 0.0).all()
    assert (stream.samples(0, 1, 1000) == 1.0).all()
    bernoulli = RewardStream(np.array([[0.0, 1.0]]), seed=3, model="bernoulli")
    assert (bernoulli.samples(0, 0, 1000) == 0.0).all()
    assert (bernoulli.samples(0, 1, 1000) == 1.0).all()


def test_kth_sample_is_independent_of_access_order():
    means = np.array([[0.3, 0.6], [0.5, 0.2]])
    stream = RewardStream(means, seed=11)
    block = stream.samples(1, 0, 50)
    backwards = [stream.sample(1, 0, k) for k in reversed(range(50))][::-1]
    np.testing.assert_array_equal(block, backwards)
    np.testing.assert_array_equal(stream.samples(1, 0, 10, start=40), block[40:])
    # Another stream object on the same seed gives the same values.
    np.testing.assert_array_equal(RewardStream(means, seed=11).samples(1, 0, 50), block)


def test_streams_differ_across_pairs_and_seeds():
    means = np.full((2, 2), 0.5)
    a = RewardStream(means, seed=1)
    b = RewardStream(means, seed=2)
    assert not np.array_equal(a.samples(0, 0, 100), a.samples(0, 1, 100))
    assert not np.array_equal(a.samples(0, 0, 100), b.samples(0, 0, 100))
    # Independent uniform streams: the correlation of n pairs has standard deviation
    # about 1/sqrt(n); 5/sqrt(n) bounds it with false-failure probability ~6e-7.
    n = 200_000
    r = np.corrcoef(a.samples(0, 0, n), a.samples(1, 1, n))[0, 1]
    assert abs(r) < 5 / np.sqrt(n)


def test_keys_are_a_prefix_across_arm_counts():
    # With M fixed, arm i gets the same stream whatever N is (used by vary-n).
    np.testing.assert_array_equal(pair_keys(5, 4, 2), pair_keys(5, 6, 2)[:4])


def test_bad_reward_inputs():
    with pytest.raises(ValueError, match="unknown reward model"):
        reward_code("gaussian")
    with pytest.raises(ValueError, match="seed"):
        pair_keys(-1, 2, 2)
    with pytest.raises(ValueError, match="seed"):
        pair_keys(1.5, 2, 2)
    with pytest.raises(ValueError, match="reward"):
        gbai.run(gbai.table1_example(), reward="normal")
