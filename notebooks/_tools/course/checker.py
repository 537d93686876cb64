"""Checks the student's code cannot reach: the hidden tests run in a fresh checker process, on plain data.

A test cell run in the student's kernel sees whatever the student's code left there:
replaced builtins or numpy functions, answers that are always-equal objects, or an
input transformer that blanks every later cell. So grading never runs a test cell's
code in that kernel. It runs :func:`export` there instead, which hands the values of
the cell's free names to grading as *plain data* (numbers, strings, containers of
them, NumPy arrays and scalars of non-object dtype, pandas tables, and a few gbai
types rebuilt through their constructors), in a display output of type :data:`MIME`.
A checker process started by grading (``python -s``, confined as the kernels are)
decodes that data strictly (:func:`decode`: JSON with tagged objects, never pickle),
runs the whole test cell, hidden tests included, in a fresh namespace, and its output
and error become the cell's outputs, which nbgrader scores as usual.

Values the notebook sets up before an exercise (:func:`name_sources`) come from a
trusted run instead: the instructor version, run once per assignment by grading and
cached under ``.grading/trusted/``, so an answer cannot redefine the example it is
checked against. That run also records what each test cell prints when it passes;
a test cell that printed anything else, or whose student side handed over no data, fails.

This module runs on the grading side and, as source, in the checker process
(:func:`_serve`): it imports only the standard library at the top.
"""

from __future__ import annotations

import ast
import base64
import builtins
import json

__all__ = ["MIME", "Checks", "decode", "export", "name_sources"]

#: The display type that carries a test cell's values from the kernel to grading.
MIME = "text/x-gbai-answers"
#: Modules every test cell may use without the notebook handing them over: the checker imports them itself.
CHECKER_MODULES = {"np": "numpy", "pd": "pandas", "gbai": "gbai", "math": "math"}
#: Modules a notebook may hand over by name (they are imported again in the checker).
_MODULES = ("gbai", "numpy", "pandas", "math")
#: NumPy dtype kinds of plain data: booleans, integers, floats, complex numbers, strings (no objects, no records).
_KINDS = "biufcUS"
_NOT_PLAIN = "NotPlainData"
_NO_DATA = "NoAnswersHandedIn"


def export(names: list[str]) -> None:
    """Display the values of ``names`` of the caller's namespace as plain data (:data:`MIME`); run in the kernel.

    Self-contained (grading sends its source to the kernel). A value that is not plain
    data is sent as ``{"opaque": type name}`` and fails its test in the checker; a name
    the notebook never set is sent as ``{"missing": ...}`` and stays undefined there.
    """
    import base64
    import json
    import sys
    import types

    import numpy
    from IPython.display import display

    namespace = sys._getframe(1).f_globals
    gbai = sys.modules.get("gbai")
    pandas = sys.modules.get("pandas")

    def array(value):
        if value.dtype.kind not in "biufcUS" or value.dtype.fields is not None:
            raise TypeError(f"an array of dtype {value.dtype}")
        data = numpy.ascontiguousarray(value).tobytes()
        return [value.dtype.str, list(value.shape), base64.b64encode(data).decode("ascii")]

    def column(values):
        if type(values.dtype) is numpy.dtype and values.dtype.kind in "biufcUS":
            return {"array": array(values.to_numpy())}
        return {"values": [str(values.dtype), [encode(item) for item in values.tolist()]]}

    def index(value):
        kind = type(value)
        if kind is pandas.RangeIndex:
            return {"range": [value.start, value.stop, value.step, encode(value.name)]}
        if kind is pandas.MultiIndex:
            return {"multi": [encode(list(value.names)),
                              [column(value.get_level_values(level)) for level in range(value.nlevels)]]}
        if kind is pandas.Index:
            return {"index": [encode(value.name), column(value)]}
        raise TypeError(f"a {kind.__name__}")

    def encode(value):
        kind = type(value)
        if value is None or kind in (bool, int, float, str):
            return value
        if kind in (tuple, list, set, frozenset):
            return {kind.__name__: [encode(item) for item in value]}
        if kind is dict:
            return {"dict": [[encode(key), encode(item)] for key, item in value.items()]}
        if kind is numpy.ndarray:
            return {"array": array(value)}
        if isinstance(value, numpy.generic) and kind is value.dtype.type:
            return {"scalar": array(numpy.asarray(value))}
        if kind is types.ModuleType:
            return {"module": value.__name__}
        if gbai is not None and kind is gbai.Instance:
            return {"instance": [encode(value.means), encode(value.threshold), encode(value.label)]}
        if gbai is not None and kind is gbai.RunResult:
            return {"run": {field: encode(getattr(value, field))
                            for field in ("answer", "samples", "rounds", "counts", "stopped", "algorithm")}}
        if gbai is not None and kind is type(gbai.EXPERIMENTS["example"]):
            return {"experiment": value.name}
        if pandas is not None and kind is pandas.DataFrame:
            return {"frame": [index(value.columns), index(value.index),
                              [column(value.iloc[:, at]) for at in range(value.shape[1])]]}
        if pandas is not None and kind is pandas.Series:
            return {"series": [encode(value.name), index(value.index), column(value)]}
        if pandas is not None and kind in (pandas.Index, pandas.RangeIndex, pandas.MultiIndex):
            return {"pindex": index(value)}
        raise TypeError(f"a {kind.__module__}.{kind.__qualname__}")

    def safely(name):
        if name not in namespace:
            return {"missing": name}
        try:
            return encode(namespace[name])
        except Exception as error:  # any failure names the value, never stops the export
            return {"opaque": str(error) if isinstance(error, TypeError) else f"a value that fails: {error!r}"}

    display({"text/x-gbai-answers": json.dumps({name: safely(name) for name in names})}, raw=True)


