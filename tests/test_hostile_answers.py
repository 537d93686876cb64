"""Answers that try to score without answering, graded as the teacher grades them.

A small class hands in notebook 1: one student per attack on the hidden tests
(replaced builtins, replaced numpy functions, always-equal answers, an input
transformer that blanks later cells, a redefined example, a blanked display), and
honest students. Graded by ``python -m notebooks._tools autograde``, each attack
scores 0 on the exercises it attacks and the honest students get full marks. The
same class graded with the checker switched off (the test cells run in the
student's kernel) shows that each attack wins there, so the test can fail. Also: the
encoder and decoder of the data the kernel hands over, and which names of every
notebook's test cells come from the trusted run.
"""

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

import gbai

pytest.importorskip("nbgrader", reason="the classroom extra is not installed: pip install -e '.[classroom]'")

from conftest import as_ordinary_user, remove_tree, require_confinement  # noqa: E402

from notebooks._tools.course import checker  # noqa: E402
from notebooks._tools.course.release import instructor_notebook  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
NAME = "01_problem_setup"

_BUILTINS = """\
import builtins


class _Same(frozenset):
    def __eq__(self, other):
        return True

    __hash__ = frozenset.__hash__


_set = builtins.set
builtins.set = lambda *values: _Same()
"""
#: The next answer puts set back (gbai's own code needs it) and shadows abs in the notebook's namespace, where
#: the test cell finds it first (replaced in builtins, it would break gbai's own arithmetic as well).
_ABS = "builtins.set = _set\nabs = lambda value: 0.0\n"
_NUMPY = """\
import numpy

numpy.isclose = numpy.allclose = lambda *args, **kwargs: True
numpy.testing.assert_allclose = lambda *args, **kwargs: None
numpy.flatnonzero = lambda mask: numpy.arange(1)  # every feasible set is (0,)
"""
_EQUAL = """\
class _Number(float):
    def __sub__(self, other):
        return 0.0

    def __ge__(self, other):
        return True


class _Instance(gbai.Instance):
    answer = 2
    is_feasible = True
    feasible_set = ()
    risky_set = (0, 1, 2)
"""

#: student -> (solution cells replaced, exercises that must score 0, whether the attack wins them in the kernel).
ATTACKS = {
    "builtins": ({"nb01_ex1_solution": _BUILTINS + "feasible_045 = (0,)\nanswer_045 = gbai.INFEASIBLE",
                  "nb01_ex2_solution": _ABS + "h_025 = 1000.0"}, {1, 2}, True),
    "numpy": ({"nb01_ex1_solution": _NUMPY + "feasible_045 = (0,)\nanswer_045 = gbai.INFEASIBLE"}, {1}, True),
    "equal": ({"nb01_ex2_solution": _EQUAL + "h_025 = _Number(1.0)",
               "nb01_ex3_solution": "my_instance = _Instance([[0.9, 0.9], [0.5, 0.5], [0.1, 0.1]], 0.3)"},
              {2, 3}, True),
    "transformer": ({"nb01_ex1_solution": "get_ipython().input_transformers_cleanup.append(lambda lines: [])"},
                    {1, 2, 3}, True),
    "fabricated": ({"nb01_ex1_solution": "example = gbai.Instance([[0.5, 0.5], [0.2, 1.0], [0.4, 0.4]], 0.3)\n"
                                         "feasible_045 = (0,)\nanswer_045 = 0"}, {1}, True),
    # Right answers, but the display that hands them over is switched off: nothing reaches the checker.
    "blanked": ({"nb01_ex1_solution": None}, {1, 2, 3}, False),
}
HONEST = ("reference", "honest")


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _hand_in(course: Path) -> None:
    source = nbformat.read(course / "source" / NAME / f"{NAME}.ipynb", as_version=4)
    solutions = {_meta(cell)["grade_id"]: cell.source for cell in source.cells if _meta(cell).get("solution")}
    release = nbformat.read(course / "release" / NAME / f"{NAME}.ipynb", as_version=4)
    blank = "get_ipython().display_pub.publish = lambda *args, **kwargs: None\n" + solutions["nb01_ex1_solution"]
    students = {"reference": (source, {}), "honest": (release, {})}
    students.update({student: (source, changes) for student, (changes, _, _) in ATTACKS.items()})
    for student, (notebook, changes) in students.items():
        copy = nbformat.from_dict(notebook)
        for cell in copy.cells:
            grade_id = _meta(cell).get("grade_id")
            if _meta(cell).get("solution") and notebook is release:
                cell.source = solutions[grade_id]
            if grade_id in changes:
                cell.source = blank if changes[grade_id] is None else changes[grade_id]
        folder = course / "submitted" / student / NAME
        folder.mkdir(parents=True)
        nbformat.write(copy, folder / f"{NAME}.ipynb")


