"""The grouped, thresholded bandit of Section II and the hardness quantities of Section V.

An instance is an ``N x M`` matrix of attribute means ``mu[i, j]`` in [0, 1] and a
threshold ``mu_TH`` in (0, 1). Arm ``i`` is feasible when every attribute mean
reaches the threshold (eq. (1)); the answer is the feasible arm with the largest
attribute-averaged mean, or "infeasible" (:data:`INFEASIBLE`) when none is.
Indices are 0-based (the paper counts from 1).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["CONTINUE", "CRASHED", "INFEASIBLE", "MEAN_TOLERANCE", "NO_ANSWER", "RESTART", "HardnessWarning",
           "Instance", "check_delta", "load_instance"]

# Every answer code, one meaning each: a run answers an arm (0 or more), INFEASIBLE, NO_ANSWER or CRASHED.
#: The answer "no arm is feasible" (the paper's flag ``f = 0``).
INFEASIBLE = -1
#: The answer of a run that hit its sample budget.
NO_ANSWER = -2
#: A compiled rule's decision to sample again rather than answer.
CONTINUE = -3
#: The answer of an as-run variant that ends where the authors' code raises an error (:mod:`gbai.asrun`).
CRASHED = -4
#: An as-run Feasibility then BAI decision: phase 2 starts again from no samples (fact A12).
RESTART = -5
#: Arm means closer than this count as equal. The paper's decimal instances tie
#: exactly on paper (vary-n at x = 0.40: (0.4 + 0.9)/2 = (0.6 + 0.7)/2) but not always
#: in binary floating point; the tolerance keeps S, R and ties as the paper has them.
MEAN_TOLERANCE = 1e-12


class HardnessWarning(UserWarning):
    """The hardness index is infinite (a tie for the best arm, or its attribute at the threshold)."""


def _shown(value: object) -> str:
    """``value`` for a message: a numpy scalar as the Python number it holds, not as ``np.float64(...)``."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _unit_interval(value: object, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {_shown(value)}") from None
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {_shown(value)}")
    return number


def check_delta(delta: float) -> float:
    """``delta`` as a float, after checking that it lies in (0, 1)."""
    return _unit_interval(delta, "delta")