class _Invalid(ValueError):
    """Data handed over that is not of the form :func:`export` writes."""


def decode(text: str) -> dict:
    """The values :func:`export` encoded in ``text``: name -> value, or an :class:`Opaque` or :class:`Missing`.

    Strict: anything not of the exported form raises ``ValueError``; arrays are rebuilt
    from bytes with a dtype of :data:`_KINDS` only, gbai objects through their constructors.
    """
    import numpy
    import pandas

    import gbai

    def array(item):
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], list)
                and all(type(size) is int and size >= 0 for size in item[1]) and isinstance(item[2], str)):
            raise _Invalid("a malformed array")
        dtype = numpy.dtype(item[0])
        if dtype.kind not in _KINDS or dtype.fields is not None:
            raise _Invalid(f"an array of dtype {dtype}")
        data = base64.b64decode(item[2], validate=True)
        if len(data) != dtype.itemsize * int(numpy.prod(item[1], dtype=numpy.int64)):
            raise _Invalid("an array whose bytes do not match its shape")
        return numpy.frombuffer(data, dtype=dtype).reshape(item[1]).copy()

    def column(item):
        tag, body = single(item)
        if tag == "array":
            return array(body)
        if tag == "values" and isinstance(body, list) and len(body) == 2 and isinstance(body[1], list):
            return pandas.array([value(element) for element in body[1]], dtype=pandas.api.types.pandas_dtype(body[0]))
        raise _Invalid(f"a malformed column ({tag})")

    def index(item):
        tag, body = single(item)
        if tag == "range" and isinstance(body, list) and len(body) == 4 and all(type(x) is int for x in body[:3]):
            return pandas.RangeIndex(*body[:3], name=value(body[3]))
        if tag == "multi" and isinstance(body, list) and len(body) == 2 and isinstance(body[1], list):
            return pandas.MultiIndex.from_arrays([column(level) for level in body[1]], names=value(body[0]))
        if tag == "index" and isinstance(body, list) and len(body) == 2:
            return pandas.Index(column(body[1]), name=value(body[0]))
        raise _Invalid(f"a malformed index ({tag})")

    def single(item):
        if not (isinstance(item, dict) and len(item) == 1):
            raise _Invalid("a malformed value")
        return next(iter(item.items()))

    def value(item):
        if item is None or type(item) in (bool, int, float, str):
            return item
        tag, body = single(item)
        if tag in ("tuple", "list", "set", "frozenset") and isinstance(body, list):
            return getattr(builtins, tag)(value(element) for element in body)
        if tag == "dict" and isinstance(body, list) and all(isinstance(pair, list) and len(pair) == 2
                                                            for pair in body):
            return {value(key): value(element) for key, element in body}
        if tag == "array":
            return array(body)
        if tag == "scalar":
            scalar = array(body)
            if scalar.shape != ():
                raise _Invalid("a malformed NumPy scalar")
            return scalar[()]
        if tag == "module" and isinstance(body, str) and body.split(".")[0] in _MODULES:
            import importlib

            return importlib.import_module(body)
        if tag == "instance" and isinstance(body, list) and len(body) == 3:
            return gbai.Instance(value(body[0]), value(body[1]), label=value(body[2]))
        if tag == "run" and isinstance(body, dict):
            return gbai.RunResult(**{key: value(element) for key, element in body.items()})
        if tag == "experiment" and body in gbai.EXPERIMENTS:
            return gbai.EXPERIMENTS[body]
        if tag == "frame" and isinstance(body, list) and len(body) == 3 and isinstance(body[2], list):
            columns, rows = index(body[0]), index(body[1])
            frame = pandas.DataFrame({at: pandas.Series(column(data), index=rows, copy=False)
                                      for at, data in enumerate(body[2])}, index=rows)
            frame.columns = columns
            return frame
        if tag == "series" and isinstance(body, list) and len(body) == 3:
            return pandas.Series(column(body[2]), index=index(body[1]), name=value(body[0]))
        if tag == "pindex":
            return index(body)
        if tag == "opaque" and isinstance(body, str):
            return Opaque(body)
        if tag == "missing" and isinstance(body, str):
            return Missing()
        raise _Invalid(f"a malformed value ({tag})")

    try:
        names = json.loads(text)
    except (TypeError, ValueError) as error:
        raise _Invalid(f"not JSON: {error}") from None
    if not isinstance(names, dict):
        raise _Invalid("not a table of names")
    try:
        return {name: value(item) for name, item in names.items()}
    except (TypeError, ValueError, OverflowError, RecursionError) as error:  # a constructor refusing what it got
        raise _Invalid(str(error)) from None


