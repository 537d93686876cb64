"""The committed report, paper/report.pdf, against its sources: no LaTeX needed.

``make paper`` builds the PDF and stores the fingerprint of its sources (``report.tex``,
every ``.tex`` file it reads, its bibliography and every figure they include; see
``paper/report_tools.py``) in its metadata. These tests read the committed PDF as a
reader's viewer does (pypdf): it must come from the current sources, hold every figure
environment of the ``.tex`` files with its caption, each figure on a page within one
page of the text's first reference to it and before the references, and no figure may
stick out of its page.
"""

import importlib.util
import re
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf", reason="the test extra is not installed")

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "paper"
PDF = PAPER / "report.pdf"
REBUILD = "run `make paper` and commit paper/report.pdf"
#: "Within about a page": the figure's page and the page of the text's first reference
#: to it differ by at most this many pages (either way: a float may come first).
MAX_PAGES_FROM_FIRST_MENTION = 1


def _report_tools():
    spec = importlib.util.spec_from_file_location("report_tools", PAPER / "report_tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report():
    assert PDF.is_file(), f"paper/report.pdf is missing: {REBUILD}"
    return pypdf.PdfReader(PDF)


@pytest.fixture(scope="module")
def layout(report):
    """Page numbers (from 1) of the named destinations, and of the first link to each figure."""
    page_of = {page.indirect_reference.idnum: number for number, page in enumerate(report.pages, start=1)}
    destinations = {name: page_of[destination.page.idnum] for name, destination in report.named_destinations.items()
                    if hasattr(destination.page, "idnum")}
    first_link = {}
    for number, page in enumerate(report.pages, start=1):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            action = annotation.get("/A")
            target = action.get("/D") if action is not None and action.get("/S") == "/GoTo" else annotation.get("/Dest")
            if target is not None:
                first_link.setdefault(str(target), number)
    return destinations, first_link


def _figure_environments() -> list[tuple[str, str]]:
    """(file, body) of every figure environment of the report's .tex files, in the order LaTeX reads them."""
    tools = _report_tools()
    main = (PAPER / "report.tex").read_text(encoding="utf-8")
    others = {path.stem: path for path in PAPER.glob("*.tex") if path.name != "report.tex"}
    found = []

    def read(name: str, text: str) -> None:
        text = tools._uncommented(text)
        for match in re.finditer(r"\\(?:input|include)\{([^}]+)\}|\\begin\{figure\*?\}(.*?)\\end\{figure\*?\}",
                                 text, re.DOTALL):
            if match.group(1) is not None:
                stem = Path(match.group(1)).stem
                if stem in others:
                    read(others[stem].name, others[stem].read_text(encoding="utf-8"))
            else:
                found.append((name, match.group(2)))

    read("report.tex", main)
    return found


def test_the_report_is_built_from_the_current_sources(report):
    stored = (report.metadata or {}).get("/SourceFingerprint")
    assert stored, f"paper/report.pdf holds no fingerprint of its sources (not built by make paper): {REBUILD}"
    assert stored == _report_tools().fingerprint(PAPER), (
        f"paper/report.pdf was built from other sources than the current report.tex, the files it reads and "
        f"the figures they include: {REBUILD}")


def test_the_fingerprint_covers_every_source_and_changes_with_any(tmp_path):
    tools = _report_tools()
    paper = tmp_path / "paper"
    figures = tmp_path / "figures"
    paper.mkdir()
    figures.mkdir()
    (paper / "report.tex").write_text("\\input{glyphtounicode}\n\\includegraphics[width=2cm]{../figures/a.pdf}\n"
                                      "\\input{results}\n% \\includegraphics{../figures/commented-out}\n"
                                      "\\bibliography{references}\n")
    (paper / "results.tex").write_text("\\newcommand{\\runs}{300}\n\\includegraphics{../figures/b}\n")
    (paper / "references.bib").write_text("@misc{x, title={X}}\n")
    (paper / "draft.tex").write_text("not read by the report\n")
    (figures / "a.pdf").write_bytes(b"%PDF a")
    (figures / "b.png").write_bytes(b"PNG b")
    (figures / "unused.pdf").write_bytes(b"%PDF unused")
    names = [path.relative_to(tmp_path).as_posix() for path in tools.source_files(paper)]
    assert names == ["paper/report.tex", "paper/results.tex", "paper/references.bib", "figures/a.pdf", "figures/b.png"]
    before = tools.fingerprint(paper)
    assert before == tools.fingerprint(paper)
    for path in (paper / "results.tex", paper / "references.bib", figures / "b.png"):
        content = path.read_bytes()
        path.write_bytes(content + b" ")
        assert tools.fingerprint(paper) != before, f"a change of {path.name} leaves the fingerprint as it was"
        path.write_bytes(content)
    for unused in (figures / "unused.pdf", paper / "draft.tex"):
        unused.write_bytes(b"changed")
    assert tools.fingerprint(paper) == before, "a file the report does not read changed the fingerprint"
    (figures / "a.pdf").unlink()
    with pytest.raises(FileNotFoundError, match="a.pdf"):
        tools.fingerprint(paper)


def test_every_figure_environment_is_in_the_pdf_with_its_caption(report, layout):
    destinations, _ = layout
    environments = _figure_environments()
    assert environments, "the report has no figure"
    for number, (name, body) in enumerate(environments, start=1):
        label = re.search(r"\\label\{([^}]+)\}", body)
        where = f"figure {number} of the sources ({name}, {label.group(1) if label else 'no label'})"
        assert "\\caption" in body, f"{where} has no caption"
        assert f"figure.{number}" in destinations, f"{where} is not in paper/report.pdf: {REBUILD}"
        text = report.pages[destinations[f"figure.{number}"] - 1].extract_text()
        assert re.search(rf"Figure {number}:", text), f"the caption of {where} is not on its page"
    assert f"figure.{len(environments) + 1}" not in destinations, \
        f"the PDF has more figures than the sources: {REBUILD}"
    embedded = set()
    for page in report.pages:
        for xobject in (page.get("/Resources", {}).get("/XObject") or {}).values():
            name = xobject.get_object().get("/PTEX.FileName")
            if name:
                embedded.add((PAPER / str(name)).resolve())
    included = {path.resolve() for path in _report_tools().source_files(PAPER) if path.suffix == ".pdf"
                and path.parent != PAPER}
    assert included <= embedded, f"figures missing from the PDF: {sorted(p.name for p in included - embedded)}"


def test_every_figure_is_near_its_first_mention_and_before_the_references(layout):
    destinations, first_link = layout
    figures = sorted((name for name in destinations if re.fullmatch(r"figure\.\d+", name)),
                     key=lambda name: int(name.split(".")[1]))
    references = min(page for name, page in destinations.items() if name.startswith("cite."))
    appendix = min((page for name, page in destinations.items() if name.startswith("appendix.")), default=None)
    far = []
    for name in figures:
        page = destinations[name]
        number = name.split(".")[1]
        assert name in first_link, f"the text never refers to Figure {number}"
        if abs(page - first_link[name]) > MAX_PAGES_FROM_FIRST_MENTION:
            far.append(f"Figure {number} is on page {page}, first referred to on page {first_link[name]}")
        assert page <= references, f"Figure {number} (page {page}) comes after the references (page {references})"
        assert appendix is None or page < appendix, f"Figure {number} is in the appendix"
    assert not far, "; ".join(far)


def test_no_figure_sticks_out_of_its_page(report):
    for number, page in enumerate(report.pages, start=1):
        forms = {name: xobject.get_object() for name, xobject in
                 (page.get("/Resources", {}).get("/XObject") or {}).items()}
        placed = []

        def visit(operator, operands, cm, tm, forms=forms, placed=placed):
            if operator == b"Do" and operands and operands[0] in forms:
                placed.append((operands[0], cm))

        page.extract_text(visitor_operand_before=visit)
        left, bottom, right, top = (float(value) for value in page.mediabox)
        for name, (a, b, c, d, e, f) in placed:
            x0, y0, x1, y1 = (float(value) for value in forms[name].get("/BBox", [0, 0, 0, 0]))
            xs = [a * x + c * y + e for x in (x0, x1) for y in (y0, y1)]
            ys = [b * x + d * y + f for x in (x0, x1) for y in (y0, y1)]
            figure = forms[name].get("/PTEX.FileName", name)
            assert min(xs) >= left - 1 and max(xs) <= right + 1 and min(ys) >= bottom - 1 and max(ys) <= top + 1, (
                f"{figure} sticks out of page {number}")


def test_the_build_checks_catch_what_latex_lets_through():
    tools = _report_tools()
    log = ("LaTeX Warning: Float too large for page by 711.99677pt on input line 343.\n"
           "Overfull \\hbox (96.19585pt too wide) in paragraph at lines 194--194\n"
           "Overfull \\hbox (4.00493pt too wide) in paragraph at lines 406--406\n"
           "LaTeX Warning: Reference `fig:x' on page 3 undefined on input line 12.\n")
    problems = tools.build_problems(log)
    assert len(problems) == 3, problems
    assert "711.99677" in problems[0] and "96.19585" in problems[1] and "fig:x" in problems[2]
    assert tools.build_problems("Overfull \\hbox (9.9pt too wide) in paragraph at lines 1--2\n") == []
