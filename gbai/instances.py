"""The paper's instances as named data (Tables I, III and IV) with their x grids.

Every experiment of Section VI is a family of instances indexed by one free
attribute mean ``x``. The grids follow reading note 10; ``delta = 0.1`` in all of
them (:data:`PAPER_DELTA`).

Note on Table III, experiment 3: the table shades arms 3 and 4 as infeasible, but
arm 5 has attribute mean 0.3 below the threshold 0.35, so it is infeasible too.
The package takes the numbers of the table as the facts and derives feasibility
from them.

The published figures (``PUBLISHED_EXPERIMENTS``)
-------------------------------------------------
The paper's figures were drawn by the authors' research notebooks, whose instances
differ from the tables in small, documented ways (``AUTHORS-CODE.md`` in the
project's shared paper folder, issue 9):

* every fixed entry ``v`` was typed as the Beta parameter ``b = round(1/v - 1, 2)``
  of ``Beta(1, b)``, whose mean is ``1/(1 + b)``: a table's 0.6 is really 0.5988,
  0.9 is 0.9009 (:func:`typed_mean`); the free entry ``x`` uses ``b = 1/x - 1``
  exactly. Our reward model draws ``Beta(1, 1/mu - 1)`` with the inversion exponent
  ``mu / (1 - mu)``; at ``mu = 1/(1 + b)`` that exponent equals ``1/b`` up to a few
  units in the last place (``tests/test_published.py`` bounds it), so a means matrix
  describes the authors' reward laws exactly in distribution;
* Figure 1a's arms 3 and 4 are not Table III's (``fig1a``);
* Figure 1b uses six values of ``x`` in steps of 0.04 (``fig1b``);
* in Figure 2b, arm 0 of the M = 2 and M = 3 instances was ``[0.6, 0.7]`` and
  ``[0.6, 0.7, 0.65]``, not the first columns of Table IV's N = 5 table (``fig2b``).

These families are named data beside the paper's; :func:`paper_instance` and
:func:`experiment_grid` accept their names too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Instance

__all__ = [
    "EXPERIMENTS",
    "PUBLISHED_EXPERIMENTS",
    "get_experiment",
    "typed_beta_parameter",
    "typed_mean",
    "PAPER_DELTA",
    "Experiment",
    "experiment_grid",
    "paper_instance",
    "table1_example",
]

#: The confidence level used in every experiment of Section VI.
PAPER_DELTA = 0.1


@dataclass(frozen=True)
class Experiment:
    """One family of paper instances: a table with one free entry ``x``.

    ``rows`` holds the attribute means with ``None`` where ``x`` goes. ``sizes`` lists
    the admissible values of the size parameter for the varying-N and varying-M
    families (empty otherwise).
    """

    name: str
    title: str
    source: str
    threshold: float
    rows: tuple[tuple[float | None, ...], ...]
    x_grid: tuple[float, ...]
    size_parameter: str | None = None
    sizes: tuple[int, ...] = ()
    default_size: int | None = None
    #: True for the authors' typed instances: each fixed entry ``v`` becomes
    #: :func:`typed_mean` ``(v)`` and ``x`` becomes ``1 / (1 + (1/x - 1))``.
    typed: bool = False
    #: ``(size, row, values)``: at that size, the given row replaces the table's
    #: (already cut to the size).
    row_overrides: tuple[tuple[int, int, tuple[float, ...]], ...] = ()

    def instance(self, x: float | None = None, size: int | None = None) -> Instance:
        """Build the instance at ``x`` (and N or M for the varying families)."""
        has_x = any(value is None for row in self.rows for value in row)
        if has_x and x is None:
            raise ValueError(f"experiment {self.name!r} needs a value for x (grid: {list(self.x_grid)})")
        if not has_x and x is not None:
            raise ValueError(f"experiment {self.name!r} has no free entry x")
        if has_x:
            try:
                x = float(x)
            except (TypeError, ValueError):
                raise ValueError(f"x must be a number, got {x!r}") from None
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"x is an attribute mean and must lie in [0, 1], got {x}")
        if self.typed:
            free = None if x is None else 1.0 / (1.0 + (1.0 / x - 1.0))
            rows = [[free if value is None else typed_mean(value) for value in row] for row in self.rows]
        else:
            rows = [[x if value is None else value for value in row] for row in self.rows]
        means = np.array(rows, dtype=np.float64)
        label = self.name if x is None else f"{self.name} x={x:g}"
        if self.size_parameter is None:
            if size is not None:
                raise ValueError(f"experiment {self.name!r} takes no size parameter")
        else:
            size = self.default_size if size is None else size
            if size not in self.sizes:
                raise ValueError(
                    f"experiment {self.name!r}: {self.size_parameter} must be one of "
                    f"{list(self.sizes)}, got {size!r}"
                )
            if self.size_parameter == "N":
                means = means[:size, :]
            else:
                means = means[:, :size]
            means = means.copy()
            for override_size, row, values in self.row_overrides:
                if override_size == size:
                    means[row] = [typed_mean(value) if self.typed else value for value in values]
            label = f"{label} {self.size_parameter}={size}"
        return Instance(means, self.threshold, label=label)

    def instances(self, size: int | None = None) -> dict[float, Instance]:
        """The instances over the whole x grid, keyed by x."""
        return {x: self.instance(x, size) for x in self.x_grid}


def _grid(start: float, stop: float, step: float) -> tuple[float, ...]:
    count = int(round((stop - start) / step)) + 1
    return tuple(round(start + k * step, 10) for k in range(count))


X = None  # marks the free entry of a table


def typed_beta_parameter(value: float) -> float:
    """The Beta parameter ``b = round(1/v - 1, 2)`` the authors typed for a table entry ``v``."""
    value = float(value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"a typed table entry must lie in (0, 1], got {value}")
    return round(1.0 / value - 1.0, 2)


def typed_mean(value: float) -> float:
    """The mean ``1/(1 + b)`` of ``Beta(1, b)`` with the authors' typed ``b`` for entry ``v``.

    For example 0.6 -> b = 0.67 -> 0.5988, 0.9 -> b = 0.11 -> 0.9009.
    """
    return 1.0 / (1.0 + typed_beta_parameter(value))

EXPERIMENTS: dict[str, Experiment] = {
    "example": Experiment(
        name="example",
        title="Illustrative example",
        source="Table I",
        threshold=0.3,
        rows=((0.6, 0.4), (0.2, 1.0), (0.4, 0.4)),
        x_grid=(),
    ),
    "exp1": Experiment(
        name="exp1",
        title="Experiment 1: an attribute of the best arm approaches the threshold",
        source="Table III, experiment 1",
        threshold=0.3,
        rows=(
            (X, 0.6, 0.7, 0.6, 0.7),
            (0.4, 0.2, 0.4, 0.4, 0.45),
            (0.15, 0.7, 0.8, 0.9, 0.9),
            (X, 0.35, 0.35, 0.35, 0.4),
            (X, 0.35, 0.35, 0.35, 0.35),
        ),
        x_grid=_grid(0.31, 0.35, 0.01),
    ),
    "exp2": Experiment(
        name="exp2",
        title="Experiment 2: a feasible sub-optimal arm approaches the best arm",
        source="Table III, experiment 2",
        threshold=0.3,
        rows=(
            (0.7, 0.6, 0.8, 0.7, 0.9),
            (0.7, X, 0.7, 0.7, 0.8),
            (0.15, 0.7, 0.8, 0.9, 0.9),
            (0.15, 0.9, 0.9, 0.9, 0.8),
            (0.1, 0.9, 0.9, 0.8, 0.8),
        ),
        x_grid=_grid(0.50, 0.70, 0.05),
    ),
    "exp3": Experiment(
        name="exp3",
        title="Experiment 3: the highest-mean arm is infeasible (risky)",
        source="Table III, experiment 3",
        threshold=0.35,
        rows=(
            (0.5, 0.6, 0.6, 0.5, 0.8),
            (0.7, 0.5, 0.4, 0.4, 0.6),
            (X, 0.5, 0.9, 0.8, 0.9),
            (0.6, 0.2, 0.4, 0.7, 0.6),
            (0.3, 0.7, 0.4, 0.9, 0.5),
        ),
        x_grid=_grid(0.05, 0.30, 0.05),
    ),
    "vary-n": Experiment(
        name="vary-n",
        title="Varying the number of arms N (M = 2)",
        source="Table IV, left",
        threshold=0.5,
        rows=(
            (0.6, 0.7),
            (X, 0.9),
            (0.3, 0.55),
            (0.55, 0.55),
            (0.2, 0.4),
            (0.55, 0.6),
        ),
        x_grid=_grid(0.38, 0.46, 0.02),
        size_parameter="N",
        sizes=(4, 5, 6),
        default_size=6,
    ),
    "vary-m": Experiment(
        name="vary-m",
        title="Varying the number of attributes M (N = 5)",
        source="Table IV, right",
        threshold=0.5,
        rows=(
            (0.55, 0.6, 0.65, 0.7),
            (X, 0.9, 0.7, 0.8),
            (0.3, 0.55, 0.4, 0.6),
            (0.55, 0.55, 0.55, 0.55),
            (0.2, 0.4, 0.3, 0.55),
        ),
        x_grid=_grid(0.38, 0.46, 0.02),
        size_parameter="M",
        sizes=(2, 3, 4),
        default_size=4,
    ),
}


_TABLE3 = EXPERIMENTS
#: The instance families of the published figures (see the module docstring),
#: keyed by the figure they were drawn for.
PUBLISHED_EXPERIMENTS: dict[str, Experiment] = {
    "fig1a": Experiment(
        name="fig1a",
        title="Figure 1a as run: experiment 1 with other arms 3 and 4, typed means",
        source="authors' code (AUTHORS-CODE.md), Figure 1a",
        threshold=0.3,
        rows=_TABLE3["exp1"].rows[:3] + ((X, 0.5, 0.6, 0.9, 0.5), (X, 0.35, 0.35, 0.8, 0.9)),
        x_grid=_grid(0.31, 0.35, 0.01),
        typed=True,
    ),
    "fig1b": Experiment(
        name="fig1b",
        title="Figure 1b as run: experiment 2, typed means, six values of x",
        source="authors' code (AUTHORS-CODE.md), Figure 1b",
        threshold=0.3,
        rows=_TABLE3["exp2"].rows,
        x_grid=_grid(0.50, 0.70, 0.04),
        typed=True,
    ),
    "fig1c": Experiment(
        name="fig1c",
        title="Figure 1c as run: experiment 3, typed means",
        source="authors' code (AUTHORS-CODE.md), Figure 1c",
        threshold=0.35,
        rows=_TABLE3["exp3"].rows,
        x_grid=_TABLE3["exp3"].x_grid,
        typed=True,
    ),
    "fig2a": Experiment(
        name="fig2a",
        title="Figure 2a as run: varying N, typed means",
        source="authors' code (AUTHORS-CODE.md), Figure 2a",
        threshold=0.5,
        rows=_TABLE3["vary-n"].rows,
        x_grid=_TABLE3["vary-n"].x_grid,
        size_parameter="N",
        sizes=(4, 5, 6),
        default_size=6,
        typed=True,
    ),
    "fig2b": Experiment(
        name="fig2b",
        title="Figure 2b as run: varying M, typed means, arm 0 as typed for M = 2 and 3",
        source="authors' code (AUTHORS-CODE.md), Figure 2b",
        threshold=0.5,
        rows=_TABLE3["vary-m"].rows,
        x_grid=_TABLE3["vary-m"].x_grid,
        size_parameter="M",
        sizes=(2, 3, 4),
        default_size=4,
        typed=True,
        row_overrides=((2, 0, (0.6, 0.7)), (3, 0, (0.6, 0.7, 0.65))),
    ),
}


def get_experiment(name: str) -> Experiment:
    """The paper's experiment (:data:`EXPERIMENTS`) or published-figure family
    (:data:`PUBLISHED_EXPERIMENTS`) called ``name``."""
    if name in EXPERIMENTS:
        return EXPERIMENTS[name]
    if name in PUBLISHED_EXPERIMENTS:
        return PUBLISHED_EXPERIMENTS[name]
    known = sorted(EXPERIMENTS) + sorted(PUBLISHED_EXPERIMENTS)
    raise ValueError(f"unknown experiment {name!r}; choose from {known}")


_experiment = get_experiment


def paper_instance(name: str, x: float | None = None, size: int | None = None) -> Instance:
    """The instance of experiment ``name`` at ``x``.

    ``name`` is one of ``example``, ``exp1``, ``exp2``, ``exp3``, ``vary-n``,
    ``vary-m``, or a published-figure family ``fig1a``, ``fig1b``, ``fig1c``,
    ``fig2a``, ``fig2b``; ``size`` is N for ``vary-n``/``fig2a`` and M for
    ``vary-m``/``fig2b``.
    """
    return _experiment(name).instance(x, size)


def experiment_grid(name: str) -> tuple[float, ...]:
    """The x values of experiment ``name`` (reading note 10)."""
    return _experiment(name).x_grid


def table1_example() -> Instance:
    """The illustrative example of Table I: arm 0 is the best feasible arm."""
    return paper_instance("example")
