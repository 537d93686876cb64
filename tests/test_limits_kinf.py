"""K_inf (gbai.limits.reward_laws), the K_inf alternatives and the structured T* solver against the SLSQP oracle."""

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from slsqp_oracle import slsqp_characteristic_time

from gbai import Instance, paper_instance
from gbai.limits import DIVERGENCES, alternative_values, best_response, characteristic_time, kl_bernoulli
from gbai.limits.reward_laws import RewardLaw, kinf, kinf_beta
from gbai.paper.instances import EXPERIMENTS


def _brute_force_kinf(support, probabilities, x):
    """min KL(nu, nu') over laws nu' on support + {0, 1} with mean on x's side (SLSQP).

    The infimum over all laws on [0, 1] is attained on supp(nu) plus the end point
    beyond x (Honda & Takemura 2010, Lemma 6), so this grid loses nothing.
    """
    grid = np.unique(np.concatenate([support, [0.0, 1.0]]))
    p = np.array([probabilities[support == g].sum() for g in grid])
    mean = float(p @ grid)
    sign = 1.0 if x > mean else -1.0

    def kl(q):
        q = np.clip(q, 1e-300, None)
        mask = p > 0
        return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))

    constraints = [
        {"type": "eq", "fun": lambda q: q.sum() - 1.0},
        {"type": "ineq", "fun": lambda q: sign * (q @ grid - x)},
    ]
    best = math.inf
    rng = np.random.default_rng(0)
    for _ in range(5):
        start = rng.dirichlet(np.ones(grid.size))
        result = minimize(kl, start, bounds=[(0.0, 1.0)] * grid.size, constraints=constraints,
                          method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
        if result.success and sign * (result.x @ grid - x) >= -1e-9:
            best = min(best, result.fun)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_kinf_matches_brute_force_on_discrete_laws(seed):
    rng = np.random.default_rng(seed)
    support = np.round(rng.uniform(0.0, 1.0, size=4), 2)
    probabilities = rng.dirichlet(np.ones(4))
    law = RewardLaw.discrete(support, probabilities)
    for x in np.round(np.linspace(0.05, 0.95, 7), 2):
        if abs(x - law.mean) < 1e-3:
            continue
        # SLSQP stops at ftol 1e-14 on values of order 0.01 to 1: 1e-6 absolute is
        # far above its error and far below any mistake in the dual formula.
        assert kinf(law, x) == pytest.approx(_brute_force_kinf(law.support, probabilities, x), abs=1e-6)


def test_kinf_equals_kl_on_bernoulli_laws():
    for mean in (0.05, 0.3, 0.5, 0.77):
        law = RewardLaw.bernoulli(mean)
        for x in np.linspace(0.01, 0.99, 25):
            assert law.kinf(x) == pytest.approx(kl_bernoulli(mean, x), rel=1e-12, abs=1e-15)


def test_kinf_at_least_kl_everywhere():
    means = np.linspace(0.05, 0.95, 10)
    xs = np.linspace(0.01, 0.99, 50)
    for mean in means:
        law = RewardLaw.beta(mean)
        for x in xs:
            # The quadrature law's mean is within ~1e-15 of ``mean``, so within an
            # ulp of it K_inf may be 0 where kl is ~1e-32: hence the absolute slack.
            assert law.kinf(x) >= kl_bernoulli(mean, x) * (1.0 - 1e-12) - 1e-15


def test_kinf_beta_against_direct_integration():
    # Uniform rewards (mean 0.5): K_inf at 0.6 is about 0.0607.
    assert kinf_beta(0.5, 0.6) == pytest.approx(0.0607386855667, rel=1e-9)
    # Reference: scipy quad over the Beta(1, 1/mu - 1) density, maximised over lambda.
    from scipy import integrate, optimize

    for mean, x in ((0.3, 0.4), (0.8, 0.4), (0.45, 0.41), (0.9, 0.95)):
        b = 1.0 / mean - 1.0
        lo, hi = (0.0, 1.0 / (1.0 - x)) if x > mean else (-1.0 / x, 0.0)

        # The density's factor (1 - s)^(b - 1), singular at s = 1 when b < 1, is quad's
        # algebraic weight, which it integrates exactly (no divergence warning).
        def negative(lam, x=x, b=b):
            integrand = lambda s: np.log(1.0 - lam * (s - x)) * b  # noqa: E731
            return -integrate.quad(integrand, 0.0, 1.0, weight="alg", wvar=(0.0, b - 1.0), limit=200)[0]

        reference = -optimize.minimize_scalar(negative, bounds=(lo, hi), method="bounded",
                                              options={"xatol": 1e-12}).fun
        # quad and the bounded search are good to about 1e-9 here.
        assert kinf_beta(mean, x) == pytest.approx(reference, rel=1e-8)


def test_kinf_slope_matches_finite_differences():
    for mean in (0.05, 0.3, 0.55, 0.9):
        law = RewardLaw.beta(mean)
        for x in np.linspace(0.02, 0.98, 25):
            h = 1e-6
            numeric = (law.kinf(x + h) - law.kinf(x - h)) / (2 * h)
            # Central differences: error ~ h^2 K''' plus rounding 1e-16 K / h.
            assert law.kinf_slope(x) == pytest.approx(numeric, rel=1e-5, abs=1e-6)


def test_quadrature_resolution_is_converged(monkeypatch):
    import gbai.limits.reward_laws as module

    points = [(m, x) for m in (0.05, 0.3, 0.5, 0.9) for x in (0.02, 0.35, 0.6, 0.99) if m != x]
    coarse = np.array([kinf_beta(m, x) for m, x in points])
    monkeypatch.setattr(module, "_TANH_SINH_STEP", module._TANH_SINH_STEP / 2)
    fine = np.array([kinf_beta(m, x) for m, x in points])
    assert np.max(np.abs(coarse / fine - 1.0)) < 1e-9


def test_law_validation():
    with pytest.raises(ValueError):
        RewardLaw.discrete([0.2, 1.5], [0.5, 0.5])
    with pytest.raises(ValueError):
        RewardLaw.discrete([0.2, 0.5], [0.5, 0.6])
    with pytest.raises(ValueError):
        kinf_beta(0.5, 1.2)
    law = RewardLaw.from_sampler(lambda n: np.random.default_rng(1).beta(1.0, 1.0, size=n), 20000)
    # Empirical law of 20000 uniform draws: K_inf within a few standard errors of 0.0607.
    assert law.kinf(0.6) == pytest.approx(0.0607, abs=0.005)


def _paper_instances():
    for name, experiment in EXPERIMENTS.items():
        for size in experiment.sizes or (None,):
            for x in experiment.x_grid or (None,):
                yield paper_instance(name, x, size)


# On all 47 paper instances: the structured solver agrees with the SLSQP + LP oracle
# within the sum of their certified gaps, and the K_inf limit, also certified, lies
# below the Bernoulli one.
@pytest.mark.parametrize("instance", list(_paper_instances()), ids=lambda i: i.label)
def test_structured_agrees_with_slsqp_oracle_and_kinf_is_smaller(instance):
    new = characteristic_time(instance)
    oracle = slsqp_characteristic_time(instance)
    assert new.method in ("structured", "closed-form", "degenerate")
    if math.isfinite(oracle.T_star):
        assert abs(new.T_star / oracle.T_star - 1.0) <= new.gap + oracle.gap + 1e-12
        assert new.gap <= 1e-5
    kinf_time = characteristic_time(instance, "kinf")
    assert kinf_time.gap <= 1e-5
    # Both certified: T*_kinf (upper end) below T*_bernoulli (lower end).
    assert kinf_time.T_star <= new.T_star * (1.0 - new.gap)


def test_kinf_with_bernoulli_laws_is_the_bernoulli_limit():
    instance = paper_instance("exp2", 0.6)
    bernoulli = characteristic_time(instance)
    same = characteristic_time(instance, "kinf", laws="bernoulli")
    assert abs(same.T_star / bernoulli.T_star - 1.0) <= same.gap + bernoulli.gap


def test_kinf_best_response_consistent_with_bernoulli_laws():
    instance = paper_instance("exp1", 0.33)
    w = np.random.default_rng(3).uniform(1.0, 50.0, size=instance.means.shape)
    a = best_response(instance.means, instance.threshold, w)
    b = best_response(instance.means, instance.threshold, w, "kinf", laws="bernoulli")
    assert b.value == pytest.approx(a.value, rel=1e-9)
    assert b.kind == a.kind and b.arms == a.arms
    c = best_response(instance.means, instance.threshold, w, "kinf")
    assert c.value > a.value  # Beta laws are easier to tell apart than Bernoulli ones


def test_uncertified_run_warns_with_the_gap():
    rng = np.random.default_rng(5)
    instance = Instance(rng.uniform(0.35, 0.9, size=(30, 5)), 0.4)
    with pytest.warns(RuntimeWarning, match="certified relative gap"):
        result = characteristic_time(instance, max_iter=1)
    assert result.gap > 1e-5 and math.isfinite(result.T_star)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        certified = characteristic_time(instance)
    assert certified.gap <= 1e-5
    # The uncertified value is still a valid upper end of T*.
    assert result.T_star >= certified.T_star * (1.0 - certified.gap)


def test_structured_on_random_instances_matches_slsqp_oracle():
    rng = np.random.default_rng(11)
    for _ in range(4):
        instance = Instance(rng.uniform(0.35, 0.9, size=(8, 3)), 0.4)
        new = characteristic_time(instance)
        oracle = slsqp_characteristic_time(instance)
        assert abs(new.T_star / oracle.T_star - 1.0) <= new.gap + oracle.gap + 1e-12


def test_numeric_method_is_only_a_test_oracle():
    with pytest.raises(ValueError, match="'auto' or 'structured'"):
        characteristic_time(paper_instance("exp2", 0.6), "kinf", method="numeric")


def _kinf_cost(means, alternative, w):
    """sum_ij w_ij K_inf(Beta law of mu_ij, lambda_ij) over the pairs that moved, by RewardLaw.kinf."""
    total = 0.0
    for (i, j), lam in np.ndenumerate(alternative):
        if lam != means[i, j] and w[i, j] > 0.0:
            total += w[i, j] * RewardLaw.beta(means[i, j]).kinf(lam)
    return total


def test_kinf_overtake_value_is_the_dual_lower_bound_of_its_alternative():
    # The K_inf overtake returns the dual value at its final multiplier: never above the
    # primal cost of the alternative it returns (weak duality), and equal to it up to
    # the inner roots' accuracy (1e-9 relative; they are solved to ~1e-15).
    rng = np.random.default_rng(17)
    checked = 0
    for trial in range(12):
        instance = paper_instance("exp1", 0.33) if trial % 2 else Instance(rng.uniform(0.2, 0.9, size=(4, 3)), 0.3)
        if not instance.has_unique_answer:
            continue
        w = rng.uniform(1.0, 80.0, size=instance.means.shape)
        if trial % 3 == 2:
            w[rng.random(w.shape) < 0.25] = 0.0  # zero-weight pairs move for free
        result = best_response(instance.means, instance.threshold, w, "kinf")
        primal = _kinf_cost(instance.means, result.alternative, w)
        assert result.value <= primal * (1 + 1e-12) + 1e-300
        assert result.value == pytest.approx(primal, rel=1e-9, abs=1e-12)
        checked += 1
    assert checked >= 10


def test_kinf_alternatives_with_bernoulli_laws_match_the_bernoulli_kernel():
    # One overtake solver for every divergence: K_inf of Bernoulli laws is the Bernoulli
    # KL, so every alternative's value agrees (1e-9 relative: K_inf's dual is solved by
    # nested Newton iterations, the Bernoulli points are closed forms), zero weights included.
    rng = np.random.default_rng(23)
    for trial in range(10):
        means = rng.uniform(0.05, 0.95, size=(4, 3))
        means[0] = rng.uniform(0.6, 0.95, size=3)
        w = rng.uniform(0.5, 60.0, size=means.shape)
        if trial % 2:
            w[rng.random(w.shape) < 0.3] = 0.0
        kl_values = alternative_values(means, 0.4, w)["value"]
        kinf_values = alternative_values(means, 0.4, w, "kinf", laws="bernoulli")["value"]
        np.testing.assert_allclose(kinf_values, kl_values, rtol=1e-9, atol=1e-12)


def test_divergence_names_include_kinf():
    assert set(DIVERGENCES) == {"bernoulli", "gaussian", "kinf"}
    with pytest.raises(ValueError, match="bernoulli.*gaussian.*kinf"):
        characteristic_time(paper_instance("exp2", 0.6), "laplace")

