"""The registry of algorithms: one name, a step-engine policy and a compiled kernel.

The names are the ones the command line accepts (``--algorithm NAME``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .engine import Policy
from .policies import ActionElimination, CSSLUCB, FeasibilityThenBAI

__all__ = ["ALGORITHMS", "Algorithm", "get_algorithm"]


@dataclass(frozen=True)
class Algorithm:
    """A named algorithm.

    ``make_policy`` builds a fresh step-engine policy; ``kernel`` names the compiled
    kernel of :mod:`gbai.fast` that runs the same rule. ``modules`` lists the package
    modules the algorithm uses beyond the shared simulation core (see
    :func:`gbai.simulation.code_fingerprint`): editing them invalidates its cached runs.
    """

    name: str
    title: str
    reference: str
    make_policy: Callable[[], Policy]
    kernel: str
    modules: tuple[str, ...] = ()


ALGORITHMS: dict[str, Algorithm] = {
    "css-lucb": Algorithm(
        name="css-lucb",
        title="CSS-LUCB",
        reference="Algorithm 1, Section IV",
        make_policy=CSSLUCB,
        kernel="css-lucb",
    ),
    "ae": Algorithm(
        name="ae",
        title="Action Elimination with attribute elimination",
        reference="Section VI, baseline 1 (reading note 6)",
        make_policy=ActionElimination,
        kernel="ae",
    ),
    "feasibility-then-bai": Algorithm(
        name="feasibility-then-bai",
        title="Feasibility then BAI",
        reference="Section VI, baseline 2 (reading note 7)",
        make_policy=FeasibilityThenBAI,
        kernel="feasibility-then-bai",
    ),
}

#: The algorithms the paper compares (Figure 1).
PAPER_ALGORITHMS = ("css-lucb", "ae", "feasibility-then-bai")


def get_algorithm(name: str) -> Algorithm:
    """Look an algorithm up by name; a ValueError lists the valid names."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose from {sorted(ALGORITHMS)}") from None