class Opaque:
    """A value the kernel could not hand over as plain data; ``what`` says what it was."""

    def __init__(self, what: str):
        self.what = what


class Missing:
    """A name the kernel's notebook never set: it stays undefined in the checker."""


# --- which values come from where ------------------------------------------------------


def _bound(tree: ast.AST) -> set[str]:
    """Names a cell binds at its top level (assignments, imports, definitions, loops), not inside functions."""
    names: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            stack += node.decorator_list
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        stack += ast.iter_child_nodes(node)
    return names


def free_names(source: str) -> list[str]:
    """The names a test cell reads and does not set itself, but builtins and :data:`CHECKER_MODULES`."""
    tree = ast.parse(source)
    stored = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    stored |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    stored |= _bound(tree)
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return sorted(loaded - stored - set(dir(builtins)) - set(CHECKER_MODULES))


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def is_test(cell) -> bool:
    """An autograded test cell: code, graded, not a solution."""
    return cell.get("cell_type") == "code" and bool(_meta(cell).get("grade")) and not _meta(cell).get("solution")


def name_sources(notebook) -> dict[str, tuple[list[str], list[str]]]:
    """For each test cell of the instructor version ``notebook``, by grade id: (trusted names, student names).

    A free name is trusted when the last cell binding it before the test is not a
    solution and comes before the exercise's first solution cell (the notebook's set-up
    of the exercise); otherwise (bound in an answer, after it, or nowhere) the
    student's kernel hands it over.
    """
    sources = {}
    first_solution = None
    binders: dict[str, int] = {}
    for at, cell in enumerate(notebook.cells):
        if cell.get("cell_type") != "code":
            continue
        if is_test(cell):
            trusted, student = [], []
            for name in free_names(cell["source"]):
                last = binders.get(name)
                setup = (last is not None and not _meta(notebook.cells[last]).get("solution")
                         and (first_solution is None or last < first_solution))
                (trusted if setup else student).append(name)
            sources[_meta(cell)["grade_id"]] = (trusted, student)
            first_solution = None
            continue
        if _meta(cell).get("solution") and first_solution is None:
            first_solution = at
        try:
            tree = ast.parse(cell["source"])
        except SyntaxError:
            continue
        for name in _bound(tree):
            binders[name] = at
    return sources


# --- the checker process -----------------------------------------------------------------


def _error(ename: str, evalue: str, traceback: list[str] | None = None) -> dict:
    return {"ename": ename, "evalue": evalue, "traceback": traceback or [f"{ename}: {evalue}"]}


