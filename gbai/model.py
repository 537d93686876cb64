"""The grouped, thresholded bandit model of Section II and the quantities of Section V.

An instance is an ``N x M`` matrix of attribute means ``mu[i, j]`` in [0, 1] and a
threshold ``mu_TH`` in (0, 1). Arm ``i`` is *feasible* when every attribute mean
reaches the threshold (eq. (1) of the paper); the *answer* is the feasible arm with
the largest attribute-averaged mean, or "infeasible" when no arm is feasible.

Arm and attribute indices are 0-based throughout the package (the paper counts
from 1). The constant :data:`INFEASIBLE` (-1) stands for the answer "no arm is
feasible" wherever an arm index is expected.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "CRASHED",
    "INFEASIBLE",
    "NO_ANSWER",
    "HardnessWarning",
    "Instance",
    "check_delta",
    "load_instance",
]

#: Answer meaning "no arm is feasible" (the paper's flag ``f = 0``).
INFEASIBLE = -1
#: Answer recorded for a run that hit its sample budget before stopping.
NO_ANSWER = -2
#: Answer recorded when a run reaches a state in which the authors' research code
#: would raise an error (no arm left in their Action Elimination, no feasible arm in
#: their Feasibility then BAI); only the as-run variants of issue 9 produce it.
CRASHED = -4
#: Arm means closer than this are treated as equal when the model compares them.
#: The paper's instances are decimal numbers whose averages tie exactly on paper
#: (vary-n at x = 0.40: (0.4 + 0.9)/2 = (0.6 + 0.7)/2), but not always in binary
#: floating point; the tolerance keeps S, R and the ties faithful to the paper.
MEAN_TOLERANCE = 1e-12


class HardnessWarning(UserWarning):
    """Issued when the hardness index is infinite (a tie, or an attribute at the threshold)."""


def check_delta(delta: float) -> float:
    """Return ``delta`` as a float after checking that it lies in (0, 1)."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not (0.0 < value < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    return value


def _check_threshold(threshold: float) -> float:
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"threshold must be a number in (0, 1), got {threshold!r}") from None
    if not (0.0 < value < 1.0):
        raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold!r}")
    return value


