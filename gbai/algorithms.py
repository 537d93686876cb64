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
from ._as_run_ae import AE_OPTIONS, AE_PRESETS, ActionEliminationAsRun, run_ae_as_run
from ._as_run_css import CSS_OPTIONS, CSS_PRESETS, CSSLUCBAsRun, run_css_lucb_as_run
from ._as_run_ftb import FTB_OPTIONS, FTB_PRESETS, FeasibilityThenBAIAsRun, run_ftb_as_run
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
    #: Named option sets, selected in a spec with ``as=NAME`` (e.g. ``css-lucb:as=fig1``).
    presets: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """A checked algorithm spec: the algorithm, every option's value and the canonical spec."""

    algorithm: Algorithm
    options: dict[str, str]
    spec: str

    def policy(self) -> Policy:
        return self.algorithm.make_policy(**self.options)


def _is_text(options: dict, choices: dict) -> bool:
    return all(options.get(key, values[0]) == values[0] for key, values in choices.items())


def _paper_runner(kernel: str, choices: dict, as_run) -> FastRunner:
    """The text's kernel when every option is at its default, else the as-run kernel."""

    def run_fast(instance, delta, keys, model, max_samples, options):
        exponents = reward_exponents(instance.means)
        if _is_text(options, choices):
            return run_kernel(kernel, instance.means, instance.threshold, delta, keys, exponents, model, max_samples)
        return as_run(instance, delta, keys, model, exponents, max_samples, options)

    return run_fast


def _paper_policy(text_policy, as_run_policy, choices: dict):
    def make_policy(**options):
        return text_policy() if _is_text(options, choices) else as_run_policy(**options)

    return make_policy


ALGORITHMS: dict[str, Algorithm] = {
    "css-lucb": Algorithm(
        name="css-lucb",
        title="CSS-LUCB",
        reference="Algorithm 1, Section IV",
        make_policy=_paper_policy(CSSLUCB, CSSLUCBAsRun, CSS_OPTIONS),
        run_fast=_paper_runner("css-lucb", CSS_OPTIONS, run_css_lucb_as_run),
        options=CSS_OPTIONS,
        modules=("_as_run.py", "_as_run_css.py"),
        presets=CSS_PRESETS,
    ),
    "ae": Algorithm(
        name="ae",
        title="Action Elimination with attribute elimination",
        reference="Section VI, baseline 1 (reading note 6)",
        make_policy=_paper_policy(ActionElimination, ActionEliminationAsRun, AE_OPTIONS),
        run_fast=_paper_runner("ae", AE_OPTIONS, run_ae_as_run),
        options=AE_OPTIONS,
        modules=("_as_run.py", "_as_run_ae.py"),
        presets=AE_PRESETS,
    ),
    "feasibility-then-bai": Algorithm(
        name="feasibility-then-bai",
        title="Feasibility then BAI",
        reference="Section VI, baseline 2 (reading note 7)",
        make_policy=_paper_policy(FeasibilityThenBAI, FeasibilityThenBAIAsRun, FTB_OPTIONS),
        run_fast=_paper_runner("feasibility-then-bai", FTB_OPTIONS, run_ftb_as_run),
        options=FTB_OPTIONS,
        modules=("_as_run.py", "_as_run_ftb.py"),
        presets=FTB_PRESETS,
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
    items = [part.strip() for part in rest.split(",") if part.strip()]
    # A preset (as=NAME) sets its options first; options spelled out in the spec override it.
    presets = [item for item in items if item.partition("=")[0].strip() == "as"]
    if presets and not algorithm.presets:
        raise ValueError(f"algorithm {algorithm.name!r} has no presets (as=...)")
    if len(presets) > 1:
        raise ValueError(f"algorithm {algorithm.name!r}: at most one preset (as=...), got {presets}")
    for item in presets:
        preset = item.partition("=")[2].strip()
        if preset not in algorithm.presets:
            raise ValueError(f"algorithm {algorithm.name!r}: preset as={preset!r} unknown; choose from "
                             f"{sorted(algorithm.presets)}")
        options.update(algorithm.presets[preset])
    for item in items:
        if item in presets:
            continue
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
