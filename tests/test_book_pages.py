"""How a notebook becomes a page of the book (notebooks/_tools/book/pages.py), without building the book."""

from pathlib import Path

import nbformat

from notebooks._tools.book.pages import PAPER_URL, book_links, plain_text, prepare_page
from notebooks._tools.book.tables import (
    COLUMN_PX,
    fit_table,
    matching_dataset,
    parse_table,
    printed_size,
    table_width,
)

STEMS = {number: f"{number:02d}_page" for number in range(1, 13)}
PUBLIC = {"run": "gbai.run", "savefig": "gbai.plotting.savefig"}


def _grading(**fields):
    return {"nbgrader": {"schema_version": 3, "locked": False, "task": False, **fields}}


def _exercise_notebook():
    png = {"output_type": "display_data", "metadata": {},
           "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}}
    table = {"output_type": "execute_result", "metadata": {}, "execution_count": 2,
             "data": {"text/plain": "table", "text/html": "<table></table>"}}
    figure = nbformat.v4.new_code_cell("fig = gbai.run()\nsavefig(fig, 'x')\ntable")
    figure.outputs = [nbformat.from_dict(png), nbformat.from_dict(table)]
    solution = nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer = 3\n### END SOLUTION",
                                         metadata={**_grading(grade=False, solution=True, grade_id="s"),
                                                   "tags": ["solution"]})
    check = nbformat.v4.new_code_cell(
        "assert isinstance(answer, int)\n### BEGIN HIDDEN TESTS\nassert answer == 3\n### END HIDDEN TESTS\n"
        "print('Exercise 1: checks passed')", metadata=_grading(grade=True, solution=False, grade_id="t", points=1))
    check.outputs = [nbformat.from_dict({"output_type": "stream", "name": "stdout",
                                         "text": "Exercise 1: checks passed\n"})]
    written = nbformat.v4.new_markdown_cell("Because $x \\to 0.3$.", metadata={
        **_grading(grade=True, solution=True, grade_id="w", points=1), "tags": ["solution"]})
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 5. A page\n\nAs in notebook 2 and Figure 1b (Howard et al. 2021)."),
        figure,
        nbformat.v4.new_markdown_cell("**Figure.** Samples against $H_{id}$ with the limit $T^\\star$."),
        nbformat.v4.new_markdown_cell("**Exercise 1** (1 point). Find `answer`."),
        solution, check, written])


def test_a_solution_and_its_check_become_one_hidden_cell_without_markers():
    page = prepare_page(_exercise_notebook(), "05_page", STEMS, PUBLIC, "_downloads_src")
    text = nbformat.writes(page)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "nbgrader"):
        assert marker not in text
    hidden = [cell for cell in page.cells if "solution" in cell.metadata.get("tags", [])]
    assert len(hidden) == 1 and hidden[0].cell_type == "code"
    assert "answer = 3" in hidden[0].source and "assert answer == 3" in hidden[0].source
    assert [output["text"] for output in hidden[0].outputs] == ["Exercise 1: checks passed\n"]
    box = next(cell for cell in page.cells if "Because" in cell.source)
    assert box.source.startswith("`````{toggle}\n")


def test_a_caption_cell_numbers_its_figure_and_a_table_after_it_moves_out():
    page = prepare_page(_exercise_notebook(), "05_page", STEMS, PUBLIC, "_downloads_src")
    figure = next(cell for cell in page.cells if "mystnb" in cell.metadata)
    assert figure.metadata["mystnb"]["figure"]["name"] == "fig-05-1"
    assert figure.metadata["mystnb"]["image"]["alt"] == "Samples against H_id with the limit T*."
    assert [list(output["data"]) for output in figure.outputs] == [["image/png", "text/plain"]]
    rest = page.cells[page.cells.index(figure) + 1]
    assert "remove-input" in rest.metadata["tags"] and "text/html" in rest.outputs[0]["data"]
    # MyST-NB drops a code cell whose source is blank, outputs and all: the table would be lost.
    assert rest.source.strip()
    assert not any(cell.source.startswith("**Figure.**") for cell in page.cells)


