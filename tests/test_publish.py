"""Results from one source: the notebooks' records gathered into figures/results.csv, every quote matching it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from gbai.studies.results import MIMETYPE, STORED_DIGITS
from notebooks._tools.run.publish import COLUMNS, collect, latex_macros, quote, quoted_keys, results_pages

ROOT = Path(__file__).resolve().parents[1]

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
TABLE = ROOT / "figures" / "results.csv"


def _notebook(path: Path, records: list[dict]) -> Path:
    outputs = [{"output_type": "display_data", "metadata": {}, "data": {MIMETYPE: entry, "text/plain": "r"}}
               for entry in records]
    cells = [{"cell_type": "code", "source": "", "metadata": {}, "outputs": outputs, "execution_count": 1}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_collect_reads_every_record_once(tmp_path):
    first = _notebook(tmp_path / "01_a.ipynb", [
        {"key": "a", "value": 1.5, "shown": "1.5", "unit": "", "figure": "fa", "description": "d"}])
    second = _notebook(tmp_path / "02_b.ipynb", [
        {"key": "b", "value": 2.0, "shown": "2", "unit": "x", "figure": "", "description": "e"}])
    table = collect([first, second])
    assert list(table.columns) == COLUMNS
    assert list(table["key"]) == ["a", "b"] and list(table["notebook"]) == ["01_a", "02_b"]
    again = _notebook(tmp_path / "03_c.ipynb", [
        {"key": "a", "value": 1.0, "shown": "1", "unit": "", "figure": "", "description": "d"}])
    with pytest.raises(ValueError, match="result a is recorded in 01_a and in 03_c"):
        collect([first, again])


def _stale(text: str, table: pd.DataFrame) -> list[str]:
    """The lines of ``text`` whose quoted numbers differ from ``table`` (``quote`` would rewrite them)."""
    rewritten = quote(text, table).splitlines()
    return [line for line, new in zip(text.splitlines(), rewritten) if line != new]


def test_quotes_are_rewritten_from_the_table_and_stale_ones_are_found():
    table = pd.DataFrame([{"key": "x.max", "shown": "1.37"}, {"key": "y", "shown": "12%"}])
    text = "needs <!--result:x.max-->1.2<!--/result--> times, <!--result:y-->12%<!--/result--> less"
    assert quoted_keys(text) == ["x.max", "y"]
    assert _stale(text, table) == [text]
    assert _stale(quote(text, table), table) == []
    assert "<!--result:x.max-->1.37<!--/result-->" in quote(text, table)
    with pytest.raises(ValueError, match="missing from the table"):
        quote("<!--result:z-->1<!--/result-->", table)


def test_latex_macros_escape_what_latex_would_read_as_commands():
    macros = latex_macros(pd.DataFrame([{"key": "share", "shown": "12%"}, {"key": "n", "shown": "1,234"}]))
    assert r"\@namedef{gbai@result@share}{12\%}" in macros
    assert r"\@namedef{gbai@result@n}{1,234}" in macros
    assert r"\newcommand{\result}" in macros and "PackageError" in macros


def test_a_record_shown_twice_by_one_cell_counts_once(tmp_path):
    # record() displays its result, and a record that ends a cell is displayed again as the cell's value.
    entry = {"key": "k", "value": 1.0, "shown": "1", "unit": "", "figure": "", "description": "d"}
    table = collect([_notebook(tmp_path / "01_a.ipynb", [entry, entry])])
    assert list(table["key"]) == ["k"]
    with pytest.raises(ValueError, match="recorded in 01_a and in 02_b"):
        collect([tmp_path / "01_a.ipynb", _notebook(tmp_path / "02_b.ipynb", [entry])])


# The committed files: what make figures wrote from the stored notebooks.

def test_the_results_table_is_what_the_stored_notebooks_record():
    table = collect(NOTEBOOKS)
    assert len(table) >= 20, "too few headline results recorded"
    assert TABLE.read_text() == table.to_csv(index=False, lineterminator="\n"), (
        "figures/results.csv differs from the notebooks' records: run make figures")
    # As record() stores them: the bytes do not depend on the CPU that ran the notebooks.
    longer = [key for key, value in zip(table["key"], table["value"]) if float(f"{value:.{STORED_DIGITS}g}") != value]
    assert not longer, f"values stored with more than {STORED_DIGITS} significant digits: {longer}; run make figures"
    figures = {path.stem for path in (ROOT / "figures").glob("*.png")}
    assert set(table["figure"]) - {""} <= figures, set(table["figure"]) - {""} - figures


def test_the_report_reads_its_numbers_from_the_table():
    table = collect(NOTEBOOKS)
    assert (ROOT / "paper" / "results.tex").read_text() == latex_macros(table), "run make figures"
    keys = set(table["key"])
    used = set()
    for tex in (ROOT / "paper").glob("*.tex"):
        used |= set(re.findall(r"\\result\{([^}]*)\}", tex.read_text()))
    assert used, "the report quotes no result"
    assert used <= keys, f"the report quotes unknown results: {sorted(used - keys)}"


def test_every_quoted_number_matches_the_table():
    table = collect(NOTEBOOKS)
    quoted = 0
    for page in results_pages(ROOT):
        text = page.read_text()
        assert not _stale(text, table), f"{page.relative_to(ROOT)}: {_stale(text, table)}; run make figures"
        quoted += len(quoted_keys(text))
    assert quoted >= 10, "the README and the book's pages quote too few results"


def test_no_quoted_number_starts_a_line():
    # Markdown reads a line that starts with "<!--" as raw HTML: the paragraph breaks there and
    # its emphasis shows as asterisks, on the code host and in the book alike.
    for page in results_pages(ROOT):
        starts = [number for number, line in enumerate(page.read_text().splitlines(), 1)
                  if re.match(r" {0,3}<!--result:", line)]
        assert not starts, f"{page.relative_to(ROOT)}: a quoted number starts line(s) {starts}"