def _check_means(means: object) -> np.ndarray:
    try:
        array = np.array(means, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("means must be a numeric N x M matrix") from None
    if array.ndim != 2:
        raise ValueError(
            f"means must be a 2-D matrix (N arms x M attributes), got {array.ndim} dimension(s)"
        )
    if array.size == 0:
        raise ValueError(f"means must have at least one arm and one attribute, got shape {array.shape}")
    if np.isnan(array).any():
        i, j = np.argwhere(np.isnan(array))[0]
        raise ValueError(f"means contains NaN at arm {i}, attribute {j}")
    if ((array < 0.0) | (array > 1.0)).any():
        i, j = np.argwhere((array < 0.0) | (array > 1.0))[0]
        raise ValueError(
            f"attribute means must lie in [0, 1]; arm {i}, attribute {j} has {array[i, j]!r}"
        )
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Instance:
    """A grouped bandit instance: attribute means (N x M) and a feasibility threshold.

    Parameters
    ----------
    means:
        Matrix of attribute means ``mu[i, j]``, each in [0, 1].
    threshold:
        The paper's ``mu_TH`` in (0, 1). Arm ``i`` is feasible iff ``min_j mu[i, j] >= threshold``.
    label:
        A free-form name used in tables and sweeps; it does not affect any result.

    Raises
    ------
    ValueError
        For a matrix that is not 2-D, empty, contains NaN or values outside [0, 1],
        or a threshold outside (0, 1).
    """

    means: np.ndarray
    threshold: float
    label: str = field(default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "means", _check_means(self.means))
        object.__setattr__(self, "threshold", _check_threshold(self.threshold))
        object.__setattr__(self, "label", str(self.label))

    # ------------------------------------------------------------------ shape
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
        """``mu_i = (1/M) sum_j mu_ij``, the attribute-averaged mean of each arm."""
        return self.means.mean(axis=1)

    @property
    def feasible_mask(self) -> np.ndarray:
        """Boolean vector: arm ``i`` is feasible (eq. (1): ``min_j mu_ij >= mu_TH``)."""
        return self.means.min(axis=1) >= self.threshold

    @property
    def feasible_set(self) -> tuple[int, ...]:
        """The feasible set F of eq. (1), as sorted 0-based arm indices."""
        return tuple(int(i) for i in np.flatnonzero(self.feasible_mask))

    @property
    def is_feasible(self) -> bool:
        """The feasibility flag f: True when at least one arm is feasible."""
        return bool(self.feasible_mask.any())

    @property
    def best_arms(self) -> tuple[int, ...]:
        """All feasible arms that attain the largest arm mean (more than one means a tie)."""
        if not self.is_feasible:
            return ()
        arm_means = self.arm_means
        feasible = self.feasible_mask
        best = arm_means[feasible].max()
        ties = feasible & (arm_means >= best - MEAN_TOLERANCE)
        return tuple(int(i) for i in np.flatnonzero(ties))

    @property
    def has_unique_answer(self) -> bool:
        """False when two or more feasible arms tie for the best mean (the paper assumes not)."""
        return len(self.best_arms) <= 1

    @property
    def best_arm(self) -> int | None:
        """``i*``, the best feasible arm, or None when the instance is infeasible.

        With a tie the lowest index is returned; :attr:`has_unique_answer` is then False.
        """
        best = self.best_arms
        return best[0] if best else None

    @property
    def answer(self) -> int:
        """The correct output of a delta-correct algorithm: ``i*`` or :data:`INFEASIBLE`."""
        best = self.best_arm
        return INFEASIBLE if best is None else best

    # -------------------------------------------------------------- Section V
    @property
    def suboptimal_mask(self) -> np.ndarray:
        """Membership of the sub-optimal set S: arms with ``mu_i < mu_i*`` (empty if infeasible).

        Means within :data:`MEAN_TOLERANCE` of ``mu_i*`` count as equal, hence not in S.
        """
        if not self.is_feasible:
            return np.zeros(self.n_arms, dtype=bool)
        return self.arm_means < self.arm_means[self.best_arm] - MEAN_TOLERANCE

    @property
    def risky_mask(self) -> np.ndarray:
        """Membership of the risky set R = [N] minus (S and i*)."""
        mask = ~self.suboptimal_mask
        if self.is_feasible:
            mask[self.best_arm] = False
        return mask

    @property
    def suboptimal_set(self) -> tuple[int, ...]:
        """S, the arms whose mean is below the best feasible arm's (Section V)."""
        return tuple(int(i) for i in np.flatnonzero(self.suboptimal_mask))

    @property
    def risky_set(self) -> tuple[int, ...]:
        """R, the arms that are neither in S nor the best arm (all of [N] when infeasible)."""
        return tuple(int(i) for i in np.flatnonzero(self.risky_mask))

    @property
    def runner_up(self) -> int | None:
        """``i** = argmax_{i in S} mu_i`` (Section V); None when S is empty."""
        suboptimal = self.suboptimal_mask
        if not suboptimal.any():
            return None
        means = np.where(suboptimal, self.arm_means, -np.inf)
        return int(np.argmax(means))

    @property
    def gaps(self) -> np.ndarray:
        """``Delta_i`` of Section V, one per arm.

        ``Delta_i = |mu_i* - mu_i|`` for ``i != i*`` and ``Delta_i* = |mu_i* - mu_i**|``
        (eq. (5)). ``Delta_i*`` is ``+inf`` when S is empty (no ``i**`` exists: nothing
        competes with the best arm on the mean). All entries are NaN for an infeasible
        instance, where no best arm exists.
        """
        if not self.is_feasible:
            return np.full(self.n_arms, np.nan)
        arm_means = self.arm_means
        best = self.best_arm
        gaps = np.abs(arm_means[best] - arm_means)
        runner_up = self.runner_up
        gaps[best] = np.inf if runner_up is None else abs(arm_means[best] - arm_means[runner_up])
        return gaps

    @property
    def attribute_gaps(self) -> np.ndarray:
        """``Delta_ij^attr = |mu_ij - mu_TH|``, an N x M matrix."""
        return np.abs(self.means - self.threshold)

    @property
    def arm_attribute_gaps(self) -> np.ndarray:
        """``Delta_i^attr = |min_j mu_ij - mu_TH|``, one per arm (Section V)."""
        return np.abs(self.means.min(axis=1) - self.threshold)

    def hardness_terms(self, *, competitor: str = "paper") -> np.ndarray:
        """The per-arm summands of the hardness index ``H_id`` (Section V).

        ``competitor="paper"`` follows the paper exactly: ``i**`` is the best arm of S,
        which may be an *infeasible* arm (reading note 9). ``competitor="feasible"`` is
        a variant of ours in which ``i**`` ranges over feasible sub-optimal arms only, so
        that ``Delta_i*`` measures the gap the algorithm actually has to resolve on the
        mean. Infinite terms are returned as ``inf`` (see :meth:`hardness_index`).
        """
        if competitor not in ("paper", "feasible"):
            raise ValueError(f"competitor must be 'paper' or 'feasible', got {competitor!r}")
        attribute_gap = self.arm_attribute_gaps
        terms = np.zeros(self.n_arms)
        with np.errstate(divide="ignore"):
            if not self.is_feasible:
                # Reading note 9: with no feasible arm only the infeasible terms remain
                # (S is empty and every arm is in R).
                return 1.0 / attribute_gap**2
            arm_means = self.arm_means
            best = self.best_arm
            feasible = self.feasible_mask
            suboptimal = self.suboptimal_mask
            gaps = self.gaps
            if competitor == "feasible":
                rivals = suboptimal & feasible
                gap_best = (
                    arm_means[best] - arm_means[rivals].max() if rivals.any() else np.inf
                )
            else:
                gap_best = gaps[best]
            terms[best] = 1.0 / min(gap_best / 2.0, attribute_gap[best]) ** 2
            for i in range(self.n_arms):
                if i == best:
                    continue
                if feasible[i] and suboptimal[i]:
                    terms[i] = 1.0 / (gaps[i] / 2.0) ** 2
                elif not feasible[i] and not suboptimal[i]:
                    terms[i] = 1.0 / attribute_gap[i] ** 2
                elif not feasible[i] and suboptimal[i]:
                    terms[i] = 1.0 / max(gaps[i] / 2.0, attribute_gap[i]) ** 2
                else:
                    # A feasible arm outside S ties with the best arm: the formula has no
                    # term for it, and no algorithm can separate the two.
                    terms[i] = np.inf
        return terms

    def hardness_index(self, *, competitor: str = "paper") -> float:
        """The hardness index ``H_id`` of Section V.

        ``H_id = 1 / min(Delta_i*/2, Delta_i*^attr)^2 + sum_{F and S} 1/(Delta_i/2)^2
        + sum_{not F and R} 1/(Delta_i^attr)^2 + sum_{not F and S} 1/max(Delta_i/2, Delta_i^attr)^2``.

        It is infinite when two feasible arms tie for the best mean or when an attribute
        of the best arm sits exactly at the threshold; a :class:`HardnessWarning` then
        names the cause instead of a silent division by zero.
        """
        terms = self.hardness_terms(competitor=competitor)
        if np.isinf(terms).any():
            warnings.warn(self._infinite_reason(), HardnessWarning, stacklevel=2)
            return math.inf
        return float(terms.sum())

    def _infinite_reason(self) -> str:
        if not self.has_unique_answer:
            return (
                f"H_id is infinite: feasible arms {list(self.best_arms)} tie for the best mean, "
                "so the best arm is not unique"
            )
        best = self.best_arm
        return (
            f"H_id is infinite: arm {best} has an attribute mean exactly at the threshold "
            f"{self.threshold}, so its feasibility can never be certified"
        )

    # ---------------------------------------------------------------- helpers
    def describe(self) -> dict:
        """A JSON-ready summary: answer, arm means, feasible set and ``H_id``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HardnessWarning)
            hardness = self.hardness_index()
        return {
            "label": self.label,
            "n_arms": self.n_arms,
            "n_attributes": self.n_attributes,
            "threshold": self.threshold,
            "answer": self.best_arm,
            "feasible": self.is_feasible,
            "feasible_set": list(self.feasible_set),
            "arm_means": [float(v) for v in self.arm_means],
            "H_id": hardness if math.isfinite(hardness) else None,
            "H_id_infinite": not math.isfinite(hardness),
        }

    def __repr__(self) -> str:
        label = f"{self.label!r}, " if self.label else ""
        return f"Instance({label}N={self.n_arms}, M={self.n_attributes}, threshold={self.threshold})"


def load_instance(path: str | Path, threshold: float, *, label: str | None = None) -> Instance:
    """Read an instance from a CSV file with N rows and M columns of attribute means.

    A first row that is not numeric is treated as a header and skipped. Blank lines
    are ignored.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"means file not found: {path}")
    rows: list[list[float]] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        try:
            rows.append([float(cell) for cell in cells])
        except ValueError:
            if not rows and number == 1:
                continue  # header line
            raise ValueError(f"{path}, line {number}: not a row of numbers: {line!r}") from None
    if not rows:
        raise ValueError(f"{path} holds no rows of attribute means")
    widths = {len(row) for row in rows}
    if len(widths) != 1:
        raise ValueError(f"{path}: rows have different numbers of columns {sorted(widths)}")
    return Instance(np.array(rows), threshold, label=label if label is not None else path.stem)