def test_a_rerun_of_a_figure_of_the_paper_keeps_the_papers_number_alone():
    notebook = _exercise_notebook()
    rerun = nbformat.from_dict(notebook.cells[1])
    rerun.outputs = rerun.outputs[:1]
    notebook.cells[1:1] = [rerun, nbformat.v4.new_markdown_cell(
        "**Figure.** Figure 1b of the paper rerun, against $H_{id}$.")]
    page = prepare_page(notebook, "06_page", STEMS, PUBLIC, "_downloads_src")
    names = [cell.metadata["mystnb"]["figure"]["name"] for cell in page.cells if "mystnb" in cell.metadata]
    # The anchor that _book/conf.py leaves out of the book's numbering; the next figure is the page's first.
    assert names == ["paper-figure-1b", "fig-06-1"]
    conf = (Path(__file__).resolve().parents[1] / "notebooks" / "_book" / "conf.py").read_text()
    assert 'PAPER_FIGURE_ANCHOR = "paper-figure-"' in conf


def test_prose_links_notebooks_paper_items_citations_api_and_downloads():
    page = prepare_page(_exercise_notebook(), "05_page", STEMS, PUBLIC, "_downloads_src")
    intro = page.cells[0].source
    assert "[notebook 2](02_page.ipynb)" in intro and "[Figure 1b](06_page.ipynb)" in intro
    assert "Howard et al. {cite:year}`howard2021timeuniform`" in intro
    assert "{download}`05_page.py <_downloads_src/05_page.py>`" in page.cells[1].source
    api = next(cell for cell in page.cells if "api-links" in cell.metadata.get("tags", []))
    assert "{py:obj}`gbai.run`" in api.source and "{py:obj}`gbai.plotting.savefig`" not in api.source


def test_a_name_imported_from_a_module_of_the_api_page_links_there():
    cell = nbformat.v4.new_code_cell("from gbai.studies import replicate_experiment\nreplicate_experiment('exp1')")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 5. A page"), cell])
    public = {**PUBLIC, "replicate_experiment": "gbai.studies.replicate_experiment"}
    page = prepare_page(notebook, "05_page", STEMS, public, "_downloads_src")
    api = next(cell for cell in page.cells if "api-links" in cell.metadata.get("tags", []))
    assert "{py:obj}`gbai.studies.replicate_experiment`" in api.source


def test_the_own_page_links_its_own_paper_items_to_the_paper():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 6. A page\n\nFigure 1(b) here.")])
    page = prepare_page(notebook, "06_page", STEMS, PUBLIC, "_downloads_src")
    assert f"[Figure 1(b)]({PAPER_URL})" in page.cells[0].source


def test_alt_text_has_no_markup():
    assert plain_text("**Mean** $T^\\star\\,\\mathrm{kl}(\\delta, 1-\\delta)$ of `x`") == "Mean T* kl(δ, 1-δ) of x"


# --- tables wider than the text column (book/tables.py) -------------------------------------


def _frame_html(columns: int, rows: int, value: str = "1,234,567", truncated: str = "") -> str:
    header = "".join(f"<th>column {c}</th>" for c in range(columns))
    body = "".join(f"<tr><th>{r}</th>" + "".join(f"<td>{value}</td>" for _ in range(columns)) + "</tr>"
                   for r in range(rows))
    return (f'<div><table border="1" class="dataframe"><thead><tr><th></th>{header}</tr></thead>'
            f"<tbody>{body}</tbody></table>{truncated}</div>")


def test_a_table_is_read_with_its_spans_index_and_headers():
    markup = ('<table class="dataframe"><thead><tr><th>delta</th><th colspan="2">0.1</th></tr>'
              "<tr><th>variant</th><th>a</th><th>b</th></tr></thead><tbody>"
              '<tr><th rowspan="2">x</th><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></tbody></table>')
    table = parse_table(markup)
    assert table.shape == (4, 3) and table.header_rows == 2 and table.index_columns == 1
    assert table.cells[0] == ["delta", "0.1", "0.1"] and table.spanned[0] == [False, False, True]
    assert table.cells[3] == ["x", "3", "4"] and table.spanned[3][0]
    assert table.column_labels() == ["delta / variant", "0.1 / a", "0.1 / b"]
    assert table.to_csv() == "delta / variant,0.1 / a,0.1 / b\nx,1,2\nx,3,4\n"
    assert parse_table("<p>no table</p>") is None
    assert parse_table(markup + markup) is None