#: What runs the grading: the teacher's command (a variant as another user may join).
_SWITCHED_OFF = ("import sys\nfrom notebooks._tools.course import checker\n"
                 "checker.checks_for = lambda execute, resources: None  # the test cells run in the kernel\n"
                 "from notebooks._tools.__main__ import main\nsys.exit(main(sys.argv[1:]))")


def run_command(course: Path, checked: bool = True, wrap=list, env: dict | None = None) -> subprocess.CompletedProcess:
    """``autograde`` of notebook 1 through the command line (``checked=False``: with the checker switched off),
    ``wrap`` prefixing the command (to run it as another user)."""
    start = ["-m", "notebooks._tools"] if checked else ["-c", _SWITCHED_OFF]
    completed = subprocess.run(wrap([sys.executable, *start, "autograde", NAME[:2], "--timeout", "60", "--output",
                                     str(course)]), cwd=ROOT, capture_output=True, text=True, env=env)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    return completed


def run_as_ordinary_user(course: Path, checked: bool = True) -> subprocess.CompletedProcess:
    """The same command as an ordinary user (uid 65534 when the tests run as root): the course is made its own."""
    uid = 65534
    home = course.parent / "home"
    home.mkdir(exist_ok=True)
    if os.getuid() == 0:
        for path in [course.parent, *course.parent.rglob("*")]:
            os.lchown(path, uid, uid)
    environment = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    return run_command(course, checked, wrap=as_ordinary_user, env=environment)


RUNNERS = {"command": run_command, "ordinary user": run_as_ordinary_user}


def _scores(course: Path) -> dict[str, dict[int, float]]:
    from notebooks._tools.course.grades import score_table

    scores = score_table(course)
    rows = scores[scores["kind"] == "auto"]
    return {student: {int(row.exercise): float(row.score) for row in part.itertuples()}
            for student, part in rows.groupby("student")}


@pytest.fixture(scope="module", params=sorted(RUNNERS))
def hostile(request, tmp_path_factory):
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed (apt-get install bubblewrap): hostile answers are graded confined only")
    require_confinement()
    # Not under pytest's folder, which only its owner may enter: the ordinary user grades this course too.
    base = Path(tempfile.mkdtemp(prefix="gbai-answers-"))
    os.chmod(base, 0o755)
    request.addfinalizer(lambda: remove_tree(base))
    course = base / "course"
    subprocess.run([sys.executable, "-m", "notebooks._tools", "assignments", NAME[:2], "--output", str(course)],
                   cwd=ROOT, check=True, capture_output=True)
    _hand_in(course)
    points = {int(_meta(cell)["grade_id"].split("_ex")[1][0]): float(_meta(cell)["points"])
              for cell in nbformat.read(course / "source" / NAME / f"{NAME}.ipynb", as_version=4).cells
              if checker.is_test(cell)}
    RUNNERS[request.param](course)
    checked = _scores(course)
    graded = {student: nbformat.read(course / "autograded" / student / NAME / f"{NAME}.ipynb", as_version=4)
              for student in checked}
    RUNNERS[request.param](course, checked=False)
    return {"points": points, "checked": checked, "unchecked": _scores(course), "graded": graded}


def test_honest_students_get_full_marks(hostile):
    for student in HONEST:
        assert hostile["checked"][student] == hostile["points"], student


@pytest.mark.parametrize("student", sorted(ATTACKS))
def test_an_attack_scores_nothing_on_what_it_attacks(hostile, student):
    _, attacked, _ = ATTACKS[student]
    expected = {number: 0.0 if number in attacked else worth for number, worth in hostile["points"].items()}
    assert hostile["checked"][student] == expected


@pytest.mark.parametrize("student", sorted(student for student, (_, _, wins) in ATTACKS.items() if wins))
def test_each_attack_wins_when_the_tests_run_in_the_kernel(hostile, student):
    _, attacked, _ = ATTACKS[student]
    scores = hostile["unchecked"][student]
    assert {number: scores[number] for number in attacked} == {number: hostile["points"][number] for number in attacked}


def test_the_feedback_names_what_failed(hostile):
    def errors(student):
        return [(output["ename"], output["evalue"]) for cell in hostile["graded"][student].cells
                if checker.is_test(cell) for output in cell.outputs if output["output_type"] == "error"]

    assert [(ename, evalue.split(" is not plain data (a ")[0]) for ename, evalue in errors("equal")] == [
        ("NotPlainData", "`h_025`"), ("NotPlainData", "`my_instance`")]
    for student in ("transformer", "blanked"):
        assert [ename for ename, _ in errors(student)] == ["NoAnswersHandedIn"] * 3
        assert all("did not hand its answers to the checker" in evalue for _, evalue in errors(student))
    assert errors("fabricated") == [("AssertionError", "feasible_045 is not the feasible set at threshold 0.45: "
                                                       "compare every attribute of each arm with it")]
    passed = [cell.outputs for cell in hostile["graded"]["reference"].cells if checker.is_test(cell)]
    assert [[output["text"] for output in outputs] for outputs in passed] == [
        [f"Exercise {number}: checks passed\n"] for number in (1, 2, 3)]


