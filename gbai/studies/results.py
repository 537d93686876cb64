"""Headline results: recorded by the notebooks, as outputs of the cells that computed them.

A notebook calls :func:`record` for each number the project states elsewhere (the
README, the book's pages, the report). The record is an output of its cell, so it is
stored with the executed notebook and checked by nbval like any other output.
``make figures`` gathers the records into ``figures/results.csv`` and quotes them
from there (``notebooks/_tools/run/publish.py``), so no result is typed by hand.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Iterable

from ..version import RESULT_MIMETYPE as MIMETYPE

__all__ = ["MIMETYPE", "Result", "STORED_DIGITS", "record", "record_range"]

_KEY = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
#: Significant digits of a stored value. The last digits of a float from a solver or a limit depend on the
#: host CPU's rounding (numba compiles for it, fused multiply-adds included), and no computation here is
#: accurate to more than 12 digits, so 12 keep the stored value the same on every machine.
STORED_DIGITS = 12


@dataclass(frozen=True)
class Result:
    """One headline number: ``value`` as computed, to :data:`STORED_DIGITS` significant digits, ``shown`` as every
    quote writes it."""

    key: str
    value: float
    shown: str
    unit: str
    figure: str
    description: str

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        text = f"result {self.key} = {self.shown}" + (f" ({self.unit})" if self.unit else "")
        # The value is stored as text: JupyterLab rewrites the JSON numbers it saves (5.0 as 5,
        # 1e-05 as 0.00001), so a number would change the notebook at its first save in Lab.
        return {MIMETYPE: {**asdict(self), "value": repr(self.value)}, "text/plain": text}


def record(key: str, value: float, *, fmt: str = ".3g", unit: str = "", figure: str = "",
           description: str) -> Result:
    """Record a headline result and show it as an output of the notebook cell that computed it.

    ``key`` names it everywhere (lower case letters, digits, ``.``, ``_`` and ``-``);
    ``fmt`` is the format spec of the quoted form (``".2f"``, ``",.0f"``, ``".0%"``);
    ``".2r"`` rounds to two significant digits without an exponent (``1600``, ``0.57``);
    ``figure`` is the figure file (without extension) that shows it, if any. ``shown`` is formatted from
    the value as computed (3.5500000000000003 shows as 3.6 with ``".1f"``), the stored value has
    :data:`STORED_DIGITS` significant digits.
    """
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(f"a result key is lower-case letters, digits, '.', '_' and '-', got {key!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ValueError(f"result {key}: the value must be a finite number, got {value!r}")
    if not description or not description.strip():
        raise ValueError(f"result {key}: describe it in a few words")
    try:
        shown = _significant(float(value), int(fmt[1:-1])) if re.fullmatch(r"\.[1-9]r", fmt) else format(value, fmt)
    except (ValueError, TypeError):
        raise ValueError(f"result {key}: {fmt!r} is not a format spec for {value!r}") from None
    result = Result(key, float(f"{float(value):.{STORED_DIGITS}g}"), shown, unit, figure, description.strip())
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return result
    if get_ipython() is not None:
        display(result)
    return result


def _significant(value: float, digits: int) -> str:
    """``value`` rounded to ``digits`` significant digits, written without an exponent."""
    if value == 0:
        return "0"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    return f"{round(value, decimals):.{max(decimals, 0)}f}"


def record_range(key: str, values: Iterable[float], *, fmt: str = ".3g", unit: str = "", figure: str = "",
                 description: str) -> tuple[Result, Result]:
    """Record the smallest and largest of ``values`` as ``key.min`` and ``key.max`` (see :func:`record`)."""
    values = [float(value) for value in values]
    if not values:
        raise ValueError(f"result {key}: no values to take the range of")
    return (record(f"{key}.min", min(values), fmt=fmt, unit=unit, figure=figure,
                   description=f"{description} (smallest)"),
            record(f"{key}.max", max(values), fmt=fmt, unit=unit, figure=figure,
                   description=f"{description} (largest)"))
