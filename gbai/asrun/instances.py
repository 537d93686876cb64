"""The instances of the published figures as the authors' code ran them (see ``gbai.asrun``).

Every fixed table entry ``v`` was typed as the Beta parameter ``b = round(1/v - 1, 2)``
of ``Beta(1, b)``, whose mean is ``1/(1 + b)`` (0.6 is really 0.5988, 0.9 is 0.9009:
:func:`typed_mean`); the free entry uses ``b = 1/x - 1`` exactly. Figure 1a has its
own arms 3 and 4, Figure 1b six values of ``x`` in steps of 0.04, and Figure 2b's
arm 0 was ``[0.6, 0.7]`` and ``[0.6, 0.7, 0.65]`` for M = 2 and 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..paper.instances import EXPERIMENTS, Experiment, X, grid

__all__ = ["PUBLISHED_EXPERIMENTS", "PublishedExperiment", "typed_beta_parameter", "typed_mean"]


def typed_beta_parameter(value: float) -> float:
    """The Beta parameter ``b = round(1/v - 1, 2)`` the authors typed for a table entry ``v``."""
    value = float(value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"a typed table entry must lie in (0, 1], got {value}")
    return round(1.0 / value - 1.0, 2)


def typed_mean(value: float) -> float:
    """The mean ``1/(1 + b)`` of ``Beta(1, b)`` for the typed ``b`` of entry ``v`` (0.6 -> 0.5988)."""
    return 1.0 / (1.0 + typed_beta_parameter(value))


@dataclass(frozen=True)
class PublishedExperiment(Experiment):
    """A table with typed means; ``row_overrides`` holds ``(size, row, values)`` replacing a row at that size."""

    row_overrides: tuple[tuple[int, int, tuple[float, ...]], ...] = ()

    def means(self, x: float | None, size: int | None) -> np.ndarray:
        free = None if x is None else 1.0 / (1.0 + (1.0 / x - 1.0))
        means = np.array([[free if value is None else typed_mean(value) for value in row] for row in self.rows],
                         dtype=np.float64)
        if self.size_parameter is None:
            return means
        means = (means[:size, :] if self.size_parameter == "N" else means[:, :size]).copy()
        for override_size, row, values in self.row_overrides:
            if override_size == size:
                means[row] = [typed_mean(value) for value in values]
        return means


def _family(name: str, title: str, table: str, **changes) -> PublishedExperiment:
    base = EXPERIMENTS[table]
    fields = dict(name=name, title=title, source=f"the authors' code, Figure {name[3:]}", threshold=base.threshold,
                  rows=base.rows, x_grid=base.x_grid, size_parameter=base.size_parameter, sizes=base.sizes,
                  default_size=base.default_size)
    return PublishedExperiment(**{**fields, **changes})


#: The instance families of the published figures, keyed by figure.
PUBLISHED_EXPERIMENTS: dict[str, PublishedExperiment] = {
    "fig1a": _family("fig1a", "Figure 1a as run: experiment 1 with other arms 3 and 4, typed means", "exp1",
                     rows=EXPERIMENTS["exp1"].rows[:3] + ((X, 0.5, 0.6, 0.9, 0.5), (X, 0.35, 0.35, 0.8, 0.9))),
    "fig1b": _family("fig1b", "Figure 1b as run: experiment 2, typed means, six values of x", "exp2",
                     x_grid=grid(0.50, 0.70, 0.04)),
    "fig1c": _family("fig1c", "Figure 1c as run: experiment 3, typed means", "exp3"),
    "fig2a": _family("fig2a", "Figure 2a as run: varying N, typed means", "vary-n"),
    "fig2b": _family("fig2b", "Figure 2b as run: varying M, typed means, arm 0 as typed for M = 2 and 3", "vary-m",
                     row_overrides=((2, 0, (0.6, 0.7)), (3, 0, (0.6, 0.7, 0.65)))),
}