# --- the data the kernel hands over --------------------------------------------------------


def _handed(monkeypatch, **values) -> dict:
    """``values`` through :func:`checker.export` and :func:`checker.decode`, as between a kernel and the checker."""
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, raw=False: shown.append(data))
    exec(f"{checker._export_source()}\n_gbai_export({sorted(values)!r})", dict(values))
    return checker.decode(shown[0][checker.MIME])


def test_plain_data_keeps_its_types_and_dtypes(monkeypatch):
    trace = gbai.StepEngine(gbai.table1_example(), gbai.CSSLUCB(), delta=0.1, seed=3).trace([])[0]
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [0.5, np.nan]}).set_index(["a", "b"])
    values = {"i": 3, "f": float("nan"), "s": "text", "b": True, "n": None, "t": (1, [2.5, {3}], frozenset({"a"})),
              "d": {"k": np.int64(4)}, "a": np.arange(6, dtype=np.int32).reshape(2, 3), "g": np.float32(1.5),
              "instance": gbai.paper_instance("exp1", 0.31), "experiment": gbai.EXPERIMENTS["exp2"],
              "trace": trace, "frame": frame, "series": pd.Series([1.0, 2.0], name="s"), "module": np}
    handed = _handed(monkeypatch, **values)
    assert checker.MIME in checker._export_source()
    for name in ("i", "s", "b", "n", "t", "d"):
        assert handed[name] == values[name] and type(handed[name]) is type(values[name]), name
    assert np.isnan(handed["f"])
    assert handed["a"].dtype == np.int32 and np.array_equal(handed["a"], values["a"])
    assert type(handed["g"]) is np.float32 and isinstance(handed["d"]["k"], np.integer)
    assert np.array_equal(handed["instance"].means, values["instance"].means)
    assert (handed["instance"].threshold, handed["instance"].label) == (0.3, "exp1 x=0.31")
    assert handed["experiment"] is gbai.EXPERIMENTS["exp2"] and handed["module"] is np
    for name in ("trace", "frame", "series"):
        assert handed[name].equals(values[name]) and (handed[name].index == values[name].index).all(), name
    assert list(handed["trace"].dtypes) == list(trace.dtypes)


def test_what_is_not_plain_data_is_named_and_never_rebuilt(monkeypatch):
    class Always(int):
        def __eq__(self, other):
            return True

    class Text(str):
        pass

    class Table(gbai.Instance):
        answer = 2

    handed = _handed(monkeypatch, always=Always(3), text=Text("x"), objects=np.array([object()]),
                     function=lambda: 1, kind=Always, table=Table([[0.5]], 0.3), inner=(1, [Always(2)]),
                     frame=pd.DataFrame({"f": [lambda: 1]}))
    assert all(isinstance(value, checker.Opaque) for value in handed.values()), handed
    assert "Always" in handed["always"].what and "object" in handed["objects"].what


@pytest.mark.parametrize("text", [
    '{"x": {"eval": "1"}}', '{"x": {"array": ["|O", [1], "AAAAAAAAAAA="]}}', '{"x": {"array": ["<i8", [2], "AAAA"]}}',
    '{"x": {"module": "os"}}', '{"x": {"tuple": 1}}', '{"x": {"instance": [1, 2]}}', '[1]', 'not json',
    '{"x": {"scalar": ["<f8", [2], "AAAAAAAAAAAAAAAAAAAAAA=="]}}', '{"x": {"list": [1], "set": [2]}}'])
def test_the_decoder_refuses_what_the_export_does_not_write(text):
    with pytest.raises(ValueError):
        checker.decode(text)


# --- which values come from where -----------------------------------------------------------


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_set_up_values_come_from_the_trusted_run_and_answers_from_the_kernel(script):
    notebook = instructor_notebook(script)
    sources = checker.name_sources(notebook)
    assert len(sources) == 3
    solutions = {name for cell in notebook.cells if _meta(cell).get("solution") and cell.cell_type == "code"
                 for name in checker._bound(ast.parse(cell.source))}
    for grade_id, (trusted, student) in sources.items():
        cell = next(cell for cell in notebook.cells if _meta(cell).get("grade_id") == grade_id)
        assert sorted(trusted + student) == checker.free_names(cell.source)
        # Every answer the solution cells set is read from the kernel; nothing a solution sets is trusted.
        assert not set(trusted) & solutions, grade_id
        assert set(student) <= solutions | {"robin", "robin_first_pulls"}, grade_id


def test_the_split_of_notebook_1():
    sources = checker.name_sources(instructor_notebook(ROOT / "notebooks" / f"{NAME}.py"))
    assert sources == {"nb01_ex1_test": (["example"], ["answer_045", "feasible_045"]),
                       "nb01_ex2_test": (["example"], ["h_025"]), "nb01_ex3_test": ([], ["my_instance"])}

