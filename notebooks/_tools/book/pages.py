"""How a notebook becomes a page of the book: exercises, captions, links, citations, API and downloads.

:func:`prepare_page` rewrites a copy of an executed notebook for ``make book``; the
notebook itself is not touched, so the course tooling and JupyterLab see the cells
as written. On the page:

* each exercise's reference solution and its check (source and output) form one
  cell tagged ``solution``, collapsed behind one "Show solution" button, and a
  written answer is collapsed behind the same button; nbgrader's markers
  (``### BEGIN SOLUTION``, hidden-test markers) and metadata are dropped;
* a Markdown cell that starts with ``**Figure.**`` becomes the caption of the figure
  above it, and its text the figure's alt text; the book numbers the figure, unless
  the caption opens with the paper's number for it ("Figure 1a of the paper rerun",
  anchor ``paper-figure-1a``): one number per caption;
* "notebook N", the paper's equations, figures, theorems and Algorithm 1 become
  links (to the notebook that works the item through, or to the paper on that
  notebook's own page), and author-year citations link to the references page;
* the first cell that uses a function of the public API is preceded by links to
  its entries on the API page;
* a line under the title offers the page's sources, ``.py`` and ``.ipynb``;
* a table wider than the text column is shown transposed or with its leading
  columns (:mod:`.tables`), with a note that offers the whole table as a CSV.

:func:`book_links` rewrites the links of the book's own Markdown pages, written for
the code host, for the book's flat folder.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from gbai.version import RESULT_MIMETYPE

from ..common import nbgrader_meta
from .tables import fit_table, matching_dataset, printed_size

__all__ = ["PAPER_URL", "book_links", "prepare_page", "plain_text"]

PAPER_URL = "https://arxiv.org/abs/2412.08031"

#: Author phrases as the notebooks write them, the year that follows, and the key in paper/references.bib.
CITATIONS = [
    (r"Garivier\s+(?:and|&)\s+Kaufmann", "2016", "garivier2016optimal"),
    (r"Howard\s+et\s+al\.", "2021", "howard2021timeuniform"),
    (r"Kaufmann\s+and\s+Koolen", "2021", "kaufmann2021mixture"),
    (r"M[ée]nard", "2019", "menard2019gradient"),
    (r"Waudby-Smith\s+and\s+Ramdas", "2024", "waudbysmith2024betting"),
    (r"Jourdan\s+et\s+al\.", "2022", "jourdan2022toptwo"),
    (r"Shafer", "2021", "shafer2021testing"),
    (r"Honda\s+(?:&|and)\s+Takemura", "2010", "honda2010asymptotically"),
    (r"Agrawal,\s+Juneja\s+(?:&|and)\s+Glynn", "2020", "agrawal2020optimal"),
    (r"Kalyanakrishnan\s+et\s+al\.", "2012", "kalyanakrishnan2012pac"),
    (r"de\s+Rooij\s+et\s+al\.", "2014", "derooij2014follow"),
]

#: Items of the paper and the notebook (number) that works each through (a theorem right
#: after a cited year belongs to the cited work).
PAPER_ITEMS = [
    (r"\b[Ee]q(?:uation)?\.?\s*\(1\)", 1),
    (r"(?<!\[)\b[Ee]qs?\.\s*\([2-4]\)", None),  # the paper's confidence radii: the paper itself
    (r"\bTable\s+I\b(?!I|V)", 1),
    (r"(?<!\d{4}, )\bTheorem\s+1\b", 2),  # not "Howard et al. 2021, Theorem 1"
    (r"\bAlgorithm\s+1\b", 3),
    (r"(?<!\d{4}, )\bTheorem\s+2\b", 4),
    (r"\bFigure\s+1(?:\s*\(a\)|a)(?!\w)", 5),
    (r"\bFigure\s+1(?:\s*\(b\)|b)(?!\w)", 6),
    (r"\bFigure\s+1(?:\s*\(c\)|c)(?!\w)", 7),
    (r"\bFigure\s+2(?:\s*\([ab]\)|[ab])?(?![\w(])", 8),
]

_MARKER = re.compile(r"^[ \t]*### (?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)[ \t]*\n?", re.MULTILINE)
_CAPTION = re.compile(r"^\*\*Figure\.\*\*\s*")
# A caption that opens with the paper's number for its figure ("Figure 1a of the paper rerun").
_PAPER_FIGURE = re.compile(r"Figure\s+(\d+)(?:\s*\(([a-z])\)|([a-z]))?\s+of\s+the\s+paper\b")
# The anchor of a figure that reruns one of the paper's: _book/conf.py leaves it out of the book's numbering.
_PAPER_ANCHOR = "paper-figure-"
# Text that must not be rewritten: fenced code, inline code, math, links and headings.
_PROTECTED = re.compile(
    r"(```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$|!?\[[^\]\n]*\]\([^)\n]*\)|\{[\w:]+\}`[^`]*`|^#+ [^\n]*)",
    re.DOTALL | re.MULTILINE)
_NOTEBOOK = re.compile(r"\b([Nn]otebooks?)\s+(\d{1,2})((?:(?:,\s*|\s+and\s+|\s+to\s+|\s*[-–]\s*)\d{1,2}\b)*)")


def plain_text(markdown: str) -> str:
    """The text of a caption without Markdown or LaTeX markup (for alt text)."""
    text = re.sub(r"\*\*|\*|`", "", markdown)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    replacements = {r"\star": "*", r"\delta": "δ", r"\mu": "μ", r"\Delta": "Δ", r"\ln": "ln", r"\cdot": "·",
                    r"\le": "≤", r"\ge": "≥", r"\to": "→", r"\,": " ", r"\infty": "∞", r"\lambda": "λ"}
    for latex, plain in replacements.items():
        text = text.replace(latex, plain)
    text = re.sub(r"\\(?:mathrm|text|mathbf|operatorname)\{([^}]*)\}", r"\1", text)
    text = re.sub(r"[$\\{}^]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _outside(pattern: re.Pattern, text: str, rewrite) -> str:
    """``text`` with ``rewrite`` applied to what lies outside the matches of ``pattern`` (one group)."""
    parts = pattern.split(text)
    return "".join(part if index % 2 else rewrite(part) for index, part in enumerate(parts))


def _link_prose(text: str, stem: str, stems: dict[int, str]) -> str:
    current = int(stem[:2])

    def notebooks(match: re.Match) -> str:
        def one(number: str) -> str:
            target = stems.get(int(number))
            return f"[{number}]({target}.ipynb)" if target and int(number) != current else number

        target = stems.get(int(match.group(2)))
        if not match.group(3) and target and int(match.group(2)) != current:
            return f"[{match.group(1)} {match.group(2)}]({target}.ipynb)"
        tail = re.sub(r"\d{1,2}", lambda found: one(found.group(0)), match.group(3))
        return f"{match.group(1)} {one(match.group(2))}{tail}"

    def rewrite(part: str) -> str:
        part = _NOTEBOOK.sub(notebooks, part)
        for pattern, number in PAPER_ITEMS:
            target = f"{stems[number]}.ipynb" if number not in (None, current) and number in stems else PAPER_URL
            part = re.sub(pattern, lambda found, target=target: f"[{found.group(0)}]({target})", part)
        for authors, year, key in CITATIONS:
            part = re.sub(rf"({authors})(\s+\(?){year}\b", rf"\1\2{{cite:year}}`{key}`", part)
        return part

    return _outside(_PROTECTED, text, rewrite)


# A Markdown link (not an image) whose text may hold inline code or one level of brackets.
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]\n]|\[[^\]\n]*\])*)\]\(([^()\s]+)\)")
_FENCE = re.compile(r"(^```.*?^```)", re.DOTALL | re.MULTILINE)


def book_links(markdown: str, folder: Path, stems: set[str]) -> str:
    """A page of ``notebooks/_book`` with its links rewritten for the book's one flat folder.

    The pages are written for the code host, which resolves a link from the page's
    folder ``folder`` in the repository: ``../05_experiment_1.ipynb`` (a notebook, or
    its ``.py``), ``results.md`` (another page), ``../../paper/report.pdf`` (any
    other file). In the book a notebook is the page ``05_experiment_1`` beside this
    one, so its link becomes ``05_experiment_1.ipynb`` (anchor kept), which Sphinx
    turns into that page; a page of the same folder keeps its link; a link to any
    other file of the repository, which the book does not hold, becomes its text.
    Web addresses, same-page anchors and fenced code are left alone.
    """
    folder = Path(folder).resolve()

    def rewrite(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (folder / path).resolve()
        if resolved.parent == folder:
            return match.group(0)
        if resolved.parent == folder.parent and resolved.stem in stems and resolved.suffix in (".ipynb", ".py"):
            return f"[{text}]({resolved.stem}.ipynb{'#' + anchor if anchor else ''})"
        return text

    return _outside(_FENCE, markdown, lambda part: _LINK.sub(rewrite, part))


def _clean(cell):
    cell = copy.deepcopy(cell)
    cell.metadata.pop("nbgrader", None)
    cell.source = _MARKER.sub("", cell.source).strip("\n")
    return cell


def _exercises(cells: list) -> list:
    """Join each solution cell with the check after it; box the written answers.

    A locked cell between a solution and its check (notebook 3's exercise 3 runs the
    student's class there) joins them too: one cell, behind one button.
    """
    result = []
    for cell in cells:
        grading = nbgrader_meta(cell)
        locked_step = grading.get("locked") and not grading.get("solution")
        if cell.cell_type == "code" and (grading.get("grade") or locked_step) and result and "solution" in \
                result[-1].metadata.get("tags", []) and result[-1].cell_type == "code":
            solution, check = result[-1], _clean(cell)
            joined = "# The check\n" if grading.get("grade") else ""
            solution.source = f"{solution.source}\n\n{joined}{check.source}"
            solution.outputs = list(solution.get("outputs", [])) + list(check.get("outputs", []))
            continue
        if grading:
            cell = _clean(cell)
        if cell.cell_type == "code" and (grading.get("solution") or grading.get("grade")):
            tags = cell.metadata.setdefault("tags", [])
            if "solution" not in tags:
                tags.append("solution")
        elif cell.cell_type == "markdown" and grading.get("solution"):
            cell.metadata["tags"] = [tag for tag in cell.metadata.get("tags", []) if tag != "solution"]
            # Behind the same "Show solution" button as the code solutions (sphinx-togglebutton).
            cell.source = f"`````{{toggle}}\n{cell.source}\n`````"
        result.append(cell)
    return result


def _captions(cells: list, stem: str) -> list:
    result, count = [], 0
    for cell in cells:
        match = _CAPTION.match(cell.source) if cell.cell_type == "markdown" else None
        figure = next((previous for previous in reversed(result) if previous.cell_type == "code"), None)
        shows_image = figure is not None and any("image/png" in output.get("data", {})
                                                 for output in figure.get("outputs", []))
        if match and shows_image and "mystnb" not in figure.metadata:
            caption = cell.source[match.end():].strip()
            paper = _PAPER_FIGURE.match(caption)
            if paper:
                # The paper's number is the figure's one label: the book gives it no number of its own.
                name = _PAPER_ANCHOR + "".join(part or "" for part in paper.groups())
            else:
                count += 1
                name = f"fig-{stem[:2]}-{count}"
            # MyST-NB captions every output of the cell: outputs after the last image
            # (a table the cell also shows) move to a cell of their own, its source hidden.
            outputs = list(figure.outputs)
            last = max(index for index, output in enumerate(outputs) if "image/png" in output.get("data", {}))
            figure.outputs = outputs[:last + 1]
            figure.metadata["mystnb"] = {"figure": {"caption": caption, "name": name},
                                         "image": {"alt": plain_text(caption)}}
            if outputs[last + 1:]:
                import nbformat

                # Not blank: MyST-NB drops a cell whose source is blank, outputs and all.
                rest = nbformat.v4.new_code_cell("# the outputs after the figure of the cell above",
                                                 metadata={"tags": ["remove-input"]})
                rest.outputs = outputs[last + 1:]
                position = next(index for index, kept in enumerate(result) if kept is figure)
                result.insert(position + 1, rest)
            continue
        result.append(cell)
    return result


def _api_links(cells: list, public: dict[str, str]) -> list:
    """Before the first cell that uses a public name, a line linking it to the API page."""
    seen: set[str] = set()
    result = []
    for cell in cells:
        if cell.cell_type == "code" and "solution" not in cell.metadata.get("tags", []):
            used = []
            for name, target in public.items():
                module = target.rsplit(".", 1)[0]
                pattern = rf"\bgbai\.{re.escape(name)}\b" if module == "gbai" else \
                    rf"(?:\b{re.escape(target)}\b|^from {re.escape(module)} import .*\b{re.escape(name)}\b)"
                if name not in seen and re.search(pattern, cell.source, re.MULTILINE):
                    used.append(target)
                    seen.add(name)
            if used:
                import nbformat

                links = ", ".join(f"{{py:obj}}`{target}`" for target in sorted(used))
                result.append(nbformat.v4.new_markdown_cell(f"*First use of* {links} *(see the API page).*",
                                                            metadata={"tags": ["api-links"]}))
        result.append(cell)
    return result


def _fit_tables(cells: list, stem: str, downloads: str, tables: dict[str, str], datasets: dict[str, str]) -> list:
    """Each table output wider than the text column replaced by a summary, with a note linking its CSV.

    The CSV is the data file in ``datasets`` that holds the whole table when pandas
    printed it truncated, or else the table as printed (added to ``tables``).
    """
    import nbformat

    result = []
    for cell in cells:
        result.append(cell)
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            markup = output.get("data", {}).get("text/html")
            markup = "".join(markup) if isinstance(markup, list) else markup
            if not markup or "<table" not in markup:
                continue
            fitted, table = fit_table(markup)
            if fitted.html is None:
                continue
            size = printed_size(markup)
            dataset = matching_dataset(table, size, datasets) if size else None
            if dataset is not None:
                name = dataset
                tables[name] = datasets[dataset]
            else:
                name = f"{stem}-table-{sum(key.startswith(stem) for key in tables) + 1}.csv"
                tables[name] = table.to_csv()
            link = f"{{download}}`{name} <{downloads}/{name}>`"
            if size is None:
                whole = f"the whole table: {link}"
            elif dataset is not None:
                whole = f"pandas prints it shortened; all {size[0]} rows and {size[1]} columns: {link}"
            else:
                whole = (f"pandas prints it shortened ({size[0]} rows and {size[1]} columns in all); "
                         f"the printed part: {link}")
            output["data"]["text/html"] = f"<div>\n{fitted.html}\n</div>"
            if fitted.shown == "transposed":
                shown = "The table above is shown transposed to fit the page (its rows are the notebook's columns)"
            else:
                shown = (f"The table above shows its first {fitted.columns_shown} of {fitted.columns} columns "
                         "to fit the page")
            note = f"{shown}; {whole}."
            result.append(nbformat.v4.new_markdown_cell(note, metadata={"tags": ["table-note"]}))
    return result


def prepare_page(notebook, stem: str, stems: dict[int, str], public: dict[str, str], downloads: str,
                 tables: dict[str, str] | None = None, datasets: dict[str, str] | None = None):
    """The book's version of an executed notebook (a copy; ``notebook`` is left as it is).

    ``stem`` names the notebook (``05_experiment_1``), ``stems`` maps each notebook
    number to its stem, ``public`` each public name to its documented target
    (``"run"`` -> ``"gbai.run"``, ``"savefig"`` -> ``"gbai.plotting.savefig"``), and
    ``downloads`` the folder, beside the page, that holds its ``.py`` and ``.ipynb``.
    The CSV files of tables too wide for the page are added to ``tables`` (file name ->
    text), for the caller to write into ``downloads``; ``datasets`` (file name -> text,
    the figures' data files) may hold the whole of a table that pandas printed truncated.
    """
    import nbformat

    page = copy.deepcopy(notebook)
    cells = _exercises(page.cells)
    cells = _captions(cells, stem)
    cells = _fit_tables(cells, stem, downloads, {} if tables is None else tables, datasets or {})
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = _link_prose(cell.source, stem, stems)
    cells = _api_links(cells, public)
    for cell in cells:
        # A headline result shows its text line on the page; its data (for figures/results.csv) is no HTML.
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(RESULT_MIMETYPE, None)
    sources = nbformat.v4.new_markdown_cell(
        f"Download this notebook: {{download}}`{stem}.py <{downloads}/{stem}.py>` (the source, a Jupytext "
        f"percent script) or {{download}}`{stem}.ipynb <{downloads}/{stem}.ipynb>` (with the outputs shown "
        "here).", metadata={"tags": ["downloads"]})
    title = next((index for index, cell in enumerate(cells) if cell.cell_type == "markdown"), 0)
    cells.insert(title + 1, sources)
    page.cells = cells
    return page
