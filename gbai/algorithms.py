"""The registry of algorithms: a name, options, a step-engine policy and a compiled kernel.

An algorithm is named by a *spec*: its name, optionally followed by options, e.g.
``"css-lucb"`` or ``"css-lucb-plus:confidence=paper,sampling=all"``. The command
line accepts the same specs (``--algorithm SPEC``). :func:`resolve` checks a spec
and returns its canonical form, in which options left at their defaults are
omitted and the others sorted, so that two spellings of the same algorithm share
their cached runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .engine import Policy
from .fast import run_kernel
from .policies import ActionElimination, CSSLUCB, FeasibilityThenBAI
from .rewards import reward_exponents

__all__ = ["ALGORITHMS", "Algorithm", "PAPER_ALGORITHMS", "Resolved", "get_algorithm", "resolve"]

#: ``run_fast(instance, delta, keys, model, max_samples, options)`` returns
#: ``(answer, samples, rounds, counts, stopped)``.
FastRunner = Callable[..., tuple]


@dataclass(frozen=True)
class Algorithm:
    """A named algorithm.

    ``make_policy(**options)`` builds a fresh step-engine policy and ``run_fast``
    runs the same rule compiled. ``options`` maps each option name to its allowed
    values, the first being the default. ``modules`` lists the package modules the
    algorithm uses beyond the shared simulation core (see
    :func:`gbai.simulation.code_fingerprint`): editing them invalidates its cached runs.
    """

    name: str
    title: str
    reference: str
    make_policy: Callable[..., Policy]
    run_fast: FastRunner
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)
    modules: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolved:
    """A checked algorithm spec: the algorithm, every option's value and the canonical spec."""

    algorithm: Algorithm
    options: dict[str, str]
    spec: str

    def policy(self) -> Policy:
        return self.algorithm.make_policy(**self.options)


def _paper_runner(kernel: str) -> FastRunner:
    def run_fast(instance, delta, keys, model, max_samples, options):
        return run_kernel(kernel, instance.means, instance.threshold, delta, keys,
                          reward_exponents(instance.means), model, max_samples)

    return run_fast


ALGORITHMS: dict[str, Algorithm] = {
    "css-lucb": Algorithm(
        name="css-lucb",
        title="CSS-LUCB",
        reference="Algorithm 1, Section IV",
        make_policy=CSSLUCB,
        run_fast=_paper_runner("css-lucb"),
    ),
    "ae": Algorithm(
        name="ae",
        title="Action Elimination with attribute elimination",
        reference="Section VI, baseline 1 (reading note 6)",
        make_policy=ActionElimination,
        run_fast=_paper_runner("ae"),
    ),
    "feasibility-then-bai": Algorithm(
        name="feasibility-then-bai",
        title="Feasibility then BAI",
        reference="Section VI, baseline 2 (reading note 7)",
        make_policy=FeasibilityThenBAI,
        run_fast=_paper_runner("feasibility-then-bai"),
    ),
}

#: The algorithms the paper compares (Figure 1).
PAPER_ALGORITHMS = ("css-lucb", "ae", "feasibility-then-bai")


def register(algorithm: Algorithm) -> Algorithm:
    """Add an algorithm to :data:`ALGORITHMS` (used by :mod:`gbai.beyond`)."""
    ALGORITHMS[algorithm.name] = algorithm
    return algorithm


def get_algorithm(name: str) -> Algorithm:
    """Look an algorithm up by name (without options); a ValueError lists the valid names."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose from {sorted(ALGORITHMS)}") from None


def resolve(spec: str) -> Resolved:
    """Parse ``"name"`` or ``"name:option=value,option=value"`` into a :class:`Resolved`."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an algorithm spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    algorithm = get_algorithm(name.strip())
    options = {key: values[0] for key, values in algorithm.options.items()}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, equals, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or key not in algorithm.options:
            known = ", ".join(f"{k}={'|'.join(v)}" for k, v in algorithm.options.items()) or "none"
            raise ValueError(f"algorithm {algorithm.name!r}: bad option {item!r}; options: {known}")
        if value not in algorithm.options[key]:
            raise ValueError(
                f"algorithm {algorithm.name!r}: option {key} must be one of {list(algorithm.options[key])}, "
                f"got {value!r}"
            )
        options[key] = value
    changed = [f"{key}={value}" for key, value in sorted(options.items()) if value != algorithm.options[key][0]]
    canonical = algorithm.name + (":" + ",".join(changed) if changed else "")
    return Resolved(algorithm, options, canonical)
