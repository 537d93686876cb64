"""The book and the nbgrader course, built from the committed notebooks.

The exercise checks read the percent scripts of every notebook. The grading tests
autograde, in a temporary course and for each selected notebook, the reference
solutions, the untouched student version and a version with one wrong answer; for
the first notebook also the reference saved under Jupyter's copy name
(``NN_name-Copy1.ipynb``), whose folder is then removed before a second, selective
run. `make test` grades notebook 1 (about a minute); `make test-grading`
(GBAI_GRADING_NOTEBOOKS=all) grades all of them.
"""

import ast
import csv
import functools
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SCRIPTS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))

pytest.importorskip("nbgrader", reason="the classroom extra is not installed: pip install -e '.[classroom]'")

#: One plausible wrong answer per notebook: (solution cell, code). Each defines the
#: variables its check cell reads, with a value that passes the visible checks and
#: that the hidden ones must reject.
WRONG_ANSWERS = {
    "01_problem_setup": ("nb01_ex2_solution", "h_025 = 1 / 0.1**2 + 1 / 0.05**2  # forgot the best arm's own term"),
    "02_lower_bound": ("nb02_ex2_solution",
                       "t_infeasible = sum(1 / gbai.kl_bernoulli(row.mean(), 0.3) for row in infeasible.means)"),
    "03_css_lucb_at_work": ("nb03_ex2_solution",
                            "risky_out = int(trace['t'].iloc[-1])  # the last round, not the first"),
    "04_upper_bound_check": ("nb04_ex2_solution", "smallest_c = 160"),
    "05_experiment_1": ("nb05_ex1_solution", "dominant_arm = 1"),
    "06_experiment_2": ("nb06_ex1_solution", "paper_runner_up = 1\nfeasible_runner_up = 1"),
    "07_experiment_3": ("nb07_ex3_solution", "widening = 2.0"),
    "08_varying_n_and_m": ("nb08_ex3_solution", "easier, paper = 2.0, 1.0"),
    "09_published_figures": ("nb09_ex2_solution",
                             "squared_radius_ratio = 2.25  # the staircase's factor, not computed"),
    "10_css_lucb_plus": ("nb10_ex2_solution", "sampling_gain = 1.0"),
    "11_lma_glr_and_the_limit": ("nb11_ex3_solution",
                                 "paper_radius_1000 = float(gbai.confidence_radius(1000, 1000, 25, 0.1))\n"
                                 "stitched_radius_1000 = paper_radius_1000  # the paper's radius for both"),
    "12_betting": ("nb12_ex2_solution", "level_structured = np.log(9 / 0.1)\n"
                                        "level_every = np.log(50 / 0.1)  # forgot the N(N - 1) arm tests"),
    "13_against_the_literature": ("nb13_ex1_solution", "gk_level = np.log(2 * 10_000 / 0.01)  # forgot the K - 1\n"
                                                       "heuristic_level = np.log((np.log(10_000) + 1) / 0.01)"),
}

SELECTED = os.environ.get("GBAI_GRADING_NOTEBOOKS", "01")
GRADED = [script.stem for script in SCRIPTS if SELECTED == "all" or script.stem[:2] in SELECTED.split(",")]
STUDENTS = ("reference", "wrong", "untouched")


def _pipeline(*arguments: str, cwd: Path = ROOT, status: int = 0,
              env: dict | None = None) -> subprocess.CompletedProcess:
    completed = subprocess.run([sys.executable, "-m", "notebooks._tools", *arguments], cwd=cwd,
                               capture_output=True, text=True, env=env)
    assert completed.returncode == status, completed.stderr[-3000:]
    return completed


def _streamed(*arguments: str, status: int = 0) -> subprocess.CompletedProcess:
    """``_pipeline``, reading the output as it comes: ``running`` has, per stdout line, whether the
    command was still running when the line arrived."""
    import threading

    process = subprocess.Popen([sys.executable, "-m", "notebooks._tools", *arguments], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.extend(process.stderr))
    reader.start()
    lines, running = [], []
    for line in process.stdout:
        running.append(process.poll() is None)
        lines.append(line)
    process.wait()
    reader.join()
    completed = subprocess.CompletedProcess(process.args, process.returncode, "".join(lines), "".join(errors))
    assert completed.returncode == status, completed.stderr[-3000:]
    completed.running = running
    return completed


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


# --- the exercises, read from the scripts -------------------------------------------

_PROMPT = re.compile(r"\*\*Exercise (\d+)\*\* \((\d+) points?(?:: (\d+) automatic, (\d+) for the written answer)?\)\.")
_ID = re.compile(r"^nb\d+_ex(\d+)_(solution|test|answer)$")


def _exercises(notebook) -> dict[int, dict]:
    """Each exercise of a notebook: its prompt, solution, test and answer cells, in order."""
    exercises: dict[int, dict] = {}
    current = None
    for cell in notebook.cells:
        match = _PROMPT.search(cell.source) if cell.cell_type == "markdown" and not _meta(cell) else None
        if match:
            current = exercises.setdefault(int(match.group(1)), {"prompt": "", "stated": match.groups()[1:],
                                                                 "cells": {}})
        if current is not None and cell.cell_type == "markdown" and not _meta(cell):
            current["prompt"] += cell.source + "\n"
        found = _ID.match(_meta(cell).get("grade_id", ""))
        if found:
            assert current is not None and int(found.group(1)) == max(exercises), (
                f"cell {_meta(cell)['grade_id']} is not under the prompt of its exercise")
            current["cells"][found.group(2)] = cell
    return exercises


def _prompt_numbers(prompt: str) -> set[float]:
    return {float(number) for number in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", prompt.replace(",", ""))}


def _stated(value, prompt: str) -> bool:
    """Whether a literal of a check is given in the exercise's prompt (so it tells nothing)."""
    if isinstance(value, str):
        return value in prompt
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) in _prompt_numbers(prompt)
    return False


def _visible(source: str) -> str:
    """A test cell as the student version shows it: the hidden block removed, as nbgrader does."""
    kept, hidden = [], False
    for line in source.splitlines():
        if "BEGIN HIDDEN TESTS" in line:
            hidden = True
        elif "END HIDDEN TESTS" in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def _literal(node):
    """The value of a literal operand (a constant, or a tuple/list/set of constants), else None."""
    if isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, bool):
        return [node.value]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return [-node.operand.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
            isinstance(element, ast.Constant) for element in node.elts):
        return [element.value for element in node.elts]
    return None


