"""The registry: every algorithm by name, with its step-engine policy, its compiled run and its options.

A *spec* names an algorithm and options, e.g. ``"css-lucb"``,
``"css-lucb-plus:confidence=paper,sampling=all"`` or ``"css-lucb:as=fig1"`` (a
preset, :data:`gbai.asrun.variants.PRESETS`); the command line takes the same specs.
:func:`resolve` checks a spec and gives its canonical form (options at their
defaults left out, the others sorted), so two spellings share their cached runs. A
new algorithm is a module of ``gbai/beyond/`` and one entry of :data:`ALGORITHMS`.
The plain best-arm references (Track-and-Stop, Top Two: ``M = 1`` only, compiled
engine only) are a second table, :data:`REFERENCES`, that specs reach as well, e.g.
``"track-and-stop:stopping=bets"``.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Mapping

import numpy as np

from .asrun.variants import OPTIONS as AS_RUN_OPTIONS
from .asrun.variants import PRESETS as AS_RUN_PRESETS
from .asrun.variants import run_variant
from .beyond.betting import BETTING_OPTIONS, BettingGBAI, level_free, run_betting
from .beyond.css_lucb_plus import PLUS_OPTIONS, CSSLUCBPlus, run_css_lucb_plus
from .beyond.lma_glr import LMAGLR, run_lma_glr
from .beyond.references import STOPPING_RULES, run_reference, run_references
from .fast.paper import run_kernel
from .paper import CSSLUCB, ActionElimination, FeasibilityThenBAI
from .paper.engine import Policy
from .paper.model import Instance

__all__ = ["ALGORITHMS", "PAPER_ALGORITHMS", "RECOMMENDED", "REFERENCES", "Algorithm", "Resolved", "canonical_spec",
           "get_algorithm", "resolve", "run_together"]

#: ``kernel(instance, deltas, keys, model, max_samples, options) -> [(answer, samples, rounds, counts, stopped), ...]``:
#: one pass of one seed; ``deltas`` a 1-D float array of distinct levels in (0, 1) (:meth:`Resolved.run_fast`).
Kernel = Callable[[Instance, np.ndarray, np.ndarray, int, int, dict], list]


@dataclass(frozen=True)
class Algorithm:
    """A named algorithm.

    ``policy(**options)`` builds a step-engine policy (:mod:`gbai.paper.engine`) and
    ``kernel`` runs the same rule compiled; a reference has no policy (``None``). ``options`` maps each option to its
    values, the default first; ``presets`` names sets of options (``as=NAME``).
    ``as_run`` is the compiled run of the authors' as-run variants (:mod:`gbai.asrun`):
    a spec that moves any option from its default (the text's reading) runs there,
    in the compiled engine only; at the defaults the spec runs ``kernel``. Both take
    a vector of deltas (:data:`Kernel`). ``level_free(options)`` is true for the specs
    whose sampling never reads delta (none when it is ``None``): :meth:`Resolved.run_fast`
    gives their kernel the whole vector, and it plays the seed once, recording the stop
    of each delta; the others' kernel is called once per delta. ``stop_option`` names an
    option that only the stopping rule reads, and ``together(instance, deltas, keys, model,
    max_samples, [options, ...])`` runs several values of it in one pass (one list of runs
    per options): specs that differ in it alone share the pass (:func:`run_together`).
    """

    name: str
    title: str
    reference: str
    policy: Callable[..., Policy] | None
    kernel: Kernel
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)
    presets: dict[str, dict[str, str]] = field(default_factory=dict)
    as_run: Kernel | None = None
    level_free: Callable[[dict], bool] | None = None
    stop_option: str | None = None
    together: Callable[..., list] | None = None

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules that define the policy and the kernels (the cache follows their imports)."""
        parts = (self.policy, self.kernel, self.as_run)
        return tuple(sorted({getattr(part, "func", part).__module__ for part in parts if part is not None}))


@dataclass(frozen=True)
class Resolved:
    """A checked spec: the algorithm, every option's value and the canonical spec."""

    algorithm: Algorithm
    options: dict[str, str]
    spec: str

    def policy(self) -> Policy:
        """A fresh step-engine policy for this spec."""
        if self.algorithm.policy is None:
            raise ValueError(f"{self.spec}: the best-arm references run in the compiled engine only (engine='fast')")
        if self.algorithm.as_run is None:
            return self.algorithm.policy(**self.options)
        if self.as_run:
            raise ValueError(f"{self.spec}: the as-run options of the authors' code run in the compiled engine "
                             "only (engine='fast')")
        return self.algorithm.policy()

    @property
    def as_run(self) -> bool:
        """True when the spec runs one of the authors' as-run variants (an option away from the text)."""
        return self.algorithm.as_run is not None and self.spec != self.algorithm.name

    def run_fast(self, instance: Instance, deltas: np.ndarray, keys: np.ndarray, model: int,
                 max_samples: int) -> list[tuple]:
        """The compiled runs of one seed at each of ``deltas``: ``(answer, samples, rounds, counts, stopped)`` each.

        One pass for them all when :attr:`level_free`, else one per delta (decided here only).
        """
        kernel = self.algorithm.as_run if self.as_run else self.algorithm.kernel
        if self.level_free:
            return kernel(instance, deltas, keys, model, max_samples, self.options)
        return [kernel(instance, deltas[k:k + 1], keys, model, max_samples, self.options)[0]
                for k in range(len(deltas))]

    @property
    def level_free(self) -> bool:
        """True when the spec's sampling never reads delta, so that one pass serves a list of deltas."""
        free = self.algorithm.level_free
        return not self.as_run and free is not None and free(self.options)

    @property
    def pass_key(self) -> tuple | None:
        """Specs with the same key share one pass (:func:`run_together`); ``None``: a pass of its own."""
        option = self.algorithm.stop_option
        if option is None or not self.level_free:
            return None
        return self.algorithm.name, tuple(sorted((key, value) for key, value in self.options.items() if key != option))


def run_together(specs: list[Resolved], instance: Instance, deltas: np.ndarray, keys: np.ndarray, model: int,
                 max_samples: int) -> list[list[tuple]]:
    """:meth:`Resolved.run_fast` of each spec on one seed, in one pass when they share a :attr:`Resolved.pass_key`.

    One list of runs per spec, one run per delta; each run is the one the spec alone gives.
    """
    if len(specs) == 1:
        return [specs[0].run_fast(instance, deltas, keys, model, max_samples)]
    key = specs[0].pass_key
    if key is None or any(spec.pass_key != key for spec in specs):
        raise ValueError(f"specs {[spec.spec for spec in specs]} do not share a pass")
    return specs[0].algorithm.together(instance, deltas, keys, model, max_samples, [spec.options for spec in specs])


def _always(options: dict) -> bool:
    """For a rule whose sampling never reads delta, whatever its options (LMA-GLR, the references)."""
    return True


def _paper(name: str, title: str, reference: str, policy: Callable[[], Policy]) -> Algorithm:
    return Algorithm(name, title, reference, policy, partial(run_kernel, name), AS_RUN_OPTIONS[name],
                     AS_RUN_PRESETS[name], as_run=partial(run_variant, name))


#: Every algorithm by name, in the order the command line lists them.
ALGORITHMS: dict[str, Algorithm] = {
    "css-lucb": _paper("css-lucb", "CSS-LUCB", "Algorithm 1, Section IV", CSSLUCB),
    "ae": _paper("ae", "Action Elimination with attribute elimination", "Section VI, baseline 1 (reading note 6)",
                 ActionElimination),
    "feasibility-then-bai": _paper("feasibility-then-bai", "Feasibility then BAI",
                                   "Section VI, baseline 2 (reading note 7)", FeasibilityThenBAI),
    "css-lucb-plus": Algorithm("css-lucb-plus", "CSS-LUCB+ (anytime bounds, averaged arm radius, targeted sampling)",
                               "beyond the paper: gbai.beyond.css_lucb_plus", CSSLUCBPlus, run_css_lucb_plus,
                               PLUS_OPTIONS),
    "lma-glr": Algorithm("lma-glr", "LMA-GLR (lazy mirror ascent tracking, GLR stopping)",
                         "beyond the paper: gbai.beyond.lma_glr", LMAGLR, run_lma_glr,
                         level_free=_always),
    "betting": Algorithm("betting", "Betting-GBAI (betting e-values, N+M-1 union terms, weakest-test sampling; "
                         "with sampling=level-free, the package's recommended algorithm)",
                         "beyond the paper: gbai.beyond.betting", BettingGBAI, run_betting, BETTING_OPTIONS,
                         level_free=level_free),
}


def _reference(sampling: str, title: str) -> Algorithm:
    return Algorithm(sampling, title, "beyond the paper: gbai.beyond.references", None,
                     partial(run_reference, sampling), {"stopping": STOPPING_RULES}, level_free=_always,
                     stop_option="stopping", together=partial(run_references, sampling))


#: The plain best-arm references (:mod:`gbai.beyond.references`), by sampling rule: option ``stopping`` picks
#: the stop (``kt``, the default, ``gk`` and ``bets`` are proven, ``heuristic`` is not, ``oracle`` is told the
#: means). Instances with one attribute only, compiled engine only; one pass serves a list of deltas.
REFERENCES: dict[str, Algorithm] = {
    "track-and-stop": _reference("track-and-stop", "Track-and-Stop (D-tracking of w*; plain best arm, M = 1)"),
    "top-two": _reference("top-two", "Top Two (EB-TCI, beta = 1/2; plain best arm, M = 1)"),
}

#: The package's recommended algorithm: Betting-GBAI with level-free sampling. It is
#: delta-correct for every reward law on [0, 1] (the book page "Why the recommended
#: algorithm is delta-correct"), needs about the samples of Betting-GBAI's default
#: (notebook 12, section 7) and, as its sampling never looks at delta, one run serves
#: a whole list of deltas (:func:`gbai.run_deltas`).
RECOMMENDED = "betting:sampling=level-free"

#: The algorithms the paper compares (Figure 1).
PAPER_ALGORITHMS = ("css-lucb", "ae", "feasibility-then-bai")


def get_algorithm(name: str, registry: Mapping[str, Algorithm] | None = None) -> Algorithm:
    """The algorithm called ``name`` (without options) in ``registry`` (default: :data:`ALGORITHMS`, then
    :data:`REFERENCES`); a ValueError lists the valid names."""
    registry = ChainMap(ALGORITHMS, REFERENCES) if registry is None else registry
    try:
        return registry[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose from {sorted(registry)}") from None


def canonical_spec(name: str, options: Mapping[str, str], choices: Mapping[str, tuple[str, ...]]) -> str:
    """``name`` followed by the options that differ from their defaults, sorted by option name."""
    changed = [f"{key}={value}" for key, value in sorted(options.items()) if value != choices[key][0]]
    return name + (":" + ",".join(changed) if changed else "")


def resolve(spec: str, registry: Mapping[str, Algorithm] | None = None) -> Resolved:
    """Parse ``"name"`` or ``"name:option=value,..."`` (a preset ``as=NAME`` first, then options)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an algorithm spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    algorithm = get_algorithm(name.strip(), registry)
    options = {key: values[0] for key, values in algorithm.options.items()}
    items = [part.strip() for part in rest.split(",") if part.strip()]
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
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or key not in algorithm.options:
            known = ", ".join(f"{k}={'|'.join(v)}" for k, v in algorithm.options.items()) or "none"
            raise ValueError(f"algorithm {algorithm.name!r}: bad option {item!r}; options: {known}")
        if value not in algorithm.options[key]:
            raise ValueError(f"algorithm {algorithm.name!r}: option {key} must be one of "
                             f"{list(algorithm.options[key])}, got {value!r}")
        options[key] = value
    return Resolved(algorithm, options, canonical_spec(algorithm.name, options, algorithm.options))
