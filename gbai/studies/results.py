"""Headline results: recorded by the notebooks, gathered into one table, quoted from there.

A notebook calls :func:`record` for each number the project states elsewhere (the
README, the book's pages, the report). The record is an output of its cell, so it is
stored with the executed notebook and checked by nbval like any other output.
``make figures`` then gathers every record of the twelve notebooks
(:func:`collect`) into ``figures/results.csv`` (key, value, shown, unit, notebook,
figure, description) and writes two things from it: the LaTeX macros the report
reads (:func:`latex_macros`, ``\\result{key}``), and the quoted numbers of the
Markdown pages, each written between ``<!--result:key-->`` and ``<!--/result-->``
(:func:`quote`). A test fails when a quoted number differs from the table, so no
result is typed by hand.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

__all__ = ["COLUMNS", "MIMETYPE", "Result", "collect", "latex_macros", "quote", "quoted_keys", "record",
           "record_range", "stale_quotes"]

#: The output type a record is stored under in an executed notebook.
MIMETYPE = "application/vnd.gbai.result+json"
#: The columns of ``figures/results.csv``.
COLUMNS = ["key", "value", "shown", "unit", "notebook", "figure", "description"]
_KEY = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
#: A quoted number in Markdown: ``<!--result:key-->shown<!--/result-->``.
_QUOTE = re.compile(r"<!--result:(?P<key>[^>]*?)-->(?P<shown>.*?)<!--/result-->")


@dataclass(frozen=True)
class Result:
    """One headline number: ``value`` as computed, ``shown`` as every quote writes it."""

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
    ``figure`` is the figure file (without extension) that shows it, if any.
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
    result = Result(key, float(value), shown, unit, figure, description.strip())
    try:
        from IPython.display import display
        from IPython import get_ipython
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
    return (record(f"{key}.min", min(values), fmt=fmt, unit=unit, figure=figure, description=f"{description} (smallest)"),
            record(f"{key}.max", max(values), fmt=fmt, unit=unit, figure=figure, description=f"{description} (largest)"))


def _records(notebook: Path) -> Iterable[dict]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        # A record that ends its cell is shown twice (by record() and as the cell's value): count it once.
        shown = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if MIMETYPE in data and data[MIMETYPE] not in shown:
                shown.append(data[MIMETYPE])
                yield data[MIMETYPE]


def collect(notebooks: Iterable[Path]) -> pd.DataFrame:
    """Every result recorded in the executed ``notebooks``, one row each, in notebook order.

    A key recorded twice (in one notebook or in two) is an error: each result has one source.
    """
    rows, seen = [], {}
    for notebook in notebooks:
        for entry in _records(Path(notebook)):
            key = entry["key"]
            if key in seen:
                raise ValueError(f"result {key} is recorded in {seen[key]} and in {Path(notebook).stem}")
            seen[key] = Path(notebook).stem
            rows.append({**entry, "value": float(entry["value"]), "notebook": Path(notebook).stem})
    return pd.DataFrame(rows, columns=COLUMNS)


_LATEX_SPECIALS = {"%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_", "$": r"\$", "~": r"\textasciitilde{}",
                   "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}"}


def latex_macros(table: pd.DataFrame) -> str:
    """The report's numbers: ``\\result{key}`` typesets the ``shown`` form of ``key``.

    An unknown key stops the build with an error naming it, so the report cannot
    quote a number the table does not hold.
    """
    lines = ["% Generated from figures/results.csv by make figures: do not edit.",
             "\\makeatletter",
             "\\newcommand{\\result}[1]{\\@ifundefined{gbai@result@#1}"
             "{\\PackageError{gbai}{no result #1 in figures/results.csv}{}}{\\@nameuse{gbai@result@#1}}}"]
    for key, shown in zip(table["key"], table["shown"]):
        text = "".join(_LATEX_SPECIALS.get(character, character) for character in str(shown))
        lines.append(f"\\@namedef{{gbai@result@{key}}}{{{text}}}")
    lines.append("\\makeatother")
    return "\n".join(lines) + "\n"


def quoted_keys(text: str) -> list[str]:
    """The keys quoted in a Markdown text, in order."""
    return [match["key"] for match in _QUOTE.finditer(text)]


def quote(text: str, table: pd.DataFrame) -> str:
    """``text`` with every quoted number rewritten from ``table``; an unknown key is an error."""
    shown = dict(zip(table["key"], table["shown"]))
    unknown = sorted({key for key in quoted_keys(text) if key not in shown})
    if unknown:
        raise ValueError(f"quoted results missing from the table: {unknown}")
    return _QUOTE.sub(lambda match: f"<!--result:{match['key']}-->{shown[match['key']]}<!--/result-->", text)


def stale_quotes(text: str, table: pd.DataFrame) -> list[str]:
    """The quotes of ``text`` that differ from ``table`` (``key: quoted != shown``), or unknown keys."""
    shown = dict(zip(table["key"], table["shown"]))
    return [f"{match['key']}: {match['shown']!r} != {shown.get(match['key'], 'no such result')!r}"
            for match in _QUOTE.finditer(text) if shown.get(match["key"]) != match["shown"]]