def _check_means(means: object) -> np.ndarray:
    try:
        array = np.array(means, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("means must be a numeric N x M matrix") from None
    if array.ndim != 2:
        raise ValueError(f"means must be a 2-D matrix (N arms x M attributes), got {array.ndim} dimension(s)")
    if array.size == 0:
        raise ValueError(f"means must have at least one arm and one attribute, got shape {array.shape}")
    if np.isnan(array).any():
        i, j = np.argwhere(np.isnan(array))[0]
        raise ValueError(f"means contains NaN at arm {i}, attribute {j}")
    bad = (array < 0.0) | (array > 1.0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"attribute means must lie in [0, 1]; arm {i}, attribute {j} has {_shown(array[i, j])}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Instance:
    """A grouped bandit instance: attribute means (N x M, in [0, 1]) and a threshold in (0, 1).

    ``label`` names the instance in tables; it changes no result. A ValueError names
    any malformed input.
    """

    means: np.ndarray
    threshold: float
    label: str = field(default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "means", _check_means(self.means))
        object.__setattr__(self, "threshold", _unit_interval(self.threshold, "threshold"))
        object.__setattr__(self, "label", str(self.label))

    @property
    def n_arms(self) -> int:
        """N, the number of arms."""
        return int(self.means.shape[0])

    @property
    def n_attributes(self) -> int:
        """M, the number of attributes of every arm."""
        return int(self.means.shape[1])

    # ------------------------------------------------------------- Section II
    @property
    def arm_means(self) -> np.ndarray:
        """``mu_i = (1/M) sum_j mu_ij``."""
        return self.means.mean(axis=1)

    @property
    def feasible_mask(self) -> np.ndarray:
        """Arm ``i`` is feasible: ``min_j mu_ij >= mu_TH`` (eq. (1))."""
        return self.means.min(axis=1) >= self.threshold

    @property
    def feasible_set(self) -> tuple[int, ...]:
        """The feasible set F of eq. (1)."""
        return tuple(int(i) for i in np.flatnonzero(self.feasible_mask))

    @property
    def is_feasible(self) -> bool:
        """The flag f: some arm is feasible."""
        return bool(self.feasible_mask.any())

    @property
    def best_arms(self) -> tuple[int, ...]:
        """The feasible arms with the largest mean (more than one: a tie, which the paper rules out)."""
        if not self.is_feasible:
            return ()
        feasible, arm_means = self.feasible_mask, self.arm_means
        best = arm_means[feasible].max()
        return tuple(int(i) for i in np.flatnonzero(feasible & (arm_means >= best - MEAN_TOLERANCE)))

    @property
    def has_unique_answer(self) -> bool:
        """False when feasible arms tie for the best mean."""
        return len(self.best_arms) <= 1

    @property
    def best_arm(self) -> int | None:
        """``i*``, the best feasible arm (the lowest index on a tie), or None if infeasible."""
        best = self.best_arms
        return best[0] if best else None

    @property
    def answer(self) -> int:
        """The correct output: ``i*`` or :data:`INFEASIBLE`."""
        best = self.best_arm
        return INFEASIBLE if best is None else best

    # -------------------------------------------------------------- Section V
    @property
    def suboptimal_mask(self) -> np.ndarray:
        """The sub-optimal set S: arms with ``mu_i < mu_i*`` (empty if infeasible)."""
        if not self.is_feasible:
            return np.zeros(self.n_arms, dtype=bool)
        return self.arm_means < self.arm_means[self.best_arm] - MEAN_TOLERANCE

    @property
    def risky_mask(self) -> np.ndarray:
        """The risky set R = [N] minus S and ``i*``."""
        mask = ~self.suboptimal_mask
        if self.is_feasible:
            mask[self.best_arm] = False
        return mask

    @property
    def suboptimal_set(self) -> tuple[int, ...]:
        """S as arm indices."""
        return tuple(int(i) for i in np.flatnonzero(self.suboptimal_mask))

    @property
    def risky_set(self) -> tuple[int, ...]:
        """R as arm indices (all arms when infeasible)."""
        return tuple(int(i) for i in np.flatnonzero(self.risky_mask))

    @property
    def runner_up(self) -> int | None:
        """``i** = argmax_{i in S} mu_i``; None when S is empty."""
        if not self.suboptimal_mask.any():
            return None
        return int(np.argmax(np.where(self.suboptimal_mask, self.arm_means, -np.inf)))

    @property
    def gaps(self) -> np.ndarray:
        """``Delta_i = |mu_i* - mu_i|`` and ``Delta_i* = |mu_i* - mu_i**|`` (eq. (5)).

        ``Delta_i*`` is ``+inf`` when S is empty; every entry is NaN when infeasible.
        """
        if not self.is_feasible:
            return np.full(self.n_arms, np.nan)
        arm_means, best, runner_up = self.arm_means, self.best_arm, self.runner_up
        gaps = np.abs(arm_means[best] - arm_means)
        gaps[best] = np.inf if runner_up is None else abs(arm_means[best] - arm_means[runner_up])
        return gaps

    @property
    def attribute_gaps(self) -> np.ndarray:
        """``Delta_ij^attr = |mu_ij - mu_TH|``."""
        return np.abs(self.means - self.threshold)

    @property
    def arm_attribute_gaps(self) -> np.ndarray:
        """``Delta_i^attr = |min_j mu_ij - mu_TH|``."""
        return np.abs(self.means.min(axis=1) - self.threshold)

    def hardness_terms(self, *, competitor: str = "paper") -> np.ndarray:
        """The per-arm summands of ``H_id`` (Section V); infinite terms are ``inf``.

        ``competitor="paper"`` takes ``i**`` over all of S, infeasible arms included, as
        the paper writes it (reading note 9). ``"feasible"`` is our variant: ``i**``
        ranges over the feasible arms of S only.
        """
        if competitor not in ("paper", "feasible"):
            raise ValueError(f"competitor must be 'paper' or 'feasible', got {competitor!r}")
        attribute_gap = self.arm_attribute_gaps
        with np.errstate(divide="ignore"):
            if not self.is_feasible:
                return 1.0 / attribute_gap**2  # only the infeasible terms remain
            feasible, suboptimal, gaps, best = self.feasible_mask, self.suboptimal_mask, self.gaps, self.best_arm
            gap_best = gaps[best]
            if competitor == "feasible":
                rivals = suboptimal & feasible
                gap_best = self.arm_means[best] - self.arm_means[rivals].max() if rivals.any() else np.inf
            terms = np.full(self.n_arms, np.inf)  # a feasible arm outside S ties with i*: no finite term
            terms[best] = 1.0 / min(gap_best / 2.0, attribute_gap[best]) ** 2
            others = np.arange(self.n_arms) != best
            half = gaps / 2.0
            terms = np.where(others & feasible & suboptimal, 1.0 / half**2, terms)
            terms = np.where(others & ~feasible & ~suboptimal, 1.0 / attribute_gap**2, terms)
            terms = np.where(others & ~feasible & suboptimal, 1.0 / np.maximum(half, attribute_gap) ** 2, terms)
        return terms

    def hardness_index(self, *, competitor: str = "paper") -> float:
        """``H_id`` of Section V.

        ``H_id = 1/min(Delta_i*/2, Delta_i*^attr)^2 + sum_{F and S} 1/(Delta_i/2)^2
        + sum_{not F and R} 1/(Delta_i^attr)^2 + sum_{not F and S} 1/max(Delta_i/2, Delta_i^attr)^2``.
        Infinite (with a :class:`HardnessWarning` naming the cause) for a tie or an
        attribute of the best arm at the threshold.
        """
        terms = self.hardness_terms(competitor=competitor)
        if np.isinf(terms).any():
            warnings.warn(self.infinite_reason(), HardnessWarning, stacklevel=2)
            return math.inf
        return float(terms.sum())

    def infinite_reason(self) -> str:
        """Why ``H_id`` is infinite, in one sentence."""
        if not self.has_unique_answer:
            return f"H_id is infinite: feasible arms {list(self.best_arms)} tie for the best mean"
        return (f"H_id is infinite: arm {self.best_arm} has an attribute mean exactly at the threshold "
                f"{self.threshold}, so its feasibility can never be certified")

    def describe(self) -> dict:
        """A JSON-ready summary: answer, arm means, feasible set and ``H_id``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HardnessWarning)
            hardness = self.hardness_index()
        return {"label": self.label, "n_arms": self.n_arms, "n_attributes": self.n_attributes,
                "threshold": self.threshold, "answer": self.best_arm, "feasible": self.is_feasible,
                "feasible_set": list(self.feasible_set), "arm_means": [float(v) for v in self.arm_means],
                "H_id": hardness if math.isfinite(hardness) else None, "H_id_infinite": not math.isfinite(hardness)}

    def __repr__(self) -> str:
        label = f"{self.label!r}, " if self.label else ""
        return f"Instance({label}N={self.n_arms}, M={self.n_attributes}, threshold={self.threshold})"


def load_instance(path: str | Path, threshold: float, *, label: str | None = None) -> Instance:
    """Read an instance from a CSV file of N rows and M columns of attribute means.

    The file is UTF-8 text (a byte-order mark is allowed); a non-numeric first row is
    a header; blank lines are skipped. A ValueError names the file and the problem.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a CSV file of means")
    if not path.is_file():
        raise ValueError(f"means file not found: {path}")
    not_text = f"{path} is not a text file (expected a UTF-8 CSV of attribute means)"
    try:
        # utf-8-sig drops the byte-order mark some spreadsheets write; left in, it would
        # make the first row look like a header and silently drop it.
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(not_text) from None
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    if "\x00" in text:
        raise ValueError(not_text)
    rows: list[list[float]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append([float(cell) for cell in line.split(",")])
        except ValueError:
            if not rows and number == 1:
                continue
            raise ValueError(f"{path}, line {number}: not a row of numbers: {line!r}") from None
    if not rows:
        raise ValueError(f"{path} holds no rows of attribute means")
    widths = {len(row) for row in rows}
    if len(widths) != 1:
        raise ValueError(f"{path}: rows have different numbers of columns {sorted(widths)}")
    return Instance(np.array(rows), threshold, label=label if label is not None else path.stem)