def _check(request: dict) -> dict:
    """Run one test cell on the values of ``request``; its printed text and error (None when it passed)."""
    import contextlib
    import io
    import linecache
    import math
    import traceback

    import numpy
    import pandas

    import gbai

    try:
        trusted = decode(request["trusted"])
    except _Invalid as error:
        return {"stdout": "", "error": _error("CheckerError", f"the trusted values do not decode: {error}")}
    try:
        student = None if request["student"] is None else decode(request["student"])
        why = "its test cell's code did not run as grading sent it"
    except _Invalid as error:
        student, why = None, f"what it handed over is malformed ({error})"
    if student is None:
        return {"stdout": "", "error": _error(_NO_DATA, f"this notebook did not hand its answers to the checker: "
                                                         f"{why}; a notebook that changes how later cells run "
                                                         f"(an input transformer, a replaced display) scores 0 here")}
    namespace = {"__name__": "__main__", "__builtins__": builtins, "np": numpy, "pd": pandas, "gbai": gbai,
                 "math": math}
    for names, values in ((request["trusted_names"], trusted), (request["student_names"], student)):
        for name in names:
            value = values.get(name, Missing())
            if isinstance(value, Opaque):
                return {"stdout": "", "error": _error(_NOT_PLAIN, (
                    f"`{name}` is not plain data ({value.what}): grading checks numbers, strings, tuples, lists, "
                    f"sets, dicts, NumPy arrays, pandas tables and gbai instances, not other objects"))}
            if not isinstance(value, Missing):
                namespace[name] = value
    source = request["source"]
    linecache.cache["<test cell>"] = (len(source), None, source.splitlines(keepends=True), "<test cell>")
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, "<test cell>", "exec"), namespace)
    except Exception as error:
        frames = traceback.extract_tb(error.__traceback__)[1:]  # from the test cell on, not this function
        lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames),
                 *traceback.format_exception_only(type(error), error)]
        return {"stdout": printed.getvalue(), "error": _error(type(error).__name__, str(error), lines)}
    return {"stdout": printed.getvalue(), "error": None}


def _serve() -> None:
    """The checker process: one JSON request a line on stdin, one reply a line on the original stdout."""
    import os
    import sys

    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever else writes to the standard output cannot garble the replies
    for line in sys.stdin:
        replies.write(json.dumps(_check(json.loads(line))) + "\n")
        replies.flush()


# --- grading's side ----------------------------------------------------------------------


class Checks:
    """The test cells of one graded notebook: the export in its kernel, the tests in a checker process.

    ``trusted`` holds, by grade id, the trusted run's ``values`` and ``stdout``; None
    makes this the trusted run itself, which records them (:attr:`recorded`).
    """

    def __init__(self, execute, sources: dict, trusted: dict | None):
        self.execute, self.sources, self.trusted = execute, sources, trusted
        self.recorded: dict[str, dict] = {}
        self._process = None

    def run(self, cell, resources, index, execute_cell):
        """Run test ``cell``: its export in the kernel (``execute_cell``), its code in the checker."""
        from nbformat import NotebookNode

        grade_id = _meta(cell).get("grade_id")
        if grade_id not in self.sources:
            error = _error("CheckerError", f"the test cell {grade_id} is not in the instructor version")
            cell.outputs = [NotebookNode(output_type="error", **error)]
            return cell, resources
        trusted_names, student_names = self.sources[grade_id]
        names = student_names if self.trusted is not None else trusted_names + student_names
        source = cell.source
        cell.source = f"{_export_source()}\n_gbai_export({names!r})\ndel _gbai_export"
        try:
            cell, resources = execute_cell(cell, resources, index)
        finally:
            cell.source = source
        handed = [output["data"][MIME] for output in cell.outputs
                  if output.get("output_type") == "display_data" and MIME in output.get("data", {})]
        payload = handed[0] if len(handed) == 1 and isinstance(handed[0], str) else None
        if self.trusted is None:
            request = {"trusted": payload or "{}", "student": payload, "trusted_names": [],
                       "student_names": names, "source": source}
        else:
            request = {"trusted": self.trusted[grade_id]["values"], "student": payload,
                       "trusted_names": trusted_names, "student_names": student_names, "source": source}
        reply = self._ask(request)
        if self.trusted is None:
            self.recorded[grade_id] = {"values": payload, **reply}
        elif reply["error"] is None and reply["stdout"] != self.trusted[grade_id]["stdout"]:
            reply["error"] = _error("UnexpectedOutput", f"the checks printed {reply['stdout']!r} where the "
                                                        f"instructor version printed "
                                                        f"{self.trusted[grade_id]['stdout']!r}")
        outputs = [NotebookNode(output_type="stream", name="stdout", text=reply["stdout"])] if reply["stdout"] else []
        if reply["error"] is not None:
            outputs.append(NotebookNode(output_type="error", **reply["error"]))
        cell.outputs = outputs
        return cell, resources

    def _ask(self, request: dict) -> dict:
        """The checker's reply, within the time limit per cell (a checker that overruns is stopped)."""
        import select

        if self._process is None:
            self._process = _start_checker(self.execute.confine)
        process = self._process
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], self.execute.timeout)
            line = process.stdout.readline() if ready else None
        except OSError:
            line = ""
        if line:
            return json.loads(line)
        self.close()
        if line is None:
            return {"stdout": "", "error": dict(self.execute.error_on_timeout)}
        return {"stdout": "", "error": _error("CheckerDied", "the checks of this cell ended the checker process "
                                                             "(it ran out of memory or crashed)")}

    def close(self) -> None:
        """Stop the checker process, if one runs."""
        import os
        import signal
        import subprocess

        process, self._process = self._process, None
        if process is None:
            return
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stdout.close()


