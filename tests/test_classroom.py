"""The book and the nbgrader assignments, built from the committed notebooks.

The grading tests autograde three submissions of each notebook in a temporary
course: the reference solutions, the untouched student version and a version with
one deliberately wrong answer. `make test` grades notebooks 1 and 2 (about a minute);
`make test-grading` (GBAI_GRADING_NOTEBOOKS=all) grades all ten.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SCRIPTS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
TOOLS = NOTEBOOKS / "_tools"  # the notebook tooling: run as scripts, imported here by path
sys.path.insert(0, str(TOOLS))

pytest.importorskip("nbgrader", reason="the classroom extra is not installed: pip install -e '.[classroom]'")

#: One plausible wrong answer per notebook: (solution cell, code). Each defines the
#: variables its check cell reads, with a value the check must reject.
WRONG_ANSWERS = {
    "01": ("nb01_ex2_solution", "h_025 = 1 / 0.1**2 + 1 / 0.05**2  # forgot the best arm's own term"),
    "02": ("nb02_ex2_solution", "t_infeasible = sum(1 / gbai.kl_bernoulli(row.mean(), 0.3) for row in infeasible.means)"),
    "03": ("nb03_ex2_solution", "risky_out = 1"),
    "04": ("nb04_ex2_solution", "smallest_c = 160"),
    "05": ("nb05_ex1_solution", "dominant_arm = 1"),
    "06": ("nb06_ex1_solution", "paper_runner_up = 1\nfeasible_runner_up = 1"),
    "07": ("nb07_ex3_solution", "widening = 2.0"),
    "08": ("nb08_ex3_solution", "easier, paper = 2.0, 1.0"),
    "09": ("nb09_ex2_solution", "squared_radius_ratio = 2.5  # the figure quoted, not computed"),
    "10": ("nb10_ex2_solution", "sampling_gain = 1.0"),
    "11": ("nb11_ex3_solution", "paper_radius_1000 = float(gbai.confidence_radius(1000, 1000, 25, 0.1))\n"
                                "stitched_radius_1000 = paper_radius_1000  # the paper's radius for both"),
    "12": ("nb12_ex2_solution", "level_structured = np.log(9 / 0.1)\n"
                                "level_every = np.log(50 / 0.1)  # forgot the N(N - 1) arm tests"),
}

SELECTED = os.environ.get("GBAI_GRADING_NOTEBOOKS", "01,02")
GRADED = [script.stem for script in SCRIPTS if SELECTED == "all" or script.stem[:2] in SELECTED.split(",")]


def _pipeline(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    completed = subprocess.run([sys.executable, str(TOOLS / "pipeline.py"), *arguments], cwd=cwd,
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed


# --- the book -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    pytest.importorskip("myst_nb", reason="the book extra is not installed: pip install -e '.[book]'")
    output = tmp_path_factory.mktemp("book") / "site"
    _pipeline("book", "--output", str(output))
    return output


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_every_notebook_has_a_page_with_its_figures(book, script):
    page = book / f"{script.stem}.html"
    assert page.exists(), f"the book has no page for {script.stem}"
    html = page.read_text()
    notebook = nbformat.read(script.with_suffix(".ipynb"), as_version=4)
    stored = sum("image/png" in output.get("data", {}) for cell in notebook.cells
                 for output in cell.get("outputs", []))
    images = re.findall(r'<img[^>]+src="(_images/[^"]+)"', html)
    assert len(images) == stored, f"{script.stem}: {stored} figures stored, {len(images)} shown"
    for source in images:
        assert (book / source).stat().st_size > 1000, f"{source} is missing or empty"
    # Exercises are there, with their solutions collapsed behind the toggle button.
    assert html.count('class="cell tag_solution') == 3
    # Equations are typeset by the MathJax copied into the site, never a CDN.
    assert '<script defer="defer" src="_static/mathjax/tex-mml-chtml.js' in html
    assert "cdn.jsdelivr" not in html and "cdnjs" not in html


def test_the_landing_page_lists_the_notebooks_in_reading_order(book):
    html = (book / "index.html").read_text()
    for name in ("tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions/ams.js"):
        assert (book / "_static" / "mathjax" / name).exists(), name
    positions = [html.find(f'href="{script.stem}.html"') for script in SCRIPTS]
    assert all(position >= 0 for position in positions) and positions == sorted(positions)
    assert "Section II" in html and "Figure 1a" in html
    assert (book / "_static" / "togglebutton.js").exists() or "togglebutton" in html


# --- assignments and autograding ------------------------------------------------------

@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    _pipeline("assignments", *[name[:2] for name in GRADED], "--output", str(course))
    for name in GRADED:
        source = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
        release = course / "release" / name / f"{name}.ipynb"
        cell_id, wrong_code = WRONG_ANSWERS[name[:2]]
        wrong = nbformat.from_dict(source)
        cells = [cell for cell in wrong.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == cell_id]
        assert len(cells) == 1, cell_id
        cells[0].source = wrong_code
        for student, notebook in (("reference", source), ("wrong", wrong)):
            folder = course / "submitted" / student / name
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / f"{name}.ipynb")
        folder = course / "submitted" / "untouched" / name
        folder.mkdir(parents=True)
        shutil.copy(release, folder / f"{name}.ipynb")
    _pipeline("autograde", "--output", str(course))
    from course import score_table

    return course, score_table(course)


def test_student_versions_hide_solutions_and_keep_tests(course):
    folder, _ = course
    for name in GRADED:
        release = nbformat.read(folder / "release" / name / f"{name}.ipynb", as_version=4)
        solutions = [cell for cell in release.cells if cell.metadata.get("nbgrader", {}).get("solution")]
        tests = [cell for cell in release.cells if cell.metadata.get("nbgrader", {}).get("grade")]
        assert len(solutions) == 3 and len(tests) == 3
        assert all("raise NotImplementedError()" in cell.source and "BEGIN SOLUTION" not in cell.source
                   for cell in solutions)
        assert all("assert" in cell.source for cell in tests)
        parameters = [cell for cell in release.cells if "parameters" in cell.metadata.get("tags", [])]
        assert re.search(r"^quick = True", parameters[0].source, re.MULTILINE)
        assert parameters[0].metadata["nbgrader"]["locked"]


def test_reference_solutions_get_full_marks(course):
    _, scores = course
    mine = scores[scores["student"] == "reference"]
    assert set(mine["assignment"]) == set(GRADED)
    assert len(mine) == 3 * len(GRADED)
    assert (mine["score"] == mine["points"]).all(), mine[mine["score"] != mine["points"]]


def test_untouched_student_versions_score_zero_everywhere(course):
    _, scores = course
    mine = scores[scores["student"] == "untouched"]
    assert len(mine) == 3 * len(GRADED)
    assert (mine["score"] == 0).all(), mine[mine["score"] != 0]


def test_one_wrong_answer_loses_exactly_its_points(course):
    folder, scores = course
    reference = scores[scores["student"] == "reference"].set_index(["assignment", "exercise"])["score"]
    wrong = scores[scores["student"] == "wrong"].set_index(["assignment", "exercise"])["score"]
    for name in GRADED:
        broken = WRONG_ANSWERS[name[:2]][0].replace("_solution", "_test")
        lost = (reference[name] - wrong[name])
        assert lost[broken] == reference[name][broken] > 0, name
        assert (lost.drop(broken) == 0).all(), f"{name}: other exercises changed score: {lost[lost != 0]}"
    grades = (folder / "grades.csv").read_text().splitlines()
    assert grades[0] == "student,assignment,exercise,score,points" and len(grades) == 1 + 9 * len(GRADED)


@pytest.mark.parametrize("module, named", [("myst_nb", "myst-nb"), ("mathjax", "django-static-mathjax"),
                                           ("nbgrader", "nbgrader")])
def test_a_missing_tool_stops_with_a_message_naming_it(monkeypatch, capsys, tmp_path, module, named):
    import importlib.util

    import pipeline

    real = importlib.util.find_spec
    monkeypatch.setattr(pipeline.importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    command = "assignments" if module == "nbgrader" else "book"
    assert pipeline.main([command, "--output", str(tmp_path / "out")]) == 2
    message = capsys.readouterr().err
    assert named in message and "pip install -e '.[" in message and message.count("\n") == 1
    assert not (tmp_path / "out").exists()