def _uses_gbai(node, derived: set[str]) -> bool:
    """Whether an expression calls gbai or reads a name the cell computed with gbai."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in derived:
            return True
        if isinstance(child, ast.Call):
            root = child.func
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.value if not isinstance(root, ast.Call) else root.func
            if isinstance(root, ast.Name) and root.id == "gbai":
                return True
    return False


def answer_leaks(visible: str, prompt: str) -> list[str]:
    """What in the visible part of a test cell could state an answer.

    A check may compare the student's values with each other, with the notebook's
    data, with a range or with what the prompt itself gives; it may not test equality
    (``==``, ``!=``, ``in``, ``is``) with a literal the prompt does not state or with a
    value computed by ``gbai`` in the cell, nor measure a distance (``abs``,
    ``isclose``) to one; and it prints only fixed text.
    """
    tree = ast.parse(visible)
    derived = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _uses_gbai(node.value, set())
               for target in node.targets if isinstance(target, ast.Name)}
    leaks = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is,
                                                                 ast.IsNot)) for op in node.ops):
            for operand in [node.left, *node.comparators]:
                values = _literal(operand)
                if values and not all(_stated(value, prompt) for value in values):
                    leaks.append(f"equality with the literal {ast.unparse(operand)}")
                elif _uses_gbai(operand, derived):
                    leaks.append(f"equality with a value gbai computes: {ast.unparse(operand)}")
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("abs", "isclose", "allclose", "approx"):
                for argument in ast.walk(node):
                    values = _literal(argument) if argument is not node else None
                    if values and not all(_stated(value, prompt) for value in values):
                        leaks.append(f"distance to the literal {ast.unparse(argument)}")
                if any(_uses_gbai(argument, derived) for argument in node.args):
                    leaks.append(f"distance to a value gbai computes: {ast.unparse(node)}")
            if name == "print" and not all(isinstance(argument, ast.Constant) for argument in node.args):
                leaks.append(f"prints a value: {ast.unparse(node)}")
    return leaks


def test_the_leak_detector_flags_answers_and_passes_form_checks():
    prompt = "Store the arm in `dominant_arm`; the instance has 6 arms at x = 0.31."
    assert answer_leaks("assert dominant_arm == 0", prompt)
    assert answer_leaks("assert abs(h - 1200.0) < 1e-6", prompt)
    assert answer_leaks("check = gbai.Instance(m, 0.45)\nassert feasible == check.feasible_set", prompt)
    assert answer_leaks("print(f'H = {h}')", prompt)
    assert not answer_leaks("assert dominant_arm in range(6)\nassert n == 6 and 0 < ratio < 1\n"
                            "print('Exercise 1: checks passed')", prompt)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_every_exercise_states_its_points_and_has_its_cells(script):
    exercises = _exercises(jupytext.read(script))
    assert sorted(exercises) == list(range(1, len(exercises) + 1)) and len(exercises) >= 3
    for number, exercise in exercises.items():
        cells = exercise["cells"]
        assert {"solution", "test"} <= set(cells), f"exercise {number} lacks a solution or a test cell"
        assert cells["solution"].cell_type == "code" and cells["test"].cell_type == "code"
        total, auto, written = (int(value) if value else None for value in exercise["stated"])
        assert float(_meta(cells["test"])["points"]) == (auto if written else total), f"exercise {number}: test points"
        if "answer" in cells:
            answer = _meta(cells["answer"])
            assert cells["answer"].cell_type == "markdown" and answer["solution"] and answer["grade"]
            assert written is not None and float(answer["points"]) == written and auto + written == total, (
                f"exercise {number}: written answer points")
            assert cells["answer"].source.strip(), f"exercise {number}: the written answer has no reference answer"
        else:
            assert written is None, f"exercise {number} states written points but has no answer cell"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_visible_tests_state_no_answer_and_hidden_tests_decide(script):
    for number, exercise in _exercises(jupytext.read(script)).items():
        source = exercise["cells"]["test"].source
        assert source.count("### BEGIN HIDDEN TESTS") == 1 and source.count("### END HIDDEN TESTS") == 1, (
            f"exercise {number}: the test cell needs one hidden block")
        hidden = source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
        assert "assert" in hidden, f"exercise {number}: the hidden block checks nothing"
        visible = _visible(source)
        assert "assert" in visible, f"exercise {number}: nothing checks the form of the answer"
        assert not answer_leaks(visible, exercise["prompt"]), (number, answer_leaks(visible, exercise["prompt"]))
        for node in ast.walk(ast.parse(source)):
            # An assert without a message shows a bare AssertionError in the feedback.
            if isinstance(node, ast.Assert):
                assert node.msg is not None, f"exercise {number}: `{ast.unparse(node)}` has no message"


def _course_counts() -> tuple[int, float, float, int]:
    exercises = auto = written = answers = 0
    for script in SCRIPTS:
        for exercise in _exercises(jupytext.read(script)).values():
            exercises += 1
            auto += float(_meta(exercise["cells"]["test"])["points"])
            if "answer" in exercise["cells"]:
                answers += 1
                written += float(_meta(exercise["cells"]["answer"])["points"])
    return exercises, auto, written, answers


def test_the_teaching_guide_states_the_number_of_exercises_and_points():
    exercises, auto, written, answers = _course_counts()
    guide = (NOTEBOOKS / "_book" / "teaching.md").read_text()
    stated = re.search(r"\*\*(\d+) exercises, (\d+) points\*\*:\s+(\d+) checked\s+automatically,\s+(\d+)\s+for\s+"
                       r"(\d+)\s+written\s+answers", guide)
    assert stated, "the teacher's guide must state the exercises and points in its usual sentence"
    assert [int(value) for value in stated.groups()] == [exercises, auto + written, auto, written, answers]


# --- the student header, without nbgrader ---------------------------------------------


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_the_student_version_starts_with_a_header(script):
    from notebooks._tools.course.release import instructor_notebook

    notebook = instructor_notebook(script)
    header, name, setup = notebook.cells[:3]
    exercises, auto, written = len(_exercises(jupytext.read(script))), 0.0, 0.0
    for cell in notebook.cells:
        if _meta(cell).get("grade"):
            if cell.cell_type == "code":
                auto += _meta(cell)["points"]
            else:
                written += _meta(cell)["points"]
    assert header.cell_type == "markdown" and exercises
    assert f"`{script.stem}.ipynb`" in header.source and "Restart" in header.source and "name" in header.source
    assert f"{auto + written:g} points, {auto:g} checked automatically" in header.source
    assert (f"{written:g} for written answers" in header.source) == (written > 0)
    assert name.cell_type == "code" and 'NAME = ""' in name.source and not _meta(name)
    assert _meta(setup)["locked"] and not _meta(setup)["grade"]
    assert 'os.environ["GBAI_FIGURES_DIR"] = os.path.abspath("figures")' in setup.source


# --- matching submissions to assignments, without grading --------------------------------


def _handed_in(path: Path, prefix: str, answered: bool) -> None:
    """A small notebook with one answer cell of exercise ``prefix`` (nbgrader ids and checksum)."""
    from nbgrader.utils import compute_checksum

    cell = nbformat.v4.new_code_cell("raise NotImplementedError()")
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": f"{prefix}_ex1_solution", "locked": False,
                                 "schema_version": 3, "solution": True, "task": False}
    cell.metadata.nbgrader["checksum"] = compute_checksum(cell)
    if answered:
        cell.source = "answer = 42"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)


def test_submissions_are_matched_by_their_cells_then_by_their_name(tmp_path):
    from notebooks._tools.course.submissions import find_submissions

    assignments = {"01_a": {"nb01_ex1_solution"}, "02_b": {"nb02_ex1_solution"}}
    submitted = tmp_path / "submitted"
    _handed_in(submitted / "ann" / "01_a" / "01_a.ipynb", "nb01", answered=True)
    _handed_in(submitted / "bob" / "01_a" / "01_a.ipynb", "nb01", answered=False)  # Jupyter's copy holds the work
    _handed_in(submitted / "bob" / "01_a" / "01_a-Copy1.ipynb", "nb01", answered=True)
    _handed_in(submitted / "cat" / "02_b (1).ipynb", "nb02", answered=True)  # one folder too high
    _handed_in(submitted / "dan" / "01_a" / "mine.ipynb", "nb01", answered=True)
    _handed_in(submitted / "dan" / "01_a" / "mine-2.ipynb", "nb01", answered=True)  # two answered candidates
    _handed_in(submitted / "eve" / "01_a" / "01_a.ipynb", "nb02", answered=True)  # notebook 2 under notebook 1's name
    (submitted / "fay" / "01_a").mkdir(parents=True)
    (submitted / "fay" / "01_a" / "01_a.ipynb").write_text("not json")
    _handed_in(submitted / "gil" / "01_a" / "01_a.ipynb", "nb01", answered=False)  # two answered copies beside it
    _handed_in(submitted / "gil" / "01_a" / "01_a-Copy1.ipynb", "nb01", answered=True)
    _handed_in(submitted / "gil" / "01_a" / "01_a-Copy2.ipynb", "nb01", answered=True)
    found, problems = find_submissions(submitted, assignments)
    graded = {(item.student, item.assignment): (item.path.name, item.note is not None) for item in found}
    assert graded == {("ann", "01_a"): ("01_a.ipynb", False), ("bob", "01_a"): ("01_a-Copy1.ipynb", True),
                      ("cat", "02_b"): ("02_b (1).ipynb", True)}
    reported = {(problem.student, problem.path.name, problem.spare, problem.assignment) for problem in problems}
    assert reported == {("bob", "01_a.ipynb", True, "01_a"), ("dan", "01_a", False, "01_a"),
                        ("eve", "01_a.ipynb", False, "01_a"), ("fay", "01_a.ipynb", False, "01_a"),
                        ("gil", "01_a", False, "01_a")}
    assert any("holds the exercises of 02_b" in problem.reason for problem in problems)
    assert any(problem.student == "gil" and "01_a-Copy1.ipynb, 01_a-Copy2.ipynb, 01_a.ipynb" in problem.reason
               for problem in problems)


def test_cell_issues_name_timeouts_deletions_and_edits(tmp_path):
    from nbgrader.utils import compute_checksum

    from notebooks._tools.course.grades import CellIssue, cell_issues

    def cell(source, grade_id=None, cell_type="code", **meta):
        made = (nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell)(source)
        if grade_id:
            made.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "task": False,
                                         "grade": False, "solution": False, "locked": False, **meta}
        return made

    source = [cell("quick = True", "a_parameters", locked=True),
              cell("x = 1", "nb01_ex1_solution", solution=True),
              cell("assert x == 1", "nb01_ex1_test", grade=True, locked=True, points=2),
              cell("import time"),
              cell("y = 2", "nb01_ex2_solution", solution=True),
              cell("assert y", "nb01_ex2_test", grade=True, locked=True, points=1),
              cell("because", "nb01_ex2_answer", "markdown", grade=True, solution=True, points=1)]
    for item in source:
        if item.metadata.get("nbgrader", {}).get("locked"):
            item.metadata.nbgrader["checksum"] = compute_checksum(item)
    handed_in = [nbformat.from_dict(item) for item in source if item.metadata.get("nbgrader", {}).get("grade_id")
                 not in ("a_parameters", "nb01_ex1_test", "nb01_ex2_answer")]
    handed_in[-1].source = "assert True  # made to pass"
    graded = [nbformat.from_dict(item) for item in handed_in]
    graded[1].outputs = [nbformat.v4.new_output("error", ename="CellTimeoutError", evalue="timed out: stopped "
                                                "after 5 s, the time limit per cell", traceback=[])]
    for folder, cells in (("source/a", source), (".grading/submitted/s/a", handed_in), ("autograded/s/a", graded)):
        (tmp_path / folder).mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / folder / "a.ipynb")
    assert cell_issues(tmp_path, "s", "a") == [
        # A plain cell that timed out counts against the next exercise.
        CellIssue("timeout", "cell 2", "cell 2 (`import time`)", 2,
                  "cell 2 (`import time`): timed out: stopped after 5 s, the time limit per cell"),
        CellIssue("deleted", "a_parameters", "read-only cell a_parameters", None,
                  "read-only cell a_parameters: deleted from the notebook handed in, so the cells after it ran "
                  "without it"),
        CellIssue("deleted", "nb01_ex1_test", "exercise 1, automatic test", 1,
                  "exercise 1, automatic test: deleted from the notebook handed in, not run: 0 points", 2.0),
        CellIssue("deleted", "nb01_ex2_answer", "exercise 2, written answer", 2,
                  "exercise 2, written answer: deleted from the notebook handed in, not run: 0 points", 1.0),
        CellIssue("edited", "nb01_ex2_test", "exercise 2, automatic test", 2,
                  "exercise 2, automatic test: edited, graded with the original")]
    assert cell_issues(tmp_path, "nobody", "a") == []


def test_grading_waits_for_the_last_outputs_of_a_slow_kernel(tmp_path):
    """On a busy machine a cell's last messages can come seconds after its reply: grading waits for them.

    The first cell makes the kernel announce that it is idle 6 s late, once; nbclient's
    own wait of 4 s would give up on the notebook (the failure of a loaded test run).
    """
    from notebooks._tools.course.base import nbgrader_api
    from notebooks._tools.course.sandbox import grading_execute

    late = ("import time\n"
            "kernel = get_ipython().kernel\n"
            "publish = kernel._publish_status\n"
            "def idle_late(status, channel, parent=None):\n"
            "    if status == 'idle' and channel == 'shell':\n"
            "        kernel._publish_status = publish\n"
            "        time.sleep(6)\n"
            "    publish(status, channel, parent)\n"
            "kernel._publish_status = idle_late\n"
            "print('first')")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(late),
                                               nbformat.v4.new_code_cell("print('second')")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    execute = grading_execute()(config=nbgrader_api(tmp_path).config)
    start = time.perf_counter()
    execute.preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    assert [[output.get("text") for output in cell.outputs] for cell in notebook.cells] == [["first\n"], ["second\n"]]
    assert time.perf_counter() - start > 6  # the late message did come late


# --- the book -----------------------------------------------------------------------


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
    # Exercises are there, with their code solutions collapsed behind the toggle button.
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


class _VisibleText(HTMLParser):
    """The text of a page outside collapsed solutions (cells tagged solution, toggle blocks)."""

    def __init__(self):
        super().__init__()
        self.stack: list[bool] = []  # per open div: does it start a hidden part?
        self.hidden_depth = 0
        self.visible: list[str] = []
        self.hidden: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag != "div":
            return
        classes = (dict(attrs).get("class") or "").split()
        hides = "tag_solution" in classes or "toggle" in classes
        self.stack.append(hides)
        self.hidden_depth += hides

    def handle_endtag(self, tag):
        if tag == "div" and self.stack:
            self.hidden_depth -= self.stack.pop()

    def handle_data(self, data):
        (self.hidden if self.hidden_depth else self.visible).append(data)


def _split_page(html: str) -> tuple[str, str]:
    parser = _VisibleText()
    parser.feed(html)
    return "".join(parser.visible), "".join(parser.hidden)


def test_the_book_shows_no_grading_marker_and_no_check_outside_a_solution(book):
    # The teacher's guide and the page on Lab describe nbgrader and its markers to the
    # teacher on purpose; every other page, the notebooks' above all, must show none.
    guides = {"teaching.html", "lab-and-book.html"}
    for page in book.rglob("*.html"):
        if page.name in guides and page.parent == book:
            continue
        html = page.read_text()
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "nbgrader"):
            assert marker not in html, f"{page.name} shows {marker!r}"
    for script in SCRIPTS:
        visible, hidden = _split_page((book / f"{script.stem}.html").read_text())
        checks = [line.strip() for cell in jupytext.read(script).cells
                  if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")
                  for line in cell.source.splitlines() if line.strip().startswith("assert ")]
        assert len(checks) >= 3, f"{script.stem}: no checks found"
        for line in checks:
            assert line not in visible, f"{script.stem}: a check is visible outside the solutions: {line}"
            assert line in hidden, f"{script.stem}: a check is missing from the solutions: {line}"
        assert "checks passed" not in visible, f"{script.stem}: a check's output is visible outside the solutions"
        assert "checks passed" in hidden, f"{script.stem}: the checks' output is missing"
        assert "Exercise 1" in visible, f"{script.stem}: the questions must stay visible"


def test_the_solution_toggle_hides_whole_cells(book):
    conf = (NOTEBOOKS / "_book" / "conf.py").read_text()
    assert ".cell.tag_solution" in conf and ".tag_solution .cell_input" not in conf


def test_figures_are_numbered_with_captions_and_alt_text(book):
    captions = 0
    for script in SCRIPTS:
        html = (book / f"{script.stem}.html").read_text()
        figures = re.findall(r"<figure.*?</figure>", html, re.DOTALL)
        captions += len(figures)
        for figure in figures:
            alt = re.search(r'<img alt="([^"]*)"', figure).group(1)
            assert len(alt.split()) >= 8 and "_images/" not in alt and "$" not in alt, f"{script.stem}: alt {alt!r}"
            # One number a caption: the book's, or the paper's for a rerun of one of its figures.
            numbered = bool(re.search(r'<span class="caption-number">Figure \d+ </span>', figure))
            rerun = bool(re.search(r'<span class="caption-text">Figure \d+[a-z]? of the paper', figure))
            assert numbered != rerun, f"{script.stem}: {'two numbers' if numbered else 'no number'} in a caption"
    assert captions >= 15, f"only {captions} captioned figures"


def test_links_to_notebooks_the_paper_the_api_and_the_references(book):
    five = (book / "05_experiment_1.html").read_text()
    assert 'href="02_lower_bound.html"' in five.split('id="main-content"', 1)[-1], "notebook 2 is not a link"
    assert 'href="api/gbai.studies.replicate_experiment.html#gbai.studies.replicate_experiment"' in five
    eleven = (book / "11_lma_glr_and_the_limit.html").read_text()
    assert re.search(r'href="references.html#[^"]+"', eleven), "citations do not link to the references"
    references = (book / "references.html").read_text()
    for author in ("Garivier", "Howard", "Kaufmann", "Koolen", "Waudby-Smith", "Jourdan", "Dharod"):
        assert author in references, author
    api = (book / "api.html").read_text()
    for name in ("gbai.run", "gbai.sweep_experiment", "gbai.plotting.savefig", "gbai.Instance"):
        assert f"api/{name}.html" in api, name
        assert (book / "api" / f"{name}.html").exists(), name


def test_the_guide_pages_are_in_the_book_and_their_links_resolve(book):
    index = (book / "index.html").read_text()
    for guide in ("results", "teaching", "large-sweeps", "architecture", "lab-and-book"):
        html = (book / f"{guide}.html").read_text()
        assert f'href="{guide}.html"' in index, f"the landing page does not reach {guide}"
        main = html.split('id="main-content"', 1)[-1]
        for href in set(re.findall(r'href="([^"]+)"', main)):
            if re.match(r"[a-z]+:", href) or href.startswith(("_static/", "_sources/")):
                continue
            path, _, anchor = href.partition("#")
            target = book / path if path else book / f"{guide}.html"
            assert target.is_file(), f"{guide}.html links {href}, which the book does not hold"
            if anchor:
                assert f'id="{anchor}"' in target.read_text(), f"{guide}.html links {href}: no such anchor"
        # Links written for the code host reach the notebooks' pages, never a path outside the book.
        assert "../" not in "".join(re.findall(r'href="([^"]+)"', main)), f"{guide}.html keeps a repository path"
    results = (book / "results.html").read_text()
    assert 'href="09_published_figures.html"' in results and 'href="recommended.html"' in results
    assert 'href="teaching.html#' in (book / "lab-and-book.html").read_text()


def test_every_page_offers_its_py_and_ipynb(book):
    for script in SCRIPTS:
        html = (book / f"{script.stem}.html").read_text()
        for suffix in (".py", ".ipynb"):
            link = re.search(rf'href="(_downloads/[^"]+/{script.stem}{re.escape(suffix)})"', html)
            assert link, f"{script.stem}: no {suffix} download"
            assert (book / link.group(1)).read_bytes() == script.with_suffix(suffix).read_bytes()


def test_titles_are_plain_text_and_there_is_one_search_box(book):
    for page in book.glob("*.html"):
        html = page.read_text()
        title = re.search(r"<title>(.*?)</title>", html, re.DOTALL).group(1)
        assert "\\(" not in title and "$" not in title, f"{page.name}: LaTeX in the title {title!r}"
        if page.name != "search.html":
            assert html.count("search-button-field") == 1, f"{page.name}: not exactly one search field"
    index = (book / "index.html").read_text()
    assert index.count("constrained best arm identification in grouped bandits</h1>") <= 1


_PAGE_LAYOUT = """() => {
  const article = document.querySelector('article.bd-article');
  const column = article.querySelector('p').getBoundingClientRect().width;
  const tables = [...article.querySelectorAll('table')].map(table => ({
    width: table.getBoundingClientRect().width,
    overflow: table.parentElement.scrollWidth - table.parentElement.clientWidth,
    start: table.innerText.slice(0, 50)}));
  return {column, tables,
          toggles: article.querySelectorAll('details.toggle-details').length,
          otherToggles: article.querySelectorAll(
            '.admonition.toggle, .admonition.dropdown, button.toggle-button').length,
          codeSolutions: article.querySelectorAll('.cell.tag_solution').length,
          writtenSolutions: article.querySelectorAll('div.toggle:not(.cell)').length};
}"""


def test_at_1280_px_every_table_fits_the_text_column_and_solutions_share_one_toggle(book, browser):
    from notebooks._tools.book.tables import COLUMN_PX

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    written = 0
    try:
        for script in SCRIPTS:
            page.goto((book / f"{script.stem}.html").as_uri())
            layout = page.evaluate(_PAGE_LAYOUT)
            # make book fits tables to this column: a theme with another column width needs a new COLUMN_PX.
            assert abs(layout["column"] - COLUMN_PX) < 1, f"{script.stem}: the text column is {layout['column']} px"
            for table in layout["tables"]:
                assert table["width"] <= layout["column"] + 0.5 and table["overflow"] <= 0, (
                    f"{script.stem}: a table {table['width']:.0f} px wide in a column of {layout['column']:.0f} px: "
                    f"{table['start']!r}")
            # One kind of toggle: code solutions (with their checks) and written answers alike.
            assert layout["otherToggles"] == 0, f"{script.stem}: another style of toggle"
            assert layout["codeSolutions"] >= 3, f"{script.stem}: {layout}"
            assert layout["toggles"] == layout["codeSolutions"] + layout["writtenSolutions"], f"{script.stem}: {layout}"
            written += layout["writtenSolutions"]
        assert written >= 3, "the written answers are not behind the solution toggle"
        # A written answer opens like a code solution.
        page.goto((book / f"{SCRIPTS[0].stem}.html").as_uri())
        written = page.locator("details.toggle-details:has(div.toggle:not(.cell))").first
        assert not written.locator("div.toggle").is_visible()
        written.locator("summary").click()
        written.locator("div.toggle").wait_for(state="visible")
        assert len(written.locator("div.toggle").inner_text().split()) >= 5, "the written answer is empty"
    finally:
        page.close()


def test_a_table_too_wide_for_the_page_offers_its_csv(book):
    notes = 0
    for script in SCRIPTS:
        html = (book / f"{script.stem}.html").read_text()
        for paragraph in re.findall(r"<p>The table above (?:shows|is shown).*?</p>", html, re.DOTALL):
            notes += 1
            link = re.search(r'href="(_downloads/[^"]+\.csv)"', paragraph)
            assert link, f"{script.stem}: a summarized table without its CSV"
            rows = list(csv.reader(io.StringIO((book / link.group(1)).read_text())))
            assert len(rows) >= 2 and len(rows[0]) >= 3, f"{script.stem}: {link.group(1)} holds no table"
            shown = re.search(r"first (\d+) of (\d+) columns", paragraph)
            if shown:
                assert len(rows[0]) >= int(shown.group(2)), f"{script.stem}: {link.group(1)} lacks columns"
    assert notes >= 5, f"only {notes} summarized tables: did make book stop fitting them?"


# --- assignments and autograding ------------------------------------------------------


def _solution_names(cell) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(cell.source)):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            names += [element.id for element in ast.walk(target) if isinstance(element, ast.Name)]
    return names


_DUMP = """\
import json as _json
import numbers as _numbers


