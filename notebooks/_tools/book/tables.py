"""Tables on a page of the book: each fits the text column, or shows a summary that does, with a CSV of the whole.

The notebooks print pandas tables as HTML. On a page 1280 px wide the book's text
column is :data:`COLUMN_PX` wide; the book's style sheet sets tables in a smaller type
with narrow cells and lets header words wrap (``notebooks/_book/_static/gbai.css``).
:func:`fit_table` estimates the width a table takes with that style, from the widths
of its characters, and keeps a table that fits. A wider one is shown transposed when
that fits (a table with few rows and many columns), otherwise as its index with the
leading columns that fit; either way the page says so and offers the whole table as a
CSV file. pandas prints a long table truncated ("..." rows or columns, and a line
"81 rows x 16 columns"): the CSV is then the data file a notebook saved with a figure
(``figures/*.csv``) that holds that table, or else, said as such, the part printed.
``tests/test_classroom.py`` measures the tables in Chromium.
"""

from __future__ import annotations

import csv
import html
import io
import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["COLUMN_PX", "Fitted", "Table", "fit_table", "matching_dataset", "parse_table", "printed_size",
           "table_width"]

#: The text column of a page in a window 1280 px wide (sphinx-book-theme 1.x).
COLUMN_PX = 688
#: gbai.css: tables at 0.8 of the 16 px body type, cells padded by 0.4 em a side, 1 px rules.
FONT_PX = 12.8
CELL_EXTRA_PX = 0.8 * FONT_PX + 1
#: Widths of characters in em, on the wide side (DejaVu Sans, the default sans-serif on
#: Linux; narrower faces only leave more room), and a margin for rounding and bold headers.
_DIGIT, _LOWER, _UPPER, _SPACE, _OTHER = 0.64, 0.6, 0.72, 0.32, 0.5
SAFETY = 1.08


def _text_em(text: str) -> float:
    width = 0.0
    for character in text:
        if character.isdigit():
            width += _DIGIT
        elif character.isspace():
            width += _SPACE
        elif character.isupper():
            width += _UPPER
        elif character.isalpha():
            width += _LOWER
        else:
            width += _OTHER
    return width


@dataclass
class Table:
    """A table as a grid: ``cells[r][c]`` is the text of row r, column c; a cell spanned
    from the one before it (``colspan``, ``rowspan``) holds the same text and is marked
    in ``spanned``. The first ``header_rows`` rows are headers, the first
    ``index_columns`` columns the index."""

    cells: list[list[str]]
    spanned: list[list[bool]]
    header_rows: int
    index_columns: int

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.cells), len(self.cells[0]) if self.cells else 0

    def transposed(self) -> "Table":
        rows, columns = self.shape
        cells = [[self.cells[r][c] for r in range(rows)] for c in range(columns)]
        spanned = [[self.spanned[r][c] for r in range(rows)] for c in range(columns)]
        table = Table(cells, spanned, self.index_columns, self.header_rows)
        # A header row of the original that only names the index (pandas writes the
        # index's name on a row of its own) becomes an empty index column: drop it.
        empty = [c for c in range(table.index_columns) if c > 0 and
                 not any(table.cells[r][c] for r in range(table.header_rows, table.shape[0]))]
        for c in reversed(empty):
            for row, marks in zip(table.cells, table.spanned):
                del row[c], marks[c]
            table.index_columns -= 1
        return table

    def leading_columns(self, count: int) -> "Table":
        keep = self.index_columns + count
        return Table([row[:keep] for row in self.cells], [row[:keep] for row in self.spanned],
                     self.header_rows, self.index_columns)

    def column_labels(self) -> list[str]:
        """One label per column: its header cells joined with " / " (each label once)."""
        labels = []
        for c in range(self.shape[1]):
            parts = []
            for r in range(self.header_rows):
                label = self.cells[r][c]
                if label and label not in parts:
                    parts.append(label)
            labels.append(" / ".join(parts))
        return labels

    def elided(self) -> tuple[list[int], list[int]]:
        """The body rows and the columns that pandas printed as "..." in place of the ones it left out."""
        body = range(self.header_rows, self.shape[0])
        rows = [r for r in body if all(cell in ("...", "…") for cell in self.cells[r][self.index_columns:])]
        columns = [c for c in range(self.index_columns, self.shape[1])
                   if all(self.cells[r][c] in ("...", "…") for r in body)]
        return rows, columns

    def to_csv(self) -> str:
        """The table, one line per body row, spanned labels repeated, without pandas' "..." rows and columns."""
        elided_rows, elided_columns = self.elided()
        keep = [c for c in range(self.shape[1]) if c not in elided_columns]
        stream = io.StringIO()
        writer = csv.writer(stream, lineterminator="\n")
        labels = self.column_labels()
        writer.writerow([labels[c] for c in keep])
        for r in range(self.header_rows, self.shape[0]):
            if r not in elided_rows:
                writer.writerow([self.cells[r][c] for c in keep])
        return stream.getvalue()

    def to_html(self) -> str:
        lines = ['<table border="1" class="dataframe">']
        for r, (row, marks) in enumerate(zip(self.cells, self.spanned)):
            if r == 0:
                lines.append("  <thead>")
            if r == self.header_rows:
                lines.append("  <tbody>")
            cells = []
            for c, (text, spanned) in enumerate(zip(row, marks)):
                tag = "th" if r < self.header_rows or c < self.index_columns else "td"
                cells.append(f"<{tag}>{'' if spanned else html.escape(text)}</{tag}>")
            lines.append("    <tr>" + "".join(cells) + "</tr>")
            if r == self.header_rows - 1:
                lines.append("  </thead>")
        if self.shape[0] > self.header_rows:
            lines.append("  </tbody>")
        lines.append("</table>")
        return "\n".join(lines)


