"""The registry of algorithms: one module per algorithm, one line per algorithm below.

Each module of this package holds one algorithm whole: its docstring with the
paper's equations, its options, its step-engine policy, its compiled decision
function (which both engines drive) and its registry entry ``ALGORITHM``. The
shared pieces are :mod:`~gbai.algorithms.base` (what an algorithm is, specs) and
:mod:`~gbai.algorithms.kernels` (compiled helpers and the run loop of the paper's
algorithms). To add an algorithm, write its module and add one line to
:data:`ALGORITHMS`.

An algorithm is named by a *spec*: its name, optionally followed by options, e.g.
``"css-lucb"`` or ``"css-lucb-plus:confidence=paper,sampling=all"``; :func:`resolve`
checks it and returns its canonical form.
"""

from __future__ import annotations

from . import action_elimination, betting, css_lucb, css_lucb_plus, feasibility_then_bai, lma_glr
from .base import Algorithm, Resolved, lookup, parse_spec

__all__ = ["ALGORITHMS", "Algorithm", "PAPER_ALGORITHMS", "Resolved", "get_algorithm", "resolve"]

#: Every algorithm by name, in the order the command line lists them.
ALGORITHMS: dict[str, Algorithm] = {
    "css-lucb": css_lucb.ALGORITHM,
    "ae": action_elimination.ALGORITHM,
    "feasibility-then-bai": feasibility_then_bai.ALGORITHM,
    "css-lucb-plus": css_lucb_plus.ALGORITHM,
    "lma-glr": lma_glr.ALGORITHM,
    "betting": betting.ALGORITHM,
}

#: The algorithms the paper compares (Figure 1).
PAPER_ALGORITHMS = ("css-lucb", "ae", "feasibility-then-bai")


def get_algorithm(name: str) -> Algorithm:
    """Look an algorithm up by name (without options); a ValueError lists the valid names."""
    return lookup(name, ALGORITHMS)


def resolve(spec: str) -> Resolved:
    """Parse ``"name"`` or ``"name:option=value,option=value"`` into a :class:`Resolved`."""
    return parse_spec(spec, ALGORITHMS)