def _plain(value):
    if isinstance(value, (str, bool)):
        return value
    if isinstance(value, _numbers.Number):
        return float(value)
    if isinstance(value, (tuple, list, set, frozenset)):
        return [_plain(item) for item in value]
    return None


print("ANSWERS " + _json.dumps({{_name: _plain(globals()[_name]) for _name in {names!r} if _name in globals()}}))
"""


def _printed(folder: Path, student: str, name: str, marker: str):
    """The JSON value a cell of a graded notebook printed after ``marker`` (grading kernels cannot write outside)."""
    notebook = nbformat.read(folder / "autograded" / student / name / f"{name}.ipynb", as_version=4)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            for line in "".join(output.get("text", "")).splitlines():
                if line.startswith(marker + " "):
                    return json.loads(line[len(marker) + 1:])
    raise AssertionError(f"no line {marker} in the graded notebook of {student}")


class Course:
    """The temporary course the grading tests share, and what each command printed."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.first = GRADED[0]


#: Seconds a cell may run when the class is graded. The slowest cell of notebook 1 in
#: the quick configuration (its imports) took 3 s on the quiet 2-core machine with an
#: empty numba cache (the sweep cell compiling: 2 s) and 7 s under a load of 6; 30 s
#: leaves four times that, and the student whose cell never ends costs 30 s.
CLASS_TIMEOUT = 30
#: A second assignment, handed in by the reference student, for the selection by assignment:
#: notebook 7, the quickest to grade after notebook 1 (23 s against 32 to 54 s for 2, 5, 6
#: and 8 on the loaded 2-core machine), or the next one if notebook 1 is not graded first.
SECOND = next(name for name in ["07_experiment_3", *(script.stem for script in SCRIPTS)] if name != GRADED[0])