def test_a_narrow_table_stays_and_a_wide_one_is_transposed_or_cut_to_fit():
    narrow = _frame_html(3, 10)
    assert table_width(parse_table(narrow)) < COLUMN_PX
    assert fit_table(narrow)[0].html is None
    short_and_wide = _frame_html(20, 3)
    fitted, table = fit_table(short_and_wide)
    assert table_width(table) > COLUMN_PX and fitted.shown == "transposed"
    assert table_width(parse_table(fitted.html)) <= COLUMN_PX
    assert parse_table(fitted.html).shape == (21, 4)
    long_and_wide = _frame_html(20, 60)
    fitted, _ = fit_table(long_and_wide)
    assert fitted.shown == "columns" and 1 <= fitted.columns_shown < 20 and fitted.columns == 20
    shown = parse_table(fitted.html)
    assert table_width(shown) <= COLUMN_PX and shown.shape == (61, fitted.columns_shown + 1)
    # One more column would not have fitted.
    assert table_width(parse_table(long_and_wide).leading_columns(fitted.columns_shown + 1)) > COLUMN_PX


def test_a_table_pandas_shortened_links_the_data_file_that_holds_all_of_it():
    header = "".join(f"<th>c{c}</th>" for c in (0, 1)) + "<th>...</th>" + "<th>c9</th>"
    rows = "".join(f"<tr><th>{r}</th><td>{r}</td><td>{r}</td><td>...</td><td>{r}</td></tr>" for r in (0, 1))
    rows += "<tr><th>...</th><td>...</td><td>...</td><td>...</td><td>...</td></tr>"
    rows += "<tr><th>99</th><td>9</td><td>9</td><td>...</td><td>9</td></tr>"
    markup = (f'<table class="dataframe"><thead><tr><th></th>{header}</tr></thead><tbody>{rows}</tbody></table>'
              "<p>100 rows × 10 columns</p>")
    table = parse_table(markup)
    assert printed_size(markup) == (100, 10)
    assert table.elided() == ([3], [3])
    assert table.to_csv().splitlines() == [",c0,c1,c9", "0,0,0,0", "1,1,1,1", "99,9,9,9"]
    whole = "c" + ",c".join(str(c) for c in range(10)) + "\n" + "".join("1," * 9 + "1\n" for _ in range(100))
    assert matching_dataset(table, (100, 10), {"other.csv": "a,b\n1,2\n", "whole.csv": whole}) == "whole.csv"
    assert matching_dataset(table, (100, 10), {"short.csv": whole.rsplit("\n", 2)[0] + "\n"}) is None


def test_a_page_shows_the_summary_and_a_note_with_the_csv():
    notebook = _exercise_notebook()
    wide = nbformat.v4.new_code_cell("table")
    wide.outputs = [nbformat.from_dict({"output_type": "execute_result", "metadata": {}, "execution_count": 3,
                                        "data": {"text/plain": "table", "text/html": _frame_html(20, 60)}})]
    notebook.cells.insert(3, wide)
    tables = {}
    page = prepare_page(notebook, "05_page", STEMS, PUBLIC, "_downloads_src", tables)
    position = next(index for index, cell in enumerate(page.cells) if cell.source == "table")
    note = page.cells[position + 1]
    assert note.cell_type == "markdown" and note.source.startswith("The table above shows its first")
    assert "{download}`05_page-table-1.csv <_downloads_src/05_page-table-1.csv>`" in note.source
    assert list(tables) == ["05_page-table-1.csv"] and tables["05_page-table-1.csv"].count("\n") == 61
    shown = parse_table(page.cells[position].outputs[0]["data"]["text/html"])
    assert table_width(shown) <= COLUMN_PX
    assert notebook.cells[3].outputs[0]["data"]["text/html"] == _frame_html(20, 60), "the notebook was changed"


def test_the_guides_links_are_rewritten_for_the_flat_book(tmp_path):
    folder = tmp_path / "notebooks" / "_book"
    page = """See [notebook 5](../05_page.ipynb#section-2), [its script](../05_page.py), [results](results.md#what),
[the `report`](../../paper/report.pdf), [tests/test_x.py](../../tests/test_x.py), [a](#local), ![plot](../../f.png),
[the web](https://example.org/a.md) and [not a notebook](../99_gone.ipynb).

```sh
[kept](../../Makefile)
```
"""
    rewritten = book_links(page, folder, {"05_page"})
    assert "[notebook 5](05_page.ipynb#section-2)" in rewritten and "[its script](05_page.ipynb)" in rewritten
    assert "[results](results.md#what)" in rewritten and "[a](#local)" in rewritten
    # The book holds no other file of the repository: the link becomes its text.
    assert "the `report`, tests/test_x.py," in rewritten and "not a notebook." in rewritten
    # Images, web addresses and code are left alone.
    assert "![plot](../../f.png)" in rewritten and "[the web](https://example.org/a.md)" in rewritten
    assert "[kept](../../Makefile)" in rewritten
