"""The characteristic time ``T*(mu)``: a certified max-min solver and its LP certificate.

Garivier & Kaufmann (2016, "Optimal best arm identification with fixed
confidence", Theorem 1): every delta-correct algorithm satisfies
``E[tau] >= T*(mu) kl(delta, 1 - delta)`` with

    1 / T*(mu) = max_{w in simplex} inf_{lambda in Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij),

over the N M arm-attribute pairs. The inner infimum is the best response of
:mod:`gbai.lower_bounds.alternatives`; here the outer maximum is solved and
certified (:func:`characteristic_time`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.optimize import linprog, minimize

from ..model import Instance, check_delta
from .alternatives import alternative_values_kernel, alternatives_kernel, answer_kernel, is_kinf
from .divergences import divergence_code, divergence_scalar, kl_bernoulli_scalar
from .reward_laws import law_arrays
from .pairs import LAW, law_alternatives_kernel, pair_divergence
from .structured import solve_structured

__all__ = ["CharacteristicTime", "characteristic_time", "check_instance", "lower_bound_tstar"]

#: Points of the segment from the incumbent (0) to the cutting-plane point (1) at
#: which each cutting-plane iteration evaluates the best responses.
_SEGMENT = (1.0, 0.5, 0.25, 0.1)


@njit(cache=True)
def _divergence_columns(means, lams, code):
    """``D[k, i, j] = d(mu_ij, lams[k, i, j])``: by Danskin's theorem, the gradient in ``w``."""
    count, n, m = lams.shape
    out = np.zeros((count, n, m))
    for k in range(count):
        for i in range(n):
            for j in range(m):
                if lams[k, i, j] != means[i, j]:
                    out[k, i, j] = divergence_scalar(means[i, j], lams[k, i, j], code)
    return out


@dataclass(frozen=True, eq=False)
class CharacteristicTime:
    """``T*(mu)`` and the optimal proportions (Garivier & Kaufmann 2016).

    ``value`` is ``1/T*``, the max-min value achieved by ``w_star`` (a certified lower
    bound on the true max-min); ``value_upper`` is a certified upper bound (weak
    duality, see :func:`characteristic_time`) and ``gap = (value_upper - value) /
    value``. Hence ``T_star = 1/value`` is never below the true ``T*`` and exceeds
    it by a relative amount of at most ``gap``. ``iterations`` counts optimiser plus
    cutting-plane iterations (0 for the closed forms). ``method`` names how it was
    obtained: ``"closed-form"``, ``"structured"``, ``"slsqp+lp"`` or ``"degenerate"``
    (``T* = inf``). ``divergence`` is ``"bernoulli"``, ``"gaussian"`` or ``"kinf"``.
    """

    T_star: float
    w_star: np.ndarray
    value: float
    gap: float
    iterations: int
    value_upper: float = math.nan
    method: str = ""
    divergence: str = "bernoulli"


def check_instance(instance) -> Instance:
    """``instance`` itself if it is a :class:`gbai.Instance`, else a ValueError."""
    if not isinstance(instance, Instance):
        raise ValueError(f"expected a gbai.Instance, got {type(instance).__name__}")
    return instance


class _Oracle:
    """Evaluates every alternative at a flat weight vector, with a one-entry cache."""

    def __init__(self, means, threshold, code):
        self.means = means
        self.threshold = threshold
        self.code = code
        self.shape = means.shape
        self._key = None
        self._values = None
        self._columns = None
        self.calls = 0

    def __call__(self, w_flat):
        key = w_flat.tobytes()
        if key != self._key:
            w = np.ascontiguousarray(w_flat.reshape(self.shape))
            _, _, _, values, lams = alternatives_kernel(self.means, self.threshold, w, self.code, True)
            columns = _divergence_columns(self.means, lams, self.code).reshape(len(values), -1)
            self._key, self._values, self._columns = key, values, columns
            self.calls += 1
        return self._values, self._columns


