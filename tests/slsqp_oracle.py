"""Test oracle: the characteristic time by SLSQP + an LP certificate, independent of the structured solver.

The max-min of Garivier & Kaufmann (2016) is solved over the full weight simplex
(SLSQP on the epigraph form with Danskin gradients, an active-set polish, Kelley
cutting planes) and certified by weak duality with the LP mixture of the
alternatives met. Slow beyond about 20 x 5; Bernoulli and Gaussian divergences.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.optimize import linprog, minimize

from gbai.limits.alternatives import alternative_lambda, alternative_values_kernel, alternatives_kernel, answer_kernel
from gbai.limits.divergences import divergence_code, divergence_scalar
from gbai.paper.model import Instance

__all__ = ["OracleTime", "optimise_slsqp", "slsqp_characteristic_time"]

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
            kinds, arms, attrs, values, rows_a, rows_b = alternatives_kernel(
                self.means, self.threshold, w, self.code, np.zeros((3,) + self.shape + (0,)))
            a = answer_kernel(self.means, self.threshold)[0]
            lams = np.array([alternative_lambda(self.means, self.threshold, a, kinds[k], arms[k], attrs[k], rows_a[k],
                                                rows_b[k]) for k in range(len(values))])
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


def optimise_slsqp(means, threshold, code, tol, max_iter):
    """Returns ``(w, value, upper, iterations)`` from :class:`_MaxMinSolver`."""
    solver = _MaxMinSolver(means, threshold, code, tol, max_iter).solve()
    return solver.w.reshape(solver.shape), solver.value, solver.upper, solver.iterations


@dataclass(frozen=True)
class OracleTime:
    """``T* = 1 / value`` with the certified upper bound ``value_upper`` on ``1/T*``."""

    T_star: float
    w_star: np.ndarray
    value: float
    value_upper: float
    gap: float


def slsqp_characteristic_time(instance: Instance, divergence: str = "bernoulli", *, tol: float = 1e-5,
                              max_iter: int = 500) -> OracleTime:
    """``T*`` of ``instance`` by :class:`_MaxMinSolver`; ``T* = inf`` for a tie or a best pair at the threshold."""
    means = np.ascontiguousarray(instance.means, dtype=np.float64)
    th = float(instance.threshold)
    n, m = means.shape
    a, tie = answer_kernel(means, th)
    if a >= 0 and (tie >= 0 or means[a].min() <= th):
        return OracleTime(math.inf, np.full((n, m), 1.0 / (n * m)), 0.0, 0.0, 0.0)
    w, value, upper, _ = optimise_slsqp(means, th, divergence_code(divergence), tol, max_iter)
    return OracleTime(1.0 / value, w, value, upper, (upper - value) / value)
