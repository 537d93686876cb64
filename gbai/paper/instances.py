"""The paper's instances as named data: Table I, and Tables III and IV with their x grids.

Every experiment of Section VI is a family of instances indexed by one free
attribute mean ``x``; the grids follow reading note 10, and ``delta = 0.1``
throughout (:data:`PAPER_DELTA`). Table III shades arms 3 and 4 of experiment 3 as
infeasible, but arm 4 (0-based) has an attribute at 0.3 < 0.35 too: feasibility is
derived from the numbers, never typed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Instance

__all__ = ["EXPERIMENTS", "EXPERIMENT_TITLES", "PAPER_DELTA", "Experiment", "table1_example"]

#: The confidence level of every experiment of Section VI.
PAPER_DELTA = 0.1


@dataclass(frozen=True)
class Experiment:
    """A family of instances: a table with one free entry ``x`` (``None`` in ``rows``).

    ``size_parameter`` ("N" or "M") and ``sizes`` describe the varying-N and
    varying-M families, which keep the first N arms or M attributes; ``short_title``
    names an experiment of Section VI in a figure's panel.
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
    short_title: str = ""

    def means(self, x: float | None, size: int | None) -> np.ndarray:
        """The attribute means at ``x``, cut to ``size``."""
        means = np.array([[x if value is None else value for value in row] for row in self.rows], dtype=np.float64)
        if self.size_parameter == "N":
            return means[:size, :].copy()
        return means[:, :size].copy() if self.size_parameter == "M" else means

    def instance(self, x: float | None = None, size: int | None = None) -> Instance:
        """The instance at ``x`` (and N or M for the varying families)."""
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
        label = self.name if x is None else f"{self.name} x={x:g}"
        if self.size_parameter is None:
            if size is not None:
                raise ValueError(f"experiment {self.name!r} takes no size parameter")
        else:
            size = self.default_size if size is None else size
            if size not in self.sizes:
                raise ValueError(f"experiment {self.name!r}: {self.size_parameter} must be one of "
                                 f"{list(self.sizes)}, got {size!r}")
            label = f"{label} {self.size_parameter}={size}"
        return Instance(self.means(x, size), self.threshold, label=label)

    def instances(self, size: int | None = None) -> dict[float, Instance]:
        """The instances over the whole x grid, keyed by x."""
        return {x: self.instance(x, size) for x in self.x_grid}


def grid(start: float, stop: float, step: float) -> tuple[float, ...]:
    """``start, start + step, ..., stop`` rounded to 10 decimals (so 0.1 + 0.2 is 0.3)."""
    count = int(round((stop - start) / step)) + 1
    return tuple(round(start + k * step, 10) for k in range(count))


X = None  # the free entry of a table

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
        x_grid=grid(0.31, 0.35, 0.01),
        short_title="Experiment 1",
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
        x_grid=grid(0.50, 0.70, 0.05),
        short_title="Experiment 2",
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
        x_grid=grid(0.05, 0.30, 0.05),
        short_title="Experiment 3",
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
        x_grid=grid(0.38, 0.46, 0.02),
        size_parameter="N",
        sizes=(4, 5, 6),
        default_size=6,
        short_title="Varying N (Table IV)",
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
        x_grid=grid(0.38, 0.46, 0.02),
        size_parameter="M",
        sizes=(2, 3, 4),
        default_size=4,
        short_title="Varying M (Table IV)",
    ),
}
#: The experiments of Section VI (Tables III and IV; not Table I's example), in the paper's order, with their
#: short titles: every study and figure of all of them reads this.
EXPERIMENT_TITLES = {name: experiment.short_title for name, experiment in EXPERIMENTS.items() if experiment.x_grid}


def table1_example() -> Instance:
    """The illustrative example of Table I: arm 0 is the best feasible arm."""
    return EXPERIMENTS["example"].instance()
