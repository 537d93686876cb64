"""Publishing the headline results for ``make figures``: :func:`write_results`, after the runner's full run.

:func:`collect` gathers the records of the stored notebooks (:func:`gbai.studies.record`)
into ``figures/results.csv``; from that table :func:`latex_macros` writes the report's
``\\result{key}`` macros, and :func:`quote` the numbers the Markdown pages quote between
``<!--result:key-->`` and ``<!--/result-->``. A test fails when a quoted number differs
from the table, so no result is typed by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from gbai.version import RESULT_MIMETYPE

from ..common import replace_atomically

__all__ = ["COLUMNS", "collect", "latex_macros", "quote", "quoted_keys", "results_pages", "write_results"]

#: The columns of ``figures/results.csv``.
COLUMNS = ["key", "value", "shown", "unit", "notebook", "figure", "description"]
#: A quoted number in Markdown: ``<!--result:key-->shown<!--/result-->``.
_QUOTE = re.compile(r"<!--result:(?P<key>[^>]*?)-->(?P<shown>.*?)<!--/result-->")


def _records(notebook: Path) -> Iterable[dict]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        # A record that ends its cell is shown twice (by record() and as the cell's value): count it once.
        shown = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if RESULT_MIMETYPE in data and data[RESULT_MIMETYPE] not in shown:
                shown.append(data[RESULT_MIMETYPE])
                yield data[RESULT_MIMETYPE]


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


def results_pages(root: Path) -> list[Path]:
    """The Markdown pages that quote results: the README and the book's own pages."""
    return [root / "README.md", *sorted((root / "notebooks" / "_book").glob("*.md"))]


def write_results(notebooks: Path, root: Path) -> dict:
    """Gather the results recorded in the stored notebooks and write everything quoted from them.

    ``figures/results.csv`` (the one table), ``paper/results.tex`` (the report's
    ``\\result`` macros) and the quoted numbers of :func:`results_pages`. Every stored
    notebook is read, including those this run did not execute, so the table always
    covers all of them.
    """
    table = collect(sorted(notebooks.glob("[0-9][0-9]_*.ipynb")))
    target = root / "figures" / "results.csv"
    replace_atomically(table.to_csv(index=False, lineterminator="\n"), target)
    replace_atomically(latex_macros(table), root / "paper" / "results.tex")
    quotes = pages = 0
    for page in results_pages(root):
        text = page.read_text(encoding="utf-8")
        if quoted_keys(text):
            quotes += len(quoted_keys(text))
            pages += 1
            rewritten = quote(text, table)
            if rewritten != text:
                replace_atomically(rewritten, page)
    return {"results": len(table), "table": target, "quotes": quotes, "pages": pages}
