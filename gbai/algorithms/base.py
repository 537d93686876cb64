"""What every algorithm is: a name, options, a step-engine policy and a compiled runner; and its specs.

An algorithm is named by a *spec*: its name, optionally followed by options, e.g.
``"css-lucb"`` or ``"css-lucb-plus:confidence=paper,sampling=all"``. The command
line accepts the same specs (``--algorithm SPEC``). :func:`parse_spec` checks a
spec against a registry and returns its canonical form, in which options left at
their defaults are omitted and the others sorted, so that two spellings of the
same algorithm share their cached runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..engine import Policy

__all__ = ["Algorithm", "FastRunner", "Resolved", "canonical_spec", "lookup", "parse_spec"]

#: ``run_fast(instance, delta, keys, model, max_samples, options)`` returns
#: ``(answer, samples, rounds, counts, stopped)``.
FastRunner = Callable[..., tuple]


@dataclass(frozen=True)
class Algorithm:
    """A named algorithm.

    ``make_policy(**options)`` builds a fresh step-engine policy and ``run_fast``
    runs the same rule compiled. ``options`` maps each option name to its allowed
    values, the first being the default. ``modules`` lists the package files (paths
    relative to ``gbai/``) the algorithm uses beyond the shared simulation core (see
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


def lookup(name: str, registry: Mapping[str, Algorithm]) -> Algorithm:
    """Look an algorithm up by name (without options); a ValueError lists the valid names."""
    try:
        return registry[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose from {sorted(registry)}") from None


def canonical_spec(name: str, options: Mapping[str, str], choices: Mapping[str, tuple[str, ...]]) -> str:
    """``name`` followed by the options that differ from their defaults, sorted by option name."""
    changed = [f"{key}={value}" for key, value in sorted(options.items()) if value != choices[key][0]]
    return name + (":" + ",".join(changed) if changed else "")


def parse_spec(spec: str, registry: Mapping[str, Algorithm]) -> Resolved:
    """Parse ``"name"`` or ``"name:option=value,option=value"`` into a :class:`Resolved`."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an algorithm spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    algorithm = lookup(name.strip(), registry)
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
    return Resolved(algorithm, options, canonical_spec(algorithm.name, options, algorithm.options))