def _lp_certificate(columns, scale):
    """``min_q max_p sum_k q_k D_kp``: returns (upper bound, q, dual w) or None.

    The upper bound is recomputed from the clipped, renormalised ``q``, so it is a
    valid bound whatever the LP solver's tolerances (weak duality).
    """
    finite = np.isfinite(columns).all(axis=1)
    D = columns[finite] / scale
    count, pairs = D.shape
    if count == 0:
        return None
    c = np.zeros(count + 1)
    c[-1] = 1.0
    a_ub = np.hstack([D.T, -np.ones((pairs, 1))])
    a_eq = np.zeros((1, count + 1))
    a_eq[0, :count] = 1.0
    bounds = [(0.0, None)] * count + [(None, None)]
    # Tight tolerances: near-ties give optimal mixtures with weights ~1e-8 on
    # columns whose entries are ~1e8 times the value (HiGHS defaults: 1e-7).
    for options in (
        {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
        {},
    ):
        res = linprog(
            c,
            A_ub=a_ub,
            b_ub=np.zeros(pairs),
            A_eq=a_eq,
            b_eq=[1.0],
            bounds=bounds,
            method="highs",
            options=options,
        )
        if res.status == 0:
            break
    else:
        return None
    q = np.clip(res.x[:count], 0.0, None)
    q /= q.sum()
    upper = float((columns[finite].T @ q).max())
    w = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
    w = np.clip(w, 0.0, None)
    w = w / w.sum() if w.sum() > 0 else np.full(pairs, 1.0 / pairs)
    return upper, q, w


def _initial_weights(means, threshold, code):
    """A heuristic start for the optimiser.

    Arm totals are inversely proportional to the cost of the arm's cheapest
    alternative at uniform weights (each alternative's cost is roughly proportional
    to the weight of the arm it moves: ``a`` for (A), ``b`` for (B) and (C)), which
    roughly equalises the alternatives as the optimum does; the answer gets at least
    the largest share, since it enters every (B). Within an infeasible arm the
    weight goes to the attributes below the threshold (in proportion to
    ``1 / d(mu_bj, th)``), where the optimum usually puts all of it: the other
    attributes of such an arm can then move for free.
    """
    n, m = means.shape
    uniform = np.full((n, m), 1.0 / (n * m))
    _, arms, _, values = alternative_values_kernel(means, threshold, uniform, code)
    cheapest = np.full(n, np.inf)
    for arm, value in zip(arms, values):
        cheapest[arm] = min(cheapest[arm], value)
    usable = np.isfinite(cheapest) & (cheapest > 0.0)
    if not usable.any():
        return uniform
    totals = np.zeros(n)
    totals[usable] = 1.0 / cheapest[usable]
    totals[~usable] = totals[usable].min()
    a, _ = answer_kernel(means, threshold)
    if a >= 0:
        totals[a] = totals.max()
    totals /= totals.sum()
    w = np.empty((n, m))
    for i in range(n):
        below = means[i] < threshold
        if below.any() and i != a:
            share = np.zeros(m)
            for j in np.flatnonzero(below):
                share[j] = 1.0 / divergence_scalar(means[i, j], threshold, code)
        else:
            share = np.ones(m)
        w[i] = totals[i] * share / share.sum()
    return w


class _StopOptimiser(StopIteration):
    pass


_WEIGHT_FLOOR = 1e-12


class _MaxMinSolver:
    """Certified numerical solution of ``max_{w in simplex} min_k f_k(w)``.

    ``f_k`` is the cost of alternative ``k`` (concave and positively homogeneous in
    ``w``; its gradient is ``D^k = d(mu, lambda^k(w))`` by Danskin's theorem). The
    solver keeps

    * an incumbent ``w`` and its value ``L = min_k f_k(w)``, a lower bound;
    * every distinct column ``D^k`` met, and the certified upper bound
      ``U = max_p sum_k q_k D^k_p`` for the mixture ``q`` solving the LP
      ``min_q max_p sum_k q_k D^k_p`` (weak duality: for fixed alternatives the
      objective is linear in ``w`` and its maximum over the simplex is its largest
      coordinate).

    Stages (each stops as soon as ``(U - L) / L <= tol``):

    1. SLSQP on the epigraph problem ``max z s.t. z <= f_k(w), sum w = 1``,
       certified every 5 iterations; it is abandoned when 30 iterations do not halve
       the gap. It stalls when some optimal weights are exactly 0 (this happens: an
       infeasible arm whose other attributes have weight 0 can move them for free).
    2. Active-set polish: SLSQP again with the weights that are negligible in the
       incumbent (below 1e-8 of the largest) fixed at 0; the problem is then smooth
       and converges fast.
    3. Kelley's cutting planes: the LP's dual solution gives a new point; the best
       responses on the segment from the incumbent to it add columns. A polish is
       retried every 10 iterations; the loop stops after ``max_iter`` iterations or
       when 50 iterations improved the gap by less than 1%.
    """

    def __init__(self, means, threshold, code, tol, max_iter):
        self.means = means
        self.threshold = threshold
        self.code = code
        self.tol = tol
        self.max_iter = max_iter
        self.shape = means.shape
        self.pairs = means.size
        self.oracle = _Oracle(means, threshold, code)
        self.columns: dict[bytes, np.ndarray] = {}
        self.upper = math.inf
        self.certificate = None
        self.history: list[float] = []
        self.iterations = 0
        w0 = _initial_weights(means, threshold, code).ravel()
        if not float(self.oracle(w0)[0].min()) > 0.0:
            w0 = np.full(self.pairs, 1.0 / self.pairs)
        self.w = w0
        self.value = float(self.oracle(w0)[0].min())
        self.scale = self.value  # the objective is divided by it (values near 1)
        self.consider(w0)

    # ------------------------------------------------------------ bookkeeping
    def consider(self, w):
        """Evaluate a point of the simplex, keep its new columns, update the incumbent.

        Weights are floored at 1e-12 (and renormalised) so that no pair moves to 0
        or 1 for free, which would make its column infinite and useless.
        """
        w = np.maximum(w, _WEIGHT_FLOOR)
        w /= w.sum()
        values, columns = self.oracle(w)
        for column in columns:
            self.columns.setdefault(column.tobytes(), column)
        value = float(values.min())
        if value > self.value:
            self.w, self.value = w.copy(), value

    def certify(self) -> bool:
        """Refresh the upper bound; True when the relative gap is at most ``tol``."""
        self.certificate = _lp_certificate(np.array(list(self.columns.values())), self.scale)
        if self.certificate is not None:
            self.upper = min(self.upper, self.certificate[0])
        gap = (self.upper - self.value) / self.value
        self.history.append(gap)
        return gap <= self.tol

    # ------------------------------------------------------------------ SLSQP
    def slsqp(self, start, keep, maxiter, watch):
        """SLSQP on the weights ``keep`` (the others fixed at 0), from ``start``.

        The variables are the weights divided by their starting values (floored at
        1e-3 of the largest): SLSQP's first Hessian guess is the identity, and in
        these units its first steps are relative changes of the weights, instead of
        absolute changes of order 1 that throw the small weights to the bounds.
        """
        count = int(keep.sum())
        scale = self.scale
        oracle = self.oracle
        start = start[keep] / start[keep].sum()
        unit = np.maximum(start, 1e-3 * start.max())

        def full(v):
            w = np.zeros(self.pairs)
            w[keep] = np.clip(v[:-1] * unit, _WEIGHT_FLOOR, None)
            return w

        def cons(v):
            values, _ = oracle(full(v))
            return values / scale - v[-1]

        def cons_jac(v):
            _, columns = oracle(full(v))
            jac = np.empty((columns.shape[0], count + 1))
            jac[:, :-1] = columns[:, keep] * (unit / scale)
            jac[:, -1] = -1.0
            return jac

        def on_iteration(v):
            self.iterations += 1
            if not watch or self.iterations % 5 or not np.isfinite(v).all():
                return
            self.consider(full(v))
            if self.certify():
                raise _StopOptimiser
            if len(self.history) > 6 and self.history[-1] > 0.5 * self.history[-7]:
                raise _StopOptimiser  # stalled: no halving of the gap in 30 iterations

        u0 = start / unit
        z0 = 0.999 * float(oracle(full(np.append(u0, 0.0)))[0].min()) / scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = minimize(
                    lambda v: -v[-1],
                    np.append(u0, z0),
                    jac=lambda v: np.append(np.zeros(count), -1.0),
                    method="SLSQP",
                    bounds=[(_WEIGHT_FLOOR / c, 1.0 / c) for c in unit] + [(0.0, None)],
                    constraints=[
                        {"type": "ineq", "fun": cons, "jac": cons_jac},
                        {
                            "type": "eq",
                            "fun": lambda v: v[:-1] @ unit - 1.0,
                            "jac": lambda v: np.append(unit, 0.0),
                        },
                    ],
                    callback=on_iteration,
                    options={"maxiter": maxiter, "ftol": 1e-14},
                )
                if np.isfinite(res.x).all():
                    self.consider(full(res.x))
            except _StopOptimiser:
                pass

    def polish(self) -> bool:
        keep = self.w >= 1e-8 * self.w.max()
        if keep.all():
            return False
        self.slsqp(self.w, keep, 100, watch=False)
        return self.certify()

    # ------------------------------------------------------------------ solve
    def solve(self):
        self.slsqp(self.w, np.ones(self.pairs, dtype=bool), 300, watch=True)
        if self.certify() or self.polish():
            return self
        for kelley in range(1, self.max_iter + 1):
            self.iterations += 1
            if self.certificate is None:
                break
            w_lp = self.certificate[2]
            incumbent = self.w.copy()
            for t in _SEGMENT:
                self.consider(t * w_lp + (1.0 - t) * incumbent)
            if self.certify():
                break
            if kelley % 10 == 0 and self.polish():
                break
            if kelley >= 50 and self.history[-1] > 0.99 * self.history[-51]:
                break  # stagnation (extreme near-ties, where the LP runs out of digits)
        return self


def _optimise(means, threshold, code, tol, max_iter):
    """Returns ``(w, value, upper, iterations)`` from :class:`_MaxMinSolver`."""
    solver = _MaxMinSolver(means, threshold, code, tol, max_iter).solve()
    return solver.w.reshape(solver.shape), solver.value, solver.upper, solver.iterations


def characteristic_time(
    instance: Instance,
    divergence: str = "bernoulli",
    *,
    method: str = "auto",
    tol: float = 1e-5,
    max_iter: int = 500,
    laws="beta",
) -> CharacteristicTime:
    """The characteristic time ``T*(mu)`` and optimal proportions ``w*``.

    ``1/T* = max_{w in simplex} min_{lambda in cl Alt(mu)} sum_ij w_ij d(mu_ij, lambda_ij)``
    over the N M arm-attribute pairs (Garivier & Kaufmann 2016).

    * Tie for the best feasible arm, or a pair of the best arm exactly at the
      threshold: ``T* = inf`` (value 0 for every ``w``; ``w_star`` is uniform).
    * Infeasible instance (closed form, ``method="auto"``): with
      ``D_b = d(min_j mu_bj, th)``, ``T* = sum_b 1/D_b`` and ``w*`` puts
      ``(1/D_b) / sum_c (1/D_c)`` on the smallest attribute of each arm ``b``.
      Proof: the alternatives are (C), one per arm, with cost
      ``f_b(w) = sum_{j: mu_bj < th} w_bj d(mu_bj, th)``. Given arm ``b``'s total
      weight ``W_b``, ``f_b <= W_b max_j d(mu_bj, th) = W_b D_b`` (``d(., th)``
      decreases on ``[0, th]``, so the largest divergence is at the smallest
      attribute), with equality when all of ``W_b`` sits on that attribute; weight
      elsewhere only lowers some ``f_b``. Then ``max min_b W_b D_b`` over
      ``sum_b W_b = 1`` equalises ``W_b D_b``, giving ``1/sum_b (1/D_b)``.
    * Feasible instance (``method="auto"`` or ``"structured"``): the scalable solver
      of :mod:`~gbai.lower_bounds.structured` (an outer problem in the answer's M
      weights, one small problem per other arm; certified by weak duality with the
      KKT multipliers). About 10 ms on the paper's 5 x 5 instances, 2 s for
      100 x 10 and 20 s for 500 x 20 (``python -m gbai.benchmark --scaling``).
    * ``method="numeric"`` (the solver of earlier versions, kept for checking;
      Bernoulli and Gaussian only): a certified numerical solution
      (:class:`_MaxMinSolver`). The lower bound is the achieved value
      ``min_k f_k(w_star)``. The upper bound is weak duality: for any mixture ``q``
      of alternatives ``lambda^k`` in the closure of ``Alt(mu)``,
      ``max_w min_k f_k(w) <= max_ij sum_k q_k d(mu_ij, lambda^k_ij)`` (for fixed
      alternatives the objective is linear in ``w``, and a linear function's
      maximum over the simplex is its largest coordinate); ``q`` solves the LP
      ``min_q max_ij ...`` (HiGHS) over the alternatives met along the way. The
      optimiser is SLSQP on ``max z s.t. z <= f_k(w)`` with Danskin gradients
      ``d(mu, lambda_k*(w))``, then, if needed, an SLSQP polish with the negligible
      weights fixed at 0 and Kelley cutting planes, until the relative gap
      ``(upper - value) / value`` is at most ``tol`` (default 1e-5) or
      ``max_iter`` cutting-plane iterations have run.

    Parameters
    ----------
    instance:
        A :class:`gbai.Instance`.
    divergence:
        ``"bernoulli"`` (default), ``"gaussian"`` (variance 1/4) or ``"kinf"``:
        ``K_inf`` of each pair's reward law, the divergence of the lower bound for
        algorithms that are delta-correct for every law on [0, 1] (Agrawal, Juneja
        & Glynn 2020; :mod:`~gbai.lower_bounds.reward_laws`). For Bernoulli laws it equals
        the Bernoulli divergence; for other laws ``T*_kinf <= T*_bernoulli``.
    method:
        ``"auto"`` (closed forms where they exist, else ``"structured"``),
        ``"structured"`` or ``"numeric"`` (the SLSQP + LP solver; for checking).
    tol, max_iter:
        Target relative gap and cap on the optimiser's iterations. A
        :class:`RuntimeWarning` is issued when the certified gap stays above
        ``tol`` (this happens for near-ties with ``T*`` beyond about 1e10, or when
        ``max_iter`` is too small); the result still carries the gap reached.
    laws:
        Only for ``"kinf"``: ``"beta"`` (default, the simulated
        ``Beta(1, 1/mu - 1)``), ``"bernoulli"`` or an N x M grid of
        :class:`~gbai.lower_bounds.reward_laws.RewardLaw`.

    Raises
    ------
    ValueError
        For a non-Instance argument, an unknown divergence or method, or a
        non-positive ``tol`` / ``max_iter``.
    """
    instance = check_instance(instance)
    kinf = is_kinf(divergence)
    code = LAW if kinf else divergence_code(divergence)
    if method not in ("auto", "structured", "numeric"):
        raise ValueError(f"method must be 'auto', 'structured' or 'numeric', got {method!r}")
    if kinf and method == "numeric":
        raise ValueError("method='numeric' supports the 'bernoulli' and 'gaussian' divergences only")
    if not (isinstance(tol, (int, float)) and 0.0 < tol < 1.0):
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    th = instance.threshold
    n, m = means.shape
    name = divergence.lower()
    if kinf:
        xs, xcs, ps = law_arrays(means, laws)
    else:
        xs = xcs = ps = np.zeros((n, m, 0))
    a, tie = answer_kernel(means, th)
    if a >= 0 and (tie >= 0 or means[a].min() <= th):
        return CharacteristicTime(
            math.inf, np.full((n, m), 1.0 / (n * m)), 0.0, 0.0, 0, 0.0, "degenerate", name
        )
    if a < 0 and method != "numeric":
        # Closed form (see above); the largest d(mu_bj, th) over the attributes below
        # th is at the smallest mean for Bernoulli and Gaussian, and found by
        # comparison for K_inf.
        w = np.zeros((n, m))
        inv = np.empty(n)
        worst = np.empty(n, dtype=np.int64)
        for b in range(n):
            below = np.flatnonzero(means[b] < th)
            levels = [pair_divergence(code, means[b, j], xs[b, j], xcs[b, j], ps[b, j], th) for j in below]
            worst[b] = below[int(np.argmax(levels))]
            inv[b] = 1.0 / max(levels)
        total = float(inv.sum())
        for b in range(n):
            w[b, worst[b]] = inv[b] / total
        return CharacteristicTime(total, w, 1.0 / total, 0.0, 0, 1.0 / total, "closed-form", name)
    if method == "numeric":
        w, value, upper, iterations = _optimise(means, th, code, tol, int(max_iter))
        label = "slsqp+lp"
    else:
        if kinf:

            def exact_values(weights):
                return law_alternatives_kernel(means, th, np.ascontiguousarray(weights), xs, xcs, ps, a)[3]

        else:

            def exact_values(weights):
                return alternative_values_kernel(means, th, np.ascontiguousarray(weights), code)[3]

        w, value, upper, iterations = solve_structured(
            means, th, a, code, (xs, xcs, ps), exact_values, tol, int(max_iter)
        )
        label = "structured"
    gap = (upper - value) / value
    if not gap <= tol:
        warnings.warn(
            f"characteristic_time({instance!r}): the certified relative gap {gap:.3g} "
            f"exceeds tol = {tol:g}",
            RuntimeWarning,
            stacklevel=2,
        )
    return CharacteristicTime(1.0 / value, w, value, gap, iterations, upper, label, name)


def lower_bound_tstar(
    instance: Instance, delta: float, divergence: str = "bernoulli", *, laws="beta"
) -> float:
    """``T*(mu) kl(delta, 1 - delta)``: Garivier & Kaufmann's bound on ``E[tau]``.

    ``kl`` is always the Bernoulli KL divergence between ``delta`` and ``1 - delta``
    (it comes from the data-processing inequality on the event "answer is right").
    """
    delta = check_delta(delta)
    result = characteristic_time(instance, divergence, laws=laws)
    return result.T_star * kl_bernoulli_scalar(delta, 1.0 - delta)