def _export_source() -> str:
    import inspect

    return inspect.getsource(export).replace("def export(", "def _gbai_export(", 1)


def _start_checker(confine):
    """A checker process (``python -s``), its command passed through ``confine`` (the grading kernels' sandbox)."""
    import subprocess
    import sys
    from pathlib import Path

    # The environment's own python, through resolved folders: the sandbox shows the environment, not a link to it.
    python = str(Path(sys.prefix).resolve() / "bin" / Path(sys.executable).name)
    # No user site-packages; gbai is found as grading finds it (PYTHONPATH, which a sandbox sets to gbai's folder).
    command = [python, "-s", "-c", Path(__file__).read_text() + "\n_serve()\n"]
    return subprocess.Popen(confine(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)


def checks_for(execute, resources: dict) -> Checks | None:
    """The checks of the notebook ``execute`` grades (None: no instructor version to check against).

    The trusted values come from ``.grading/trusted/`` in the course, written by a run
    of the instructor version (in a kernel like the students') when the instructor
    version, gbai or this module changed.
    """
    import hashlib
    from pathlib import Path

    import nbformat

    import gbai

    if getattr(execute, "trusted_sources", None) is not None:
        return Checks(execute, execute.trusted_sources, None)
    names = (resources or {}).get("nbgrader", {})
    root = execute.config.CourseDirectory.get("root")
    if not root or "assignment" not in names:
        return None
    course, assignment, notebook = Path(root), names["assignment"], names["notebook"]
    instructor = course / "source" / assignment / f"{notebook}.ipynb"
    if not instructor.exists():
        return None
    text = instructor.read_bytes()
    sources = name_sources(nbformat.reads(text.decode(), as_version=4))
    key = hashlib.sha256(text + gbai.__version__.encode() + Path(__file__).read_bytes()).hexdigest()
    cache = course / ".grading" / "trusted" / assignment / f"{notebook}.json"
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored.get("key") == key:
            return Checks(execute, sources, stored["cells"])
    runner = type(execute)(config=execute.config)
    runner.trusted_sources = sources
    folder = course / ".grading" / "trusted" / assignment / "run"
    folder.mkdir(parents=True, exist_ok=True)
    runner.preprocess(nbformat.reads(text.decode(), as_version=4), {"metadata": {"path": str(folder)}})
    recorded = runner.checks.recorded
    for grade_id in sources:
        reply = recorded.get(grade_id) or {"error": {"evalue": "it did not run"}}
        if reply["error"] is not None:
            raise RuntimeError(f"the instructor version of {assignment} fails its own test cell {grade_id} in "
                               f"the checker: {reply['error']['evalue']}")
    cache.write_text(json.dumps({"key": key, "cells": recorded}))
    return Checks(execute, sources, recorded)