def _with(notebook, changes: dict[str, str | None]):
    """A copy of ``notebook`` with the cells of these nbgrader ids given a new source (None: deleted)."""
    copy = nbformat.from_dict(notebook)
    ids = [_meta(cell).get("grade_id") for cell in copy.cells]
    assert set(changes) <= set(ids), set(changes) - set(ids)
    copy.cells = [cell for cell in copy.cells if changes.get(_meta(cell).get("grade_id"), "") is not None]
    for cell in copy.cells:
        if _meta(cell).get("grade_id") in changes:
            cell.source = changes[_meta(cell)["grade_id"]]
    return copy


def _class(folder: Path, first: str) -> dict[str, dict]:
    """Hand in notebook ``first`` for a class of twelve with the usual slips; returns what each should get.

    For each student: ``files`` (path under ``submitted/`` -> notebook), then either
    ``lost`` (exercise -> the status of its test row when it scores 0; no ``lost``
    entry means full marks) with ``graded_file`` (the file graded), or ``refused``
    (the reason starts so).
    """
    source = nbformat.read(folder / "source" / first / f"{first}.ipynb", as_version=4)
    release = nbformat.read(folder / "release" / first / f"{first}.ipynb", as_version=4)
    prefix = f"nb{first[:2]}"
    wrong_cell, wrong_code = WRONG_ANSWERS[first]
    wrong_exercise = int(_ID.match(wrong_cell).group(1))
    expected = f"{first}/{first}.ipynb"
    every = {number: "graded" for number in _exercises(jupytext.read(NOTEBOOKS / f"{first}.py"))}
    copy = f"{first}/{first}-Copy1.ipynb"
    return {
        "untouched": {"files": {expected: release}, "lost": every, "graded_file": expected},
        "reference": {"files": {expected: source}, "lost": {}, "graded_file": expected},
        "wrong": {"files": {expected: _with(source, {wrong_cell: wrong_code})}, "lost": {wrong_exercise: "graded"},
                  "graded_file": expected},
        "syntax": {"files": {expected: _with(source, {f"{prefix}_ex1_solution": "answer = (1,  # never closed"})},
                   "lost": {1: "graded"}, "graded_file": expected},
        "sleeper": {"files": {expected: _with(source, {f"{prefix}_ex2_solution": "import time\n\n"
                                                                                 "time.sleep(100_000)"})},
                    "lost": {2: "timeout"}, "graded_file": expected},
        "deleter": {"files": {expected: _with(source, {f"{prefix}_ex2_test": None})}, "lost": {2: "deleted"},
                    "graded_file": expected},
        "misnamed": {"files": {copy: source}, "lost": {}, "graded_file": copy},
        "toohigh": {"files": {f"{first}.ipynb": source}, "lost": {}, "graded_file": f"{first}.ipynb"},
        "copies": {"files": {expected: release, copy: source}, "lost": {}, "graded_file": copy,
                   "spare": expected},
        "twice": {"files": {copy: source, f"{first}/{first}-Copy2.ipynb": _with(source, {wrong_cell: wrong_code})},
                  "refused": "holds several notebooks that could be"},
        # A wrong answer, and the locked test of its exercise made to pass: graded with the original.
        "edited": {"files": {expected: _with(release_answers(source, release), {
                       wrong_cell: wrong_code,
                       wrong_cell.replace("_solution", "_test"):
                           f'print("Exercise {wrong_exercise}: checks passed")'})},
                   "lost": {wrong_exercise: "graded"}, "graded_file": expected, "edited": wrong_exercise},
        "stray": {"files": {"notes.ipynb": nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])},
                  "refused": "matches no assignment"},
        # The Jupytext script of an answered notebook, not the notebook: named, counted, not graded.
        "ivan": {"files": {f"{first}/{first}.py": jupytext.writes(source, fmt="py:percent")},
                 "refused": "is a Python script, not a notebook"},
        # Kills its kernel in exercise 2: that exercise is lost, the others are graded.
        "dies": {"files": {expected: _with(source, {f"{prefix}_ex2_solution": "import os\n\nos._exit(1)"})},
                 "lost": {2: "kernel died"}, "graded_file": expected},
        # Correct answers, and an exercise 1 that first tries to reach outside the sandbox.
        "hostile": {"files": {expected: _with(source, {f"{prefix}_ex1_solution": HOSTILE.format(
                        targets=_targets(folder, first)) + _solution(source, f"{prefix}_ex1_solution")})},
                    "lost": {}, "graded_file": expected},
        # An id with a space, selected through make with quotes.
        "mia chen": {"files": {expected: source}, "lost": {}, "graded_file": expected},
    }


#: What a hostile answer tries before answering; it prints what became of each attempt as JSON
#: (``written``, ``read``, ``connected``, ``allocated`` or the name of the error).
HOSTILE = """\
import json as _json
import socket as _socket

_targets = {targets!r}
_report = {{}}
for _path in _targets["write"]:
    try:
        with open(_path, "w") as _stream:
            _stream.write("written by a student's answer")
        _report[_path] = "written"
    except OSError as _error:
        _report[_path] = type(_error).__name__
for _path in _targets["read"]:
    try:
        with open(_path, "rb") as _stream:
            _stream.read(100)
        _report[_path] = "read"
    except OSError as _error:
        _report[_path] = type(_error).__name__
for _host, _port in _targets["connect"]:
    try:
        _socket.create_connection((_host, _port), timeout=5).close()
        _report[f"{{_host}}:{{_port}}"] = "connected"
    except OSError as _error:
        _report[f"{{_host}}:{{_port}}"] = type(_error).__name__
try:
    import numpy as _np

    _memory = _np.empty(_targets["memory"], dtype=_np.uint8)
    _report["memory"] = "allocated"
    del _memory
except MemoryError as _error:
    _report["memory"] = type(_error).__name__
print("SANDBOX-REPORT " + _json.dumps(_report))

"""
#: Bytes the hostile answer allocates: more than the default memory limit of a grading kernel
#: (4 GB), far less than a machine lends an unconfined process (the pages are never touched).
HOSTILE_MEMORY = 6 * 2**30