class _Rows(HTMLParser):
    def __init__(self):
        super().__init__()
        # (in thead, [(tag, text, colspan, rowspan)])
        self.rows: list[tuple[bool, list[tuple[str, str, int, int]]]] = []
        self.in_head = False
        self.cell: list | None = None
        self.tables = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "table":
            self.tables += 1
        elif tag == "thead":
            self.in_head = True
        elif tag == "tbody":
            self.in_head = False
        elif tag == "tr":
            self.rows.append((self.in_head, []))
        elif tag in ("th", "td") and self.rows:
            self.cell = [tag, "", int(attributes.get("colspan") or 1), int(attributes.get("rowspan") or 1)]

    def handle_endtag(self, tag):
        if tag == "thead":
            self.in_head = False
        elif tag in ("th", "td") and self.cell is not None:
            self.cell[1] = " ".join(self.cell[1].split())
            self.rows[-1][1].append(tuple(self.cell))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data


def parse_table(markup: str) -> Table | None:
    """The one table of a pandas HTML output, or None (no table, several, or an irregular one)."""
    parser = _Rows()
    parser.feed(markup)
    if parser.tables != 1 or not parser.rows:
        return None
    grid: list[list[str]] = []
    tags: list[list[str]] = []
    spanned: list[list[bool]] = []
    carried: dict[tuple[int, int], tuple[str, str]] = {}  # (row, column) -> (tag, text) spanned from above
    for r, (_, row) in enumerate(parser.rows):
        cells, kinds, marks = [], [], []
        queue = list(row)
        while queue or (r, len(cells)) in carried:
            c = len(cells)
            if (r, c) in carried:
                tag, text = carried.pop((r, c))
                cells.append(text), kinds.append(tag), marks.append(True)
                continue
            tag, text, colspan, rowspan = queue.pop(0)
            for offset in range(colspan):
                cells.append(text), kinds.append(tag), marks.append(offset > 0)
                for below in range(1, rowspan):
                    carried[(r + below, c + offset)] = (tag, text)
        grid.append(cells)
        tags.append(kinds)
        spanned.append(marks)
    width = len(grid[0])
    if carried or any(len(row) != width for row in grid):
        return None
    header_rows = sum(1 for in_head, _ in parser.rows if in_head)
    body = tags[header_rows:]
    index_columns = 0
    while body and index_columns < width and all(row[index_columns] == "th" for row in body):
        index_columns += 1
    return Table(grid, spanned, header_rows, index_columns)


def table_width(table: Table) -> float:
    """Estimated width in pixels with the book's table style (header words may wrap, body cells do not)."""
    rows, columns = table.shape
    total = 0.0
    for c in range(columns):
        widest = 0.0
        for r in range(rows):
            if table.spanned[r][c]:
                continue
            spans_more = c + 1 < columns and table.spanned[r][c + 1]
            text = table.cells[r][c]
            if r < table.header_rows:
                if spans_more:
                    continue  # a label over several columns wraps within them
                em = max((_text_em(word) for word in text.split()), default=0.0)
            else:
                em = _text_em(text)
            widest = max(widest, em)
        total += widest * FONT_PX + CELL_EXTRA_PX
    return total * SAFETY


def printed_size(markup: str) -> tuple[int, int] | None:
    """(rows, columns) of the whole table when pandas printed it truncated ("81 rows × 16 columns")."""
    match = re.search(r"<p>\s*([\d,]+) rows × ([\d,]+) columns\s*</p>", markup)
    return (int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))) if match else None


def matching_dataset(table: Table, size: tuple[int, int] | None, datasets: dict[str, str]) -> str | None:
    """The name of the CSV in ``datasets`` (name -> text) that holds all of ``table``: the same
    columns, in order, of which the printed ones are a part, and as many rows as pandas reports."""
    _, elided_columns = table.elided()
    shown = [label for c, label in enumerate(table.column_labels())
             if c >= table.index_columns and c not in elided_columns]
    for name, text in sorted(datasets.items()):
        lines = list(csv.reader(io.StringIO(text)))
        if not lines:
            continue
        header, rows = lines[0], len(lines) - 1
        positions = [header.index(label) if label in header else -1 for label in shown]
        if -1 in positions or positions != sorted(positions):
            continue
        if size is not None and (rows, len(header)) != size:
            continue
        if size is None and (rows != table.shape[0] - table.header_rows or header != shown):
            continue
        return name
    return None


@dataclass
class Fitted:
    """What a page shows for a table: ``html`` (None: the table as printed) and a note for the CSV."""

    html: str | None
    shown: str  # "whole", "transposed" or "columns"
    columns_shown: int
    columns: int


def fit_table(markup: str, column_px: float = COLUMN_PX) -> tuple[Fitted, Table | None]:
    """How to show the pandas table ``markup`` in a column ``column_px`` wide."""
    table = parse_table(markup)
    if table is None or table_width(table) <= column_px:
        columns = table.shape[1] - table.index_columns if table else 0
        return Fitted(None, "whole", columns, columns), table
    data_columns = table.shape[1] - table.index_columns
    transposed = table.transposed()
    if data_columns <= 40 and table_width(transposed) <= column_px:
        return Fitted(transposed.to_html(), "transposed", data_columns, data_columns), table
    count = data_columns
    while count > 1 and table_width(table.leading_columns(count)) > column_px:
        count -= 1
    return Fitted(table.leading_columns(count).to_html(), "columns", count, data_columns), table
