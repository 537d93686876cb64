"""How a notebook becomes a page of the book (notebooks/_tools/book_pages.py), without building the book."""

import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebooks" / "_tools"))

from book_pages import PAPER_URL, plain_text, prepare_page  # noqa: E402

STEMS = {number: f"{number:02d}_page" for number in range(1, 13)}
PUBLIC = {"run": "gbai.run", "savefig": "gbai.plotting.savefig"}


def _grading(**fields):
    return {"nbgrader": {"schema_version": 3, "locked": False, "task": False, **fields}}


def _exercise_notebook():
    png = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}}
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
    assert box.source.startswith("`````{admonition} Solution\n:class: dropdown")


def test_a_caption_cell_numbers_its_figure_and_a_table_after_it_moves_out():
    page = prepare_page(_exercise_notebook(), "05_page", STEMS, PUBLIC, "_downloads_src")
    figure = next(cell for cell in page.cells if "mystnb" in cell.metadata)
    assert figure.metadata["mystnb"]["figure"]["name"] == "fig-05-1"
    assert figure.metadata["mystnb"]["image"]["alt"] == "Samples against H_id with the limit T*."
    assert [list(output["data"]) for output in figure.outputs] == [["image/png", "text/plain"]]
    rest = page.cells[page.cells.index(figure) + 1]
    assert rest.source == "" and "remove-input" in rest.metadata["tags"] and "text/html" in rest.outputs[0]["data"]
    assert not any(cell.source.startswith("**Figure.**") for cell in page.cells)


def test_prose_links_notebooks_paper_items_citations_api_and_downloads():
    page = prepare_page(_exercise_notebook(), "05_page", STEMS, PUBLIC, "_downloads_src")
    intro = page.cells[0].source
    assert "[notebook 2](02_page.ipynb)" in intro and "[Figure 1b](06_page.ipynb)" in intro
    assert "Howard et al. {cite:year}`howard2021timeuniform`" in intro
    assert "{download}`05_page.py <_downloads_src/05_page.py>`" in page.cells[1].source
    api = next(cell for cell in page.cells if "api-links" in cell.metadata.get("tags", []))
    assert "{py:obj}`gbai.run`" in api.source and "{py:obj}`gbai.plotting.savefig`" not in api.source


def test_the_own_page_links_its_own_paper_items_to_the_paper():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 6. A page\n\nFigure 1(b) here.")])
    page = prepare_page(notebook, "06_page", STEMS, PUBLIC, "_downloads_src")
    assert f"[Figure 1(b)]({PAPER_URL})" in page.cells[0].source


def test_alt_text_has_no_markup():
    assert plain_text("**Mean** $T^\\star\\,\\mathrm{kl}(\\delta, 1-\\delta)$ of `x`") == "Mean T* kl(δ, 1-δ) of x"