def _outside_address() -> str | None:
    """This machine's address on its network (not the loopback), if it has one."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a documentation address: no packet is sent
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def _targets(folder: Path, first: str) -> dict:
    """What the hostile answer tries: writes outside its folder, reads of what it must not see, connections."""
    return {"write": [str(ROOT / "pwned-by-an-answer.txt"), str(folder / "autograded" / "pwned.txt"),
                      str(Path.home() / "pwned-by-an-answer.txt")],
            "read": [str(folder / "submitted" / "reference" / first / f"{first}.ipynb"),
                     str(folder / "source" / first / f"{first}.ipynb"), str(folder / "gradebook.db"),
                     str(NOTEBOOKS / f"{first}.py")],
            "connect": [("127.0.0.1", listener().port)] + ([(listener().outside, listener().port)]
                                                           if listener().outside else []),
            "memory": HOSTILE_MEMORY}


class _Listener:
    """A TCP server on every address of this machine that counts the connections it accepts."""

    def __init__(self):
        import socket
        import threading

        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("0.0.0.0", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        self.outside = _outside_address()
        self.accepted: list = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, address = self.server.accept()
            except OSError:
                return
            self.accepted.append(address)
            connection.close()


@functools.cache
def listener() -> _Listener:
    return _Listener()


def _solution(source, cell_id: str) -> str:
    return next(cell.source for cell in source.cells if _meta(cell).get("grade_id") == cell_id)


def release_answers(source, release):
    """The student version with the reference answers written in (what a good student hands in)."""
    answers = {_meta(cell)["grade_id"]: cell.source for cell in source.cells if _meta(cell).get("solution")}
    return _with(release, answers)


def _path_without_bwrap(folder: Path) -> Path:
    """A folder holding a link to every command on PATH but bwrap: a PATH of a machine without bubblewrap."""
    for directory in reversed(os.environ["PATH"].split(os.pathsep)):
        for command in Path(directory).glob("*") if Path(directory).is_dir() else []:
            if command.name != "bwrap" and os.access(command, os.X_OK) and not command.is_dir():
                (folder / command.name).unlink(missing_ok=True)
                (folder / command.name).symlink_to(command)
    assert shutil.which("bwrap", path=str(folder)) is None
    return folder


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from conftest import in_ci

    from notebooks._tools.course.grades import score_table

    if shutil.which("bwrap") is None:
        # The class includes answers that try to escape: they are graded confined or not at all.
        if in_ci():
            pytest.fail("CI must grade the class confined, but bwrap is not installed (apt-get install bubblewrap)")
        pytest.skip("bwrap is not installed (apt-get install bubblewrap): the class is graded confined only")
    state = Course(tmp_path_factory.mktemp("course"))
    folder = state.folder
    _pipeline("assignments", *sorted({name[:2] for name in [*GRADED, SECOND]}), "--output", str(folder))
    for name in GRADED[1:]:
        source = nbformat.read(folder / "source" / name / f"{name}.ipynb", as_version=4)
        cell_id, wrong_code = WRONG_ANSWERS[name]
        for student, notebook in (("reference", source), ("wrong", _with(source, {cell_id: wrong_code}))):
            target = folder / "submitted" / student / name
            target.mkdir(parents=True)
            nbformat.write(notebook, target / f"{name}.ipynb")
        target = folder / "submitted" / "untouched" / name
        target.mkdir(parents=True)
        shutil.copy(folder / "release" / name / f"{name}.ipynb", target / f"{name}.ipynb")
    if SECOND not in GRADED:
        target = folder / "submitted" / "reference" / SECOND
        target.mkdir(parents=True)
        shutil.copy(folder / "source" / SECOND / f"{SECOND}.ipynb", target / f"{SECOND}.ipynb")
    state.students = _class(folder, state.first)
    for student, plan in state.students.items():
        for relative, notebook in plan["files"].items():
            (folder / "submitted" / student / relative).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(notebook, str):
                (folder / "submitted" / student / relative).write_text(notebook)
            else:
                nbformat.write(notebook, folder / "submitted" / student / relative)
    # The reference students of every graded notebook also save their answers' values.
    for name in GRADED:
        path = folder / "submitted" / "reference" / name / f"{name}.ipynb"
        reference = nbformat.read(path, as_version=4)
        names = [variable for cell in reference.cells if _meta(cell).get("solution") and cell.cell_type == "code"
                 for variable in _solution_names(cell)]
        reference.cells.append(nbformat.v4.new_code_cell(_DUMP.format(names=names)))
        nbformat.write(reference, path)
    # The class's notebook with a short limit per cell (other notebooks have cells that
    # take longer), confined: two students are refused, status 3.
    state.run = _streamed("autograde", state.first[:2], "--timeout", str(CLASS_TIMEOUT), "--output", str(folder),
                          status=3)
    state.class_scores = score_table(folder)
    state.hostile = _printed(folder, "hostile", state.first, "SANDBOX-REPORT")
    state.accepted = list(listener().accepted)
    # The other assignments, on a machine without bubblewrap (hidden from PATH): graded all
    # the same, unconfined, and saying so. Notebook 1's refusals are not reported, the status is 0.
    others = sorted({name for _, name in _plans(state)} - {state.first})
    state.second = _pipeline("autograde", *[name[:2] for name in others], "--output", str(folder),
                             env={**os.environ, "PATH": str(_path_without_bwrap(tmp_path_factory.mktemp("bin")))})
    state.scores = score_table(folder)
    state.grades = (folder / "grades.csv").read_text()
    state.totals = (folder / "grades-totals.csv").read_text()
    state.answers = {name: _printed(folder, "reference", name, "ANSWERS") for name in GRADED}
    # The misnamed student's folder goes; a run for the two refused students drops its rows and exits 1.
    shutil.rmtree(folder / "submitted" / "misnamed")
    state.rerun = _pipeline("autograde", "--student", "twice", "--student", "stray", "--output", str(folder), status=3)
    state.rescores = score_table(folder)
    return state


def test_student_versions_hide_solutions_and_hidden_tests(course):
    for name in GRADED:
        release = nbformat.read(course.folder / "release" / name / f"{name}.ipynb", as_version=4)
        solutions = [cell for cell in release.cells if _meta(cell).get("solution")]
        tests = [cell for cell in release.cells if _meta(cell).get("grade") and not _meta(cell).get("solution")]
        assert len(tests) == 3 and len(solutions) >= 3
        for cell in solutions:
            stub = "raise NotImplementedError()" if cell.cell_type == "code" else "YOUR ANSWER HERE"
            assert stub in cell.source and "BEGIN SOLUTION" not in cell.source
        assert all("assert" in cell.source and "HIDDEN" not in cell.source for cell in tests)
        source = nbformat.read(course.folder / "source" / name / f"{name}.ipynb", as_version=4)
        assert all("### BEGIN HIDDEN TESTS" in cell.source for cell in source.cells
                   if _meta(cell).get("grade") and cell.cell_type == "code")
        parameters = [cell for cell in release.cells if "parameters" in cell.metadata.get("tags", [])]
        assert re.search(r"^quick = True", parameters[0].source, re.MULTILINE)
        assert parameters[0].metadata["nbgrader"]["locked"]
        assert release.cells[2].metadata["nbgrader"]["locked"] and "GBAI_FIGURES_DIR" in release.cells[2].source


def _mine(scores, student, kind="auto"):
    return scores[(scores["student"] == student) & (scores["kind"] == kind)]


def _items(name: str) -> list[dict]:
    """The graded items of an assignment in the order of the grade table: exercise, then auto before manual."""
    items = []
    for number, exercise in _exercises(jupytext.read(NOTEBOOKS / f"{name}.py")).items():
        for role, kind in (("test", "auto"), ("answer", "manual")):
            if role in exercise["cells"]:
                meta = _meta(exercise["cells"][role])
                items.append({"exercise": number, "cell": meta["grade_id"], "kind": kind,
                              "points": float(meta["points"])})
    return items


def _expected_rows(student: str, name: str, plan: dict) -> list[dict]:
    """The rows of grades.csv one graded submission should have."""
    rows = []
    for item in _items(name):
        row = {"student": student, "assignment": name, **item}
        if item["kind"] == "manual":
            untouched = student == "untouched"
            row.update(score=0.0 if untouched else None, status="no answer" if untouched else "to grade")
        elif item["exercise"] in plan["lost"]:
            row.update(score=0.0, status=plan["lost"][item["exercise"]])
        else:
            row.update(score=item["points"], status="graded")
        rows.append(row)
    return rows


def _plans(course) -> dict[tuple[str, str], dict]:
    """What every submission of the full run should get: the class on notebook 1, three students on the others."""
    plans = {(student, course.first): plan for student, plan in course.students.items()}
    for name in GRADED[1:]:
        every = {number: "graded" for number in _exercises(jupytext.read(NOTEBOOKS / f"{name}.py"))}
        wrong = int(_ID.match(WRONG_ANSWERS[name][0]).group(1))
        for student, lost in (("reference", {}), ("wrong", {wrong: "graded"}), ("untouched", every)):
            plans[(student, name)] = {"lost": lost, "graded_file": f"{name}/{name}.ipynb"}
    if SECOND not in GRADED:
        plans[("reference", SECOND)] = {"lost": {}, "graded_file": f"{SECOND}/{SECOND}.ipynb"}
    return plans


def _line(student: str, name: str, plan: dict) -> str:
    """The console line of one graded notebook."""
    rows = _expected_rows(student, name, plan)
    auto = [row for row in rows if row["kind"] == "auto"]
    manual = [row for row in rows if row["kind"] == "manual"]
    line = (f"{student:<16} {name:<28} tests {sum(row['score'] for row in auto):g} / "
            f"{sum(row['points'] for row in auto):g}")
    if manual:
        waiting = sum(row["status"] == "to grade" for row in manual)
        line += (f", written {sum(row['score'] or 0 for row in manual):g} / "
                 f"{sum(row['points'] for row in manual):g}" + (f" ({waiting} to grade)" if waiting else ""))
    for kind in ("timeout", "kernel died"):
        stopped = [number for number, status in plan["lost"].items() if status == kind]
        if stopped:
            line += f"; {kind} in exercise {', '.join(map(str, stopped))}"
    deleted = [row["cell"] for row in rows if row["status"] == "deleted"]
    if deleted:
        line += f"; deleted {', '.join(deleted)}"
    return line


_STRAY = ("autograde: 1 file(s) of these students match no assignment: listed in grades.csv, reported by a run "
          "without an assignment selection")


def test_every_line_of_the_class_run_on_the_console(course):
    first, plans = course.first, _plans(course)
    graded = sorted(student for (student, name), plan in plans.items() if name == first and "refused" not in plan)
    from notebooks._tools.course.sandbox import confinement

    stdout = course.run.stdout.splitlines()
    assert stdout[0] == confinement().describe() and stdout[0].startswith("answers run confined (bubblewrap, ")
    assert stdout[1] == f"grading {len(graded)} notebook(s), each cell stopped after {CLASS_TIMEOUT} s"
    assert stdout[2:-2] == [_line(student, first, plans[(student, first)]) for student in graded]
    assert re.fullmatch(rf"graded {len(graded)} submission\(s\) in [\d.]+ s; grades per item in .*grades\.csv, "
                        rf"per student in .*grades-totals\.csv", stdout[-2]), stdout[-2]
    # The stray file could be anyone's notebook 1: counted, but not an error of this run.
    assert stdout[-1] == _STRAY
    # Each notebook's line came while the others were still being graded.
    assert all(course.run.running[:len(graded)]), course.run.running
    expected = f"{first}/{first}.ipynb"
    stderr = course.run.stderr.splitlines()
    # Known before grading starts: the spare original, the script, the two answered copies.
    assert stderr[:3] == [
        f"autograde: copies/{expected}: ignored: {first}-Copy1.ipynb is graded as copies/{expected}",
        f"autograde: ivan/{first}/{first}.py: is a Python script, not a notebook: ask for the .ipynb file (in "
        f"JupyterLab, right-click the notebook, Download); not graded",
        f"autograde: twice/{first}: holds several notebooks that could be {first} ({first}-Copy1.ipynb, "
        f"{first}-Copy2.ipynb): keep one, named {expected}; not graded"]
    prefix = f"nb{first[:2]}"
    edited = course.students["edited"]["edited"]
    assert stderr[3:] == [
        f"autograde: copies/{first}/{first}-Copy1.ipynb: graded as copies/{expected} (name the file {first}.ipynb)",
        f"autograde: deleter/{expected}: cell {prefix}_ex2_test (exercise 2, automatic test, "
        f"{_items(first)[[item['cell'] for item in _items(first)].index(f'{prefix}_ex2_test')]['points']:g} points) "
        f"was deleted from the notebook: 0 points",
        f"autograde: dies/{expected}: exercise 2, your answer: the kernel died while running this cell (it crashed "
        f"or exited: exit status 1); a new kernel ran the cells before it again and grading went on "
        f"(cell {prefix}_ex2_solution)",
        f"autograde: edited/{expected}: exercise {edited}, automatic test: edited, graded with the original",
        f"autograde: misnamed/{first}/{first}-Copy1.ipynb: graded as misnamed/{expected} "
        f"(name the file {first}.ipynb)",
        f"autograde: sleeper/{expected}: exercise 2, your answer: timed out: stopped after {CLASS_TIMEOUT} s, the time "
        f"limit per cell (cell {prefix}_ex2_solution); the cells after it ran without its results",
        f"autograde: toohigh/{first}.ipynb: graded as toohigh/{expected} (name the file {first}.ipynb)",
        "autograde: 2 notebook(s) not graded (see above)"]


def test_every_row_of_the_class_in_grades_csv(course):
    import pandas as pd

    first, plans = course.first, _plans(course)
    table = pd.read_csv(io.StringIO(course.grades), dtype=str, keep_default_na=False)
    expected = []
    for (student, name), plan in sorted(plans.items()):
        if "refused" in plan:
            continue
        expected += [{**row, "exercise": str(row["exercise"]), "score": "" if row["score"] is None else
                      f"{row['score']:g}", "points": f"{row['points']:g}"}
                     for row in _expected_rows(student, name, plan)]
    graded = table[table["status"] != "not graded"]
    assert list(table.columns) == ["student", "assignment", "exercise", "cell", "kind", "score", "points", "status",
                                   "reason"]
    columns = ["student", "assignment", "exercise", "cell", "kind", "score", "points", "status"]
    assert graded[columns].to_dict("records") == [{key: row[key] for key in columns} for row in expected]
    reasons = graded.set_index(["student", "cell"])["reason"]
    prefix = f"nb{first[:2]}"
    assert reasons[("sleeper", f"{prefix}_ex2_test")] == (f"exercise 2, your answer: timed out: stopped after "
                                                          f"{CLASS_TIMEOUT} s, the time limit per cell")
    assert reasons[("deleter", f"{prefix}_ex2_test")] == ("exercise 2, automatic test: deleted from the notebook "
                                                          "handed in, not run: 0 points")
    assert reasons[("dies", f"{prefix}_ex2_test")] == (
        "exercise 2, your answer: the kernel died while running this cell (it crashed or exited: exit status 1); a "
        "new kernel ran the cells before it again and grading went on")
    assert (reasons.drop([("sleeper", f"{prefix}_ex2_test"), ("deleter", f"{prefix}_ex2_test"),
                          ("dies", f"{prefix}_ex2_test")]) == "").all()
    # The three refused students have one row each: not graded, with the reason.
    points = sum(item["points"] for item in _items(first))
    refused = table[table["status"] == "not graded"].to_dict("records")
    assert refused == [
        {"student": "ivan", "assignment": first, "exercise": "", "cell": "", "kind": "", "score": "",
         "points": f"{points:g}", "status": "not graded",
         "reason": f"ivan/{first}/{first}.py is a Python script, not a notebook: ask for the .ipynb file (in "
                   f"JupyterLab, right-click the notebook, Download)"},
        {"student": "stray", "assignment": "", "exercise": "", "cell": "", "kind": "", "score": "", "points": "",
         "status": "not graded",
         "reason": "stray/notes.ipynb matches no assignment (neither its exercise cells nor its name tell which)"},
        {"student": "twice", "assignment": first, "exercise": "", "cell": "", "kind": "", "score": "",
         "points": f"{points:g}", "status": "not graded",
         "reason": f"twice/{first} holds several notebooks that could be {first} ({first}-Copy1.ipynb, "
                   f"{first}-Copy2.ipynb): keep one, named {first}/{first}.ipynb"}]


def test_every_total_of_the_class(course):
    import pandas as pd

    plans = _plans(course)
    totals = pd.read_csv(io.StringIO(course.totals)).set_index("student")
    students = sorted({student for student, _ in plans})
    assert list(totals.index) == students
    # The course's points are those of every assignment in the gradebook, handed in or not.
    names = {name for _, name in plans}
    course_auto = sum(item["points"] for name in names for item in _items(name) if item["kind"] == "auto")
    course_manual = sum(item["points"] for name in names for item in _items(name) if item["kind"] == "manual")
    for student in students:
        mine = {name: plan for (who, name), plan in plans.items() if who == student}
        rows = [row for name, plan in mine.items() if "refused" not in plan
                for row in _expected_rows(student, name, plan)]
        total = totals.loc[student]
        for name in totals.columns[:totals.columns.get_loc("submitted")]:
            scores = [row["score"] or 0 for row in rows if row["assignment"] == name]
            assert (pd.isna(total[name]) if not scores else total[name] == sum(scores)), (student, name)
        refused = [plan["refused"] for plan in mine.values() if "refused" in plan]
        assert total["submitted"] == len([name for name, plan in mine.items() if "matches no" not in
                                          plan.get("refused", "")]), student
        assert total["auto"] == sum(row["score"] for row in rows if row["kind"] == "auto"), student
        assert total["manual"] == sum(row["score"] or 0 for row in rows if row["kind"] == "manual"), student
        assert total["to_grade"] == sum(row["status"] == "to grade" for row in rows), student
        assert total["score"] == total["auto"] + total["manual"], student
        assert (total["auto_points"], total["manual_points"], total["points"]) == (
            course_auto, course_manual, course_auto + course_manual)
        if refused:
            assert isinstance(total["not_graded"], str) and refused[0] in total["not_graded"], student
        else:
            assert pd.isna(total["not_graded"]), student


def test_an_assignment_selection_grades_reports_and_exits_for_it_alone(course):
    # Notebook 1 has a refused submission; grading the other assignments leaves it out.
    from notebooks._tools.course.base import CELL_TIMEOUT

    plans = _plans(course)
    graded = sorted((student, name) for student, name in plans if name != course.first)
    assert course.second.stderr == ""
    lines = course.second.stdout.splitlines()
    # Without bubblewrap (hidden from PATH) grading goes on, and says so first.
    assert lines[0] == ("answers run UNCONFINED (bwrap not found on PATH): they can read and write whatever you "
                        "can; install bubblewrap to confine them (see the teaching guide)")
    assert lines[1] == f"grading {len(graded)} notebook(s), each cell stopped after {CELL_TIMEOUT} s"
    assert lines[2:-2] == [_line(student, name, plans[(student, name)]) for student, name in graded]
    assert lines[-2].startswith(f"graded {len(graded)} submission(s) in ") and lines[-1] == _STRAY
    class_rows = course.scores[course.scores["assignment"] == course.first].reset_index(drop=True)
    before = course.class_scores[course.class_scores["assignment"] == course.first].reset_index(drop=True)
    assert class_rows.equals(before), "grading other assignments changed notebook 1's grades"


def test_a_student_selection_reports_its_refused_notebooks_and_drops_removed_rows(course):
    from notebooks._tools.course.base import CELL_TIMEOUT

    first = course.first
    lines = course.rerun.stdout.splitlines()
    assert lines[0].startswith("answers run confined (bubblewrap, ")
    assert lines[1:3] == [f"removed the grades of misnamed/{first}: no longer in {course.folder / 'submitted'}",
                          f"grading 0 notebook(s), each cell stopped after {CELL_TIMEOUT} s"]
    assert len(lines) == 4 and lines[3].startswith("graded 0 submission(s) in ")
    assert course.rerun.stderr.splitlines() == [
        "autograde: stray/notes.ipynb: matches no assignment (neither its exercise cells nor its name tell which); "
        "not graded",
        f"autograde: twice/{first}: holds several notebooks that could be {first} ({first}-Copy1.ipynb, "
        f"{first}-Copy2.ipynb): keep one, named {first}/{first}.ipynb; not graded",
        "autograde: 2 notebook(s) not graded (see above)"]
    assert "misnamed" in course.grades and "misnamed" not in (course.folder / "grades.csv").read_text()
    assert "misnamed" not in (course.folder / "grades-totals.csv").read_text()
    assert not (course.folder / "autograded" / "misnamed").exists()
    kept = course.scores[course.scores["student"] != "misnamed"].reset_index(drop=True)
    assert kept.equals(course.rescores), "a selective run changed the grades of other submissions"


def test_grading_runs_quietly(course):
    # Only the lines above: no SQLAlchemy or kernel transport warnings.
    for output in (course.run.stderr, course.run.stdout, course.second.stdout, course.rerun.stderr):
        assert "Warning" not in output and "WARNING" not in output and "without encryption" not in output


def test_answers_run_confined_and_reach_nothing_outside(course):
    targets = _targets(course.folder, course.first)
    report = course.hostile
    assert set(report) == {*targets["write"], *targets["read"], *(f"{host}:{port}" for host, port in
                                                                   targets["connect"]), "memory"}, report
    # A write outside the notebook's folder fails or lands in an empty folder that vanishes.
    for path in targets["write"]:
        assert not Path(path).exists(), f"an answer wrote {path}"
    # Another student's notebook, the instructor's version, the gradebook, the repository's solutions.
    for path in targets["read"]:
        assert Path(path).exists() and report[path] == "FileNotFoundError", (path, report[path])
    # No connection leaves the sandbox, to this machine or elsewhere; the listener saw nobody.
    for host, port in targets["connect"]:
        assert report[f"{host}:{port}"] != "connected", (host, report)
    assert course.accepted == []
    # More memory than the limit: the allocation fails in the cell.
    assert report["memory"] == "MemoryError"
    # And still, the answer after the attempts is graded as any other.
    rows = course.class_scores[course.class_scores["student"] == "hostile"]
    assert (rows[rows["kind"] == "auto"]["score"] == rows[rows["kind"] == "auto"]["points"]).all()


def test_a_dying_kernel_costs_the_exercise_it_died_in(course):
    rows = course.class_scores[(course.class_scores["student"] == "dies") & (course.class_scores["kind"] == "auto")]
    lost = rows[rows["score"] < rows["points"]]
    assert list(lost["exercise"]) == [2] and list(lost["status"]) == ["kernel died"]
    assert (rows[rows["exercise"] != 2]["status"] == "graded").all() and len(rows) == 3


def test_reference_solutions_get_full_marks_and_await_the_written_grades(course):
    mine = _mine(course.scores, "reference")
    assert set(mine["assignment"]) == {*GRADED, SECOND} and len(mine) == 3 * len({*GRADED, SECOND})
    assert (mine["score"] == mine["points"]).all(), mine[mine["score"] != mine["points"]]
    written = _mine(course.scores, "reference", "manual")
    assert (written["status"] == "to grade").all() and written["score"].isna().all()


def test_one_wrong_answer_loses_exactly_its_points(course):
    reference = _mine(course.scores, "reference").set_index(["assignment", "cell"])["score"]
    wrong = _mine(course.scores, "wrong").set_index(["assignment", "cell"])["score"]
    for name in GRADED:
        broken = WRONG_ANSWERS[name][0].replace("_solution", "_test")
        lost = reference[name] - wrong[name]
        assert lost[broken] == reference[name][broken] > 0, name
        assert (lost.drop(broken) == 0).all(), f"{name}: other exercises changed score: {lost[lost != 0]}"


def test_the_totals_export_is_rewritten_alike_from_the_gradebook(course):
    before = (course.folder / "grades-totals.csv").read_text(), (course.folder / "grades.csv").read_text()
    _pipeline("export", "--output", str(course.folder))
    assert ((course.folder / "grades-totals.csv").read_text(), (course.folder / "grades.csv").read_text()) == before


def test_a_time_limit_that_is_not_a_positive_number_stops_with_one_line(course):
    completed = _pipeline("autograde", "--timeout", "0", "--output", str(course.folder), status=2)
    assert completed.stderr.count("\n") == 1 and "at least 1" in completed.stderr and completed.stdout == ""


def test_a_memory_limit_that_is_not_a_positive_number_stops_with_one_line(course):
    completed = _pipeline("autograde", "--memory", "-1", "--output", str(course.folder), status=2)
    assert completed.stderr == "pipeline: error: the memory limit must be a positive number of GB, got -1.0\n"
    assert completed.stdout == ""


def test_make_passes_the_time_and_memory_limits_only_when_given():
    if shutil.which("make") is None:
        pytest.skip("needs make")
    for option, variable, value in (("--timeout", "TIMEOUT", "45"), ("--memory", "MEMORY", "8")):
        for arguments, expected in (([], None), ([f"{variable}={value}"], f"{option} {value}")):
            command = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(ROOT), "autograde", "STAMP=",
                                      *arguments], capture_output=True, text=True, check=True).stdout
            assert "-m notebooks._tools autograde" in command
            assert expected in command if expected else option not in command


def _numbers(value) -> list[float]:
    if isinstance(value, list):
        return [number for item in value for number in _numbers(item)]
    return [value] if isinstance(value, float) else []


def test_no_visible_check_holds_the_value_of_an_answer(course):
    # Every literal of a visible check is compared with the reference answers of its
    # exercise, as the reference run computed them.
    for name in GRADED:
        release = nbformat.read(course.folder / "release" / name / f"{name}.ipynb", as_version=4)
        script = jupytext.read(NOTEBOOKS / f"{name}.py")
        for number, exercise in _exercises(script).items():
            values = [course.answers[name].get(variable)
                      for variable in _solution_names(exercise["cells"]["solution"])]
            test_id = _meta(exercise["cells"]["test"])["grade_id"]
            visible = next(cell.source for cell in release.cells if _meta(cell).get("grade_id") == test_id)
            for node in ast.walk(ast.parse(visible)):
                if isinstance(node, ast.Assert) and node.msg is not None:
                    node.msg = ast.Constant(None)
            constants = [node.value for node in ast.walk(ast.parse(visible)) if isinstance(node, ast.Constant)
                         and isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool)
                         and not _stated(node.value, exercise["prompt"])]
            for constant in constants:
                for value in values:
                    if isinstance(constant, str):
                        assert constant != value, (name, number, constant)
                    else:
                        # Equal up to rounding: 1e-9 relative.
                        assert all(abs(constant - item) > 1e-9 * max(1.0, abs(item)) for item in _numbers(value)), (
                            name, number, constant)


def test_answers_worked_out_by_hand_are_not_printed_by_the_notebook(course):
    for name in GRADED:
        outputs = "\n".join("".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
                            for cell in nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4).cells
                            for output in cell.get("outputs", []))
        for number, exercise in _exercises(jupytext.read(NOTEBOOKS / f"{name}.py")).items():
            if "by hand" not in exercise["prompt"]:
                continue
            for variable in _solution_names(exercise["cells"]["solution"]):
                value = course.answers[name].get(variable)
                if isinstance(value, float) and abs(value) >= 10:
                    shown = {f"{value:.0f}", f"{value:.1f}", f"{value:.2f}", f"{value:.3g}"}
                    # As a number of its own: 210 is not shown by "210.5" or "1,210".
                    printed = [text for text in shown if re.search(rf"(?<![\d.,]){re.escape(text)}(?!\.?\d|,\d)",
                                                                     outputs)]
                    assert not printed, (name, number, variable, printed)


def test_grading_selections_that_match_nothing_stop_with_one_line(course):
    for arguments in (["--student", "nobody"], ["99"]):
        completed = _pipeline("autograde", *arguments, "--output", str(course.folder), status=2)
        assert completed.stderr.count("\n") == 1 and completed.stdout == ""


@pytest.fixture(scope="module")
def feedback(course):
    _pipeline("feedback", "--output", str(course.folder))
    return course.folder / "feedback"


def test_feedback_pages_read_offline_with_exercise_numbers_and_failure_messages(course, feedback):
    name = course.first
    page = (feedback / "wrong" / name / f"{name}.html").read_text()
    assert "cdnjs" not in page and "cdn.jsdelivr" not in page
    # nbconvert passes the page through an HTML parser, which may spell the flag defer="".
    assert re.search(r'<script defer(="")? src="mathjax/tex-chtml-full.js">', page)
    assert (feedback / "wrong" / name / "mathjax" / "tex-chtml-full.js").stat().st_size > 100_000
    assert (feedback / "wrong" / name / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
    assert "max-width: 100%" in page
    broken = WRONG_ANSWERS[name][0].replace("_solution", "_test")
    number = _ID.match(broken).group(1)
    entry = re.search(rf'<li><a href="#{broken}">Exercise {number}, automatic test</a>: 0\.0 / (\d+\.\d+)'
                      rf'\s*<span class="failure">AssertionError: ([^<]+)</span>', page)
    assert entry, "the contents do not name the failed exercise with its message"
    assert "AssertionError: </" not in page and len(entry.group(2).strip()) > 10


def test_feedback_math_is_typeset_by_a_browser_without_network(course, feedback):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium to render the page (apt-get install chromium)")
    page = feedback / "reference" / course.first / f"{course.first}.html"
    completed = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                                "--disable-background-networking", "--disable-component-update", "--no-first-run",
                                "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.count("<mjx-container") >= 3, "MathJax typeset no formula"
    assert "<mjx-merror" not in completed.stdout, "MathJax failed on a formula"


def _summary(page: str) -> dict:
    """The top of a feedback page: the score in the title, the notices, and each item of the contents."""
    title = re.search(r"<h4>[^:]+: ([\d.]+) / ([\d.]+) points</h4>", page)
    notices = re.search(r'<div[^>]* id="notices"[^>]*>.*?</div>', page, re.DOTALL)
    items = re.findall(r'<li><a href="#([^"]+)">([^<]+)</a>: ([^<]*?)\s*(?:<span class="failure">([^<]*)</span>)?</li>',
                       page)
    return {"score": (float(title.group(1)), float(title.group(2))),
            "notices": [html.unescape(text) for text in re.findall(r"<li>([^<]*)</li>", notices.group(0))]
            if notices else [],
            "items": {cell: (label, score, html.unescape(failure)) for cell, label, score, failure in items}}


def test_every_feedback_summary_of_the_class(course, feedback):
    first, prefix = course.first, f"nb{course.first[:2]}"
    for student, plan in course.students.items():
        page = feedback / student / first / f"{first}.html"
        if student == "misnamed":  # its folder was removed since
            assert not page.exists(), student
            continue
        if "refused" in plan:  # a page saying why, and what to do
            if plan["refused"].startswith("matches no"):
                page = feedback / student / "not-graded" / "not-graded.html"
            text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
            assert plan["refused"] in text and "was not graded" in text and "What to do:" in text, student
            continue
        summary = _summary(page.read_text())
        rows = _expected_rows(student, first, plan)
        assert summary["score"] == (sum(row["score"] or 0 for row in rows), sum(row["points"] for row in rows))
        # What went wrong beyond a wrong answer comes first, before the contents.
        notices = {"sleeper": [f"Exercise 2, your answer: timed out: stopped after {CLASS_TIMEOUT} s, the time "
                               f"limit per cell"],
                   "deleter": ["Exercise 2, automatic test: deleted from the notebook handed in, not run: 0 points"],
                   "edited": [f"Exercise {plan.get('edited')}, automatic test: edited, graded with the original"],
                   "dies": ["Exercise 2, your answer: the kernel died while running this cell (it crashed or exited: "
                            "exit status 1); a new kernel ran the cells before it again and grading went on"]}
        assert summary["notices"] == notices.get(student, []), student
        assert list(summary["items"]) == [row["cell"] for row in rows], student
        for row in rows:
            label, score, failure = summary["items"][row["cell"]]
            kind = "automatic test" if row["kind"] == "auto" else "written answer"
            assert label == f"Exercise {row['exercise']}, {kind}", (student, label)
            if row["status"] == "to grade":
                assert score == f"not graded yet ({row['points']:.1f} points)" and not failure, (student, row)
                continue
            assert score == f"{row['score']:.1f} / {row['points']:.1f}", (student, row["cell"], score)
            if row["kind"] == "manual" or row["score"] == row["points"]:
                assert not failure, (student, row["cell"], failure)
            elif row["status"] == "timeout":
                assert failure.startswith(f"exercise 2, your answer: timed out: stopped after {CLASS_TIMEOUT} s") \
                    and "NameError" in failure, failure
            elif row["status"] == "kernel died":
                assert failure.startswith("exercise 2, your answer: the kernel died while running this cell") \
                    and "NameError" in failure, failure
            elif row["status"] == "deleted":
                assert failure == "deleted from the notebook you handed in, so it did not run", failure
            elif student in ("untouched", "syntax"):
                assert failure.startswith("NameError: name "), (student, failure)
            else:
                assert re.fullmatch(r"AssertionError: .{10,}", failure), (student, failure)
    # The deleted check is shown where it was, as a stand-in that says so.
    page = (feedback / "deleter" / first / f"{first}.html").read_text()
    assert page.count(f'<a name="{prefix}_ex2_test"></a>') == 1
    assert "This check was deleted from the notebook you handed in, so it did not run: 0 points." in page


def test_the_timeout_is_the_first_thing_a_browser_shows(course, feedback, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium to render the page (apt-get install chromium)")
    page = feedback / "sleeper" / course.first / f"{course.first}.html"
    completed = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                                "--disable-background-networking", "--disable-component-update", "--no-first-run",
                                "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    text = re.sub(r"<[^>]+>", " ", completed.stdout.split("<body", 1)[1])
    text = " ".join(html.unescape(text).split())
    assert text.index("timed out: stopped after") < text.index("Exercise 1, automatic test")


def test_a_released_notebook_writes_its_figures_next_to_itself(course, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    name = "01_problem_setup"
    if name not in GRADED:
        pytest.skip("notebook 1 is not among the graded ones")
    figures = ROOT / "figures"
    before = {path.name: path.stat().st_mtime_ns for path in figures.glob("*")}
    monkeypatch.delenv("GBAI_FIGURES_DIR", raising=False)
    monkeypatch.setenv("GBAI_CACHE_DIR", str(tmp_path / "cache"))
    student = tmp_path / "student"
    student.mkdir()
    shutil.copy(course.folder / "release" / name / f"{name}.ipynb", student)
    notebook = nbformat.read(student / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(student)}}).execute()
    assert (student / "figures" / "setup_table1.png").stat().st_size > 1000
    assert {path.name: path.stat().st_mtime_ns for path in figures.glob("*")} == before


@pytest.mark.parametrize("module, named", [("myst_nb", "myst-nb"), ("mathjax", "django-static-mathjax"),
                                           ("nbgrader", "nbgrader")])
def test_a_missing_tool_stops_with_a_message_naming_it(monkeypatch, capsys, tmp_path, module, named):
    import importlib.util
    import runpy

    from notebooks._tools import __main__ as tools

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    command = "assignments" if module == "nbgrader" else "book"
    assert tools.main([command, "--output", str(tmp_path / "out")]) == 2
    message = capsys.readouterr().err
    assert named in message and "pip install -e '.[" in message and message.count("\n") == 1
    # Run as make runs it, the command line is the module __main__: the error a tool raises must
    # still be the one it catches (a tool importing the command line back would get a second copy).
    monkeypatch.setattr(sys, "argv", ["notebooks._tools", command, "--output", str(tmp_path / "out")])
    monkeypatch.delitem(sys.modules, "notebooks._tools.__main__")  # imported above; python -m runs it afresh
    with pytest.raises(SystemExit) as stopped:
        runpy.run_module("notebooks._tools", run_name="__main__", alter_sys=True)
    assert stopped.value.code == 2 and capsys.readouterr().err == message
    assert not (tmp_path / "out").exists()


# --- written answers, graded as formgrader does ---------------------------------------------
# Last in the file: grading an answer rewrites the tables the tests above read.


@pytest.fixture(scope="module")
def formgrader(course, tmp_path_factory):
    """nbgrader's formgrader, served from the course folder as make course-lab serves it."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "gbai-grading-token"
    log = tmp_path_factory.mktemp("formgrader") / "server.log"
    environment = {**os.environ, "JUPYTER_PREFER_ENV_PATH": "1",
                   "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    with open(log, "w") as stream:
        server = subprocess.Popen([str(Path(sys.executable).parent / "jupyter"), "server", "--no-browser",
                                   "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
                                   f"--ServerApp.root_dir={course.folder}", "--allow-root"],
                                  cwd=course.folder, stdout=stream, stderr=subprocess.STDOUT, env=environment)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            if server.poll() is not None:
                pytest.fail(f"jupyter server stopped:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"jupyter server did not answer:\n{log.read_text()[-3000:]}")

        def put(path: str, body: dict) -> dict:
            request = urllib.request.Request(f"{base}{path}", data=json.dumps(body).encode(), method="PUT",
                                             headers={"Authorization": f"token {token}",
                                                      "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())

        def get(path: str):
            request = urllib.request.Request(f"{base}{path}", headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())

        put.get = get
        yield put
    finally:
        server.terminate()
        server.wait(timeout=30)


def _records(folder: Path, cell: str, name: str, student: str) -> tuple[dict, dict]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade(cell, name, name, student).to_dict()
        comment = gradebook.find_comment(cell, name, name, student).to_dict()
    return grade, comment


def _make(*arguments: str, folder: Path, status: int = 0) -> subprocess.CompletedProcess:
    completed = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *arguments, f"VENV={sys.prefix}",
                                "STAMP=", f"COURSE={folder}"], capture_output=True, text=True)
    assert completed.returncode == status, completed.stderr[-3000:]
    return completed


def test_a_written_answer_graded_by_make_is_stored_as_formgrader_stores_it(course, formgrader):
    import pandas as pd

    if shutil.which("make") is None:
        pytest.skip("needs make")
    first, folder = course.first, course.folder
    item = next(item for item in _items(first) if item["kind"] == "manual")
    answer, points = item["cell"], item["points"]
    # Two students handed in the same answer: one is graded in formgrader, one with make.
    for student in ("reference", "copies"):
        assert _records(folder, answer, first, student)[0]["needs_manual_grade"], student
    listing = _make("grade-answer", folder=folder).stdout
    model = next(cell.source for cell in nbformat.read(folder / "source" / first / f"{first}.ipynb", 4).cells
                 if _meta(cell).get("grade_id") == answer)
    assert f"reference {first} {answer} (exercise {item['exercise']}, {points:g} points):" in listing
    assert f"    {model.strip().splitlines()[0]}" in listing
    waiting = int(re.search(r"^(\d+) written answer\(s\) to grade", listing, re.MULTILINE).group(1))
    comment = 'Names both gaps; "why" is answered.'
    grade, remark = _records(folder, answer, first, "copies")
    formgrader(f"/formgrader/api/grade/{grade['id']}", {"manual_score": points, "extra_credit": None})
    formgrader(f"/formgrader/api/comment/{remark['id']}", {"manual_comment": comment})
    done = _make("grade-answer", "STUDENT=reference", f"ANSWER={answer}", f"SCORE={points:g}", f"COMMENT={comment}",
                 folder=folder).stdout
    assert done.splitlines()[-1] == (f"reference {first} {answer}: {points:g} / {points:g}; {waiting - 2} written "
                                     f"answer(s) still to grade; tables rewritten in {folder}")
    by_formgrader, by_make = (_records(folder, answer, first, student) for student in ("copies", "reference"))
    differs = {"id", "student"}
    for ours, theirs in zip(by_make, by_formgrader):
        assert {key: value for key, value in ours.items() if key not in differs} == {
            key: value for key, value in theirs.items() if key not in differs}
    assert not by_make[0]["needs_manual_grade"] and by_make[0]["manual_score"] == points
    assert by_make[1]["manual_comment"] == comment
    # The tables count it: graded, and one fewer waiting.
    table = pd.read_csv(folder / "grades.csv").set_index(["student", "cell"])
    assert table.loc[("reference", answer), "status"] == "graded"
    assert table.loc[("reference", answer), "score"] == points
    totals = pd.read_csv(folder / "grades-totals.csv").set_index("student")
    assert totals.loc["reference", "manual"] == points
    # Bad input is refused with one line, the gradebook unchanged.
    for arguments in ([f"SCORE={points + 1:g}"], ["SCORE=many"], ["SCORE=1", "STUDENT=nobody"]):
        student = [] if any(arg.startswith("STUDENT=") for arg in arguments) else ["STUDENT=untouched"]
        failed = _make("grade-answer", f"ANSWER={answer}", *student, *arguments, folder=folder, status=2)
        assert failed.stderr.count("pipeline: error:") == 1, failed.stderr
    assert _records(folder, answer, first, "untouched")[0]["manual_score"] is None


def test_formgrader_names_each_student_and_totals_as_the_tables(course, formgrader):
    import pandas as pd

    students = {student["id"]: student for student in formgrader.get("/formgrader/api/students")}
    totals = pd.read_csv(course.folder / "grades-totals.csv").set_index("student")
    assert set(students) == set(totals.index)
    for student, total in totals.iterrows():
        shown = students[student]
        assert (shown["last_name"], shown["first_name"]) == (student, ""), shown
        assert (shown["score"], shown["max_score"]) == (total["score"], total["points"]), (student, shown)


def test_make_selects_an_id_with_a_space_and_tells_refusals_from_a_bad_selection(course):
    if shutil.which("make") is None:
        pytest.skip("needs make")
    folder = course.folder
    # Quoted inside STUDENT, "mia chen" is one student.
    done = _make("feedback", "STUDENT='mia chen' reference", f"ASSIGNMENT={course.first}", folder=folder)
    assert f"\n2 feedback page(s) under {folder / 'feedback'} (" in done.stdout, done.stdout
    # Only refused notebooks: grading ran, make succeeds (the script's status is 3); a selection
    # that matches nothing stops make (status 2) with one line.
    refused = _make("autograde", "STUDENT=twice ivan", folder=folder)
    assert refused.stderr.splitlines()[-1] == "autograde: 2 notebook(s) not graded (see above)"
    wrong = _make("autograde", "STUDENT=mia", folder=folder, status=2)
    assert wrong.stderr.count("pipeline: error: no submission of mia in ") == 1


def test_make_test_grading_leaves_out_exactly_the_tests_that_build_the_book():
    import inspect

    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    words = re.split(r"\s+or\s+", re.search(r"^BOOK_TESTS := (.*)$", text, re.MULTILINE).group(1).strip())
    tests = {name: function for name, function in globals().items() if name.startswith("test_")}
    building = {name for name, function in tests.items() if "book" in inspect.signature(function).parameters}
    left_out = {name for name in tests if any(word.strip() in name for word in words)}
    assert building and left_out == building
