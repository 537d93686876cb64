"""The layout: layers import only the layers below them, and a new algorithm is one module and one entry.

The paper layer is plain NumPy (no numba, nothing above it); the compiled engine
and the limits build on it; beyond-the-paper algorithms and the authors' as-run
variants on those; the registry, the runs and the tables on everything; nothing in
the library imports the tooling (``gbai.tools``). The notebook tools
(``notebooks/_tools``, a package) point down too: the command line on top, the shared
``common`` at the bottom, no cycle between them, five floors at most.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import gbai
from gbai.algorithms import REFERENCES

PACKAGE = Path(gbai.__file__).parent
TOOLS = Path(__file__).resolve().parents[1] / "notebooks" / "_tools"
LIMITS = "limits" if (PACKAGE / "limits").is_dir() else "lower_bounds"

#: For each part of the package, the parts of ``gbai`` it may import: every import points down.
ALLOWED = {
    "version": set(),
    "paper": {"paper"},
    "fast": {"paper", "fast"},
    LIMITS: {"paper", LIMITS},
    "beyond": {"paper", "fast", LIMITS, "beyond"},
    "asrun": {"paper", "fast", "asrun"},
    "algorithms": {"paper", "fast", "beyond", "asrun"},
    "cache": {"version"},
    "simulation": {"paper", "algorithms", "cache"},
    "experiments": {"paper", "asrun", LIMITS, "cache", "simulation"},
    "plotting": {"paper"},  # the paper's experiments and their panel titles
    "studies": {"version", "paper", "fast", LIMITS, "beyond", "asrun", "algorithms", "cache", "simulation",
                "experiments", "plotting", "studies"},  # version: the output type of a recorded result
}


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _is_module(name: str) -> bool:
    return (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name / "__init__.py").is_file()


def _imports(path: Path) -> set[tuple[str, str]]:
    """``(top-level module, gbai part or "")`` for every import of the file."""
    package = ".".join(("gbai",) + path.relative_to(PACKAGE).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {(alias.name.split(".")[0], "") for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                parts = target.split(".")
                if len(parts) > 1:
                    found.add(("gbai", parts[1]))
                else:  # ``from . import name``: a module of the package, or a name of its front page
                    found |= {("gbai", alias.name if _is_module(alias.name) else "__init__") for alias in node.names}
            else:
                found.add(((node.module or "").split(".")[0], ""))
    return found


def _library_files():
    return [path for path in sorted(PACKAGE.rglob("*.py")) if _part(path) not in ("tools", "__main__")]


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(part):
    files = [path for path in _library_files() if _part(path) == part]
    assert files, part
    for path in files:
        used = {name for top, name in _imports(path) if top == "gbai"}
        allowed = ALLOWED[part] | {_part(path)}
        assert used <= allowed, f"{path.relative_to(PACKAGE)} imports {used - allowed}"


def test_every_part_of_the_library_has_a_place_in_the_layers():
    parts = {_part(path) for path in _library_files()} - {"__init__"}
    assert parts <= set(ALLOWED), parts - set(ALLOWED)


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def _module_imports(path: Path) -> set[str]:
    """The ``gbai`` modules (not names) that a file imports anywhere in its body, function bodies included."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            targets = [f"{target}.{alias.name}" for alias in node.names] + [target]
        for target in targets:
            while target.startswith("gbai") and not (
                    (PACKAGE.parent / target.replace(".", "/")).with_suffix(".py").is_file()
                    or (PACKAGE.parent / target.replace(".", "/") / "__init__.py").is_file()):
                target = target.rpartition(".")[0]  # a name imported from a module: the module
            if target.startswith("gbai") and target != name:
                found.add(target)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (module -> modules it imports), or ``[]``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        stack.append(module)
        for other in sorted(graph.get(module, ())):
            if state.get(other) == 1:
                return stack[stack.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[module] = 2
        stack.pop()
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_module_of_the_library_imports_one_that_imports_it_back():
    """The package's front page imports everything, and so does the tooling; nothing imports either back."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        # ``import gbai.x`` runs the package's front page first; the front page is the top, not part of a cycle.
        graph[name] = {module for module in _module_imports(path) if module != "gbai"} if name != "gbai" else set()
    assert not _cycle(graph), " -> ".join(_cycle(graph))
    front_page = [str(path.relative_to(PACKAGE)) for path in _library_files()
                  if path.name != "__init__.py" and "gbai" in _module_imports(path)]
    assert not front_page, f"these import the package's front page: {front_page}"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def _tool_name(path: Path, tools: Path) -> str:
    return path.relative_to(tools).with_suffix("").as_posix()


def _tool_imports(path: Path, tools: Path) -> tuple[set[str], set[str]]:
    """The tools (named by their path under ``tools``: ``common``, ``course/grading``) that a file imports
    anywhere in its body, function bodies included, and the names it imports absolutely (``json``, ``nbgrader``).

    The tools are the package ``notebooks._tools``: a tool imports another relatively (``from ..common import x``,
    ``from .course import grading``) or by its full name.
    """
    package = path.relative_to(tools).parent.parts
    tools_found, absolute = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("notebooks._tools")):
            base = package[:len(package) - node.level + 1] if node.level else ()
            module = (node.module or "").removeprefix("notebooks._tools").strip(".") if not node.level else node.module
            target = [*base, *(module.split(".") if module else [])]
            for alias in node.names:  # ``from .course import grading``: the module course/grading
                named = "/".join([*target, alias.name])
                tools_found.add(named if (tools / f"{named}.py").is_file() else "/".join(target))
        elif isinstance(node, ast.ImportFrom):
            absolute.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.Import):
            absolute |= {alias.name.split(".")[0] for alias in node.names}
    return {name for name in tools_found if (tools / f"{name}.py").is_file()}, absolute


def _tool_graph(tools: Path) -> dict[str, set[str]]:
    """Each notebook tool -> the tools it imports (:func:`_tool_imports`)."""
    return {_tool_name(path, tools): _tool_imports(path, tools)[0] for path in sorted(tools.rglob("*.py"))}


def _floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's floor: 1 for one that imports none of ``graph``, else one above the highest it imports."""
    floors: dict[str, int] = {}

    def floor(module: str) -> int:
        if module not in floors:
            floors[module] = 1 + max((floor(other) for other in graph.get(module, ())), default=0)
        return floors[module]

    for module in graph:
        floor(module)
    return floors


def _command_line_tools(tools: Path) -> set[str]:
    """The tools run as scripts (``if __name__ == "__main__":``): ``__main__``, ``lab/launch``."""
    found = set()
    for path in sorted(tools.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "__name__"
                    and any(isinstance(value, ast.Constant) and value.value == "__main__"
                            for value in node.comparators)):
                found.add(_tool_name(path, tools))
    return found


def _edits_sys_path(path: Path) -> list[int]:
    """The lines where a file changes ``sys.path`` (insert, append, extend, an assignment)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = [node.func.value] if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else []
        targets += node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if (isinstance(target, ast.Attribute) and target.attr == "path" and isinstance(target.value, ast.Name)
                    and target.value.id == "sys"):
                lines.append(node.lineno)
    return lines


def test_no_notebook_tool_imports_one_that_imports_it_back():
    graph = _tool_graph(TOOLS)
    assert "course/grading" in graph["__main__"] and "course/submissions" in graph["course/grading"], graph
    assert not _cycle(graph), " -> ".join(_cycle(graph))
    assert graph["common"] == set(), f"common, the tools' shared base, imports {graph['common']}"


def test_the_notebook_tools_stack_five_floors_at_most():
    floors = _floors(_tool_graph(TOOLS))
    assert floors["__main__"] == max(floors.values()), "the command line is the top floor"
    assert max(floors.values()) <= 5, sorted(floors.items(), key=lambda item: -item[1])


def test_the_tools_are_a_package_imported_by_name_never_through_sys_path():
    # A tool imported by its bare name (``import grading``) needs its folder on sys.path.
    bare = {path.stem for path in TOOLS.rglob("*.py")} - {"__init__", "__main__"}
    for path in sorted(TOOLS.rglob("*.py")):
        assert not _tool_imports(path, TOOLS)[1] & bare, f"{path} imports a tool by its bare name"
    for path in [*sorted(TOOLS.rglob("*.py")), *sorted(Path(__file__).parent.glob("*.py"))]:
        assert not _edits_sys_path(path), f"{path} changes sys.path at line(s) {_edits_sys_path(path)}"


def test_no_notebook_tool_imports_a_command_line_script():
    # Run from the command line, a script is the module __main__; a tool importing it by its
    # name loads a second copy, whose classes (the errors main() catches) are other classes.
    # The Lab's launcher is a script only in the student kit, where it runs alone.
    scripts = _command_line_tools(TOOLS)
    assert scripts == {"__main__", "lab/launch"}, scripts
    importers = {tool for tool, imported in _tool_graph(TOOLS).items() if "__main__" in imported}
    assert not importers, importers
    launcher, absolute = _tool_imports(TOOLS / "lab" / "launch.py", TOOLS)
    assert not launcher and absolute <= set(sys.stdlib_module_names) | {"__future__"}, absolute


def test_the_tool_graph_finds_a_cycle_through_a_function_body_and_the_checks_their_failures(tmp_path):
    (tmp_path / "a.py").write_text("from .b import f\n")
    (tmp_path / "b.py").write_text("import json\n\n\ndef f():\n    from .lab import x\n")
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "x.py").write_text("from .. import a\nfrom .y import z\nimport b\n")
    (tmp_path / "lab" / "y.py").write_text("if __name__ == \"__main__\":\n    pass\n")
    (tmp_path / "c.py").write_text("import sys\nfrom notebooks._tools.lab import y\n\nsys.path.insert(0, 'x')\n")
    graph = _tool_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"lab/x"}, "c": {"lab/y"}, "lab/x": {"a", "lab/y"}, "lab/y": set()}
    assert _cycle(graph) == ["a", "b", "lab/x", "a"]
    assert _floors({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}) == {"a": 3, "b": 2, "c": 1, "d": 2}
    assert _command_line_tools(tmp_path) == {"lab/y"}
    assert _tool_imports(tmp_path / "lab" / "x.py", tmp_path)[1] == {"b"}  # a bare import of a tool
    assert _edits_sys_path(tmp_path / "c.py") == [4] and _edits_sys_path(tmp_path / "a.py") == []


def test_the_paper_layer_is_plain_numpy():
    for path in PACKAGE.joinpath("paper").glob("*.py"):
        tops = {top for top, _ in _imports(path)}
        assert not tops & {"numba", "scipy", "matplotlib"}, f"{path.name} imports {tops}"


def test_nothing_in_the_library_imports_the_tooling():
    for path in _library_files():
        assert ("gbai", "tools") not in _imports(path), path.relative_to(PACKAGE)


def test_importing_gbai_leaves_the_studies_unloaded():
    # The studies sit on top of everything: a user who runs an algorithm pays for none of them
    # (scipy.stats, the published figures, the near-limit study). A fresh interpreter, since
    # this one may have imported them for other tests.
    loaded = subprocess.run([sys.executable, "-c", "import sys, gbai; print(sorted(sys.modules))"],
                            capture_output=True, text=True, check=True, timeout=120).stdout
    modules = ast.literal_eval(loaded)
    assert "gbai.experiments" in modules, "the check reads the modules import gbai loads"
    assert not [name for name in modules if name.startswith("gbai.studies")]
    assert "scipy.stats" not in modules


def test_no_module_imports_another_modules_private_names():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                offenders += [f"{path.relative_to(PACKAGE)}: {alias.name}" for alias in node.names
                              if alias.name.startswith("_") and not alias.name.endswith("__")]
    assert not offenders


TOY_MODULE = '''
"""Toy: CSS-LUCB's stopping rule, sampling every arm of F_t each round."""

import numpy as np
from numba import njit

from gbai.fast.levels import first_round, one_level, run_result
from gbai.fast.paper import css_lucb_decision, paper_log_constant, paper_radius
from gbai.fast.rewards import draw
from gbai.paper.css_lucb import css_lucb
from gbai.paper.engine import Decision
from gbai.paper.model import CONTINUE, NO_ANSWER
from gbai.paper.rewards import reward_exponents


class UniformCSS:
    name = "toy-uniform"

    def reset(self, n_arms, n_attributes):
        pass

    def decide(self, state):
        paper = css_lucb(state)
        if paper.stops:
            return paper
        return Decision.sample(np.repeat(state.sets.feasible_set[:, None], state.n_attributes, axis=1))


@njit
def toy_kernel(means, threshold, delta, keys, exponents, model, max_samples):
    n, m = means.shape
    sums, counts = first_round(keys, means, exponents, model, 1)
    samples, rounds, t = n * m, 1, 2
    constant = paper_log_constant(n * m, delta)
    arm_mean, lower, upper = np.zeros(n), np.zeros(n), np.zeros(n)
    feasible, perfect = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_)
    while True:
        for i in range(n):
            a = paper_radius(constant, t, counts[i, 0])
            total, lowest = 0.0, np.inf
            for j in range(m):
                total += sums[i, j] / counts[i, j]
                lowest = min(lowest, sums[i, j] / counts[i, j])
            arm_mean[i] = total / m
            lower[i], upper[i] = arm_mean[i] - a, arm_mean[i] + a
            feasible[i], perfect[i] = lowest + a >= threshold, lowest - a >= threshold
        answer, _, _ = css_lucb_decision(arm_mean, lower, upper, feasible, perfect)
        if answer != CONTINUE:
            return answer, samples, rounds, counts, True
        if samples + feasible.sum() * m > max_samples:
            return NO_ANSWER, samples, rounds, counts, False
        for i in range(n):
            if feasible[i]:
                for j in range(m):
                    sums[i, j] += draw(keys[i, j], counts[i, j], means[i, j], exponents[i, j], model)
                    counts[i, j] += 1
                samples += m
        rounds += 1
        t += 1


def run_toy(instance, deltas, keys, model, max_samples, options):
    means = np.ascontiguousarray(instance.means)
    return [run_result(*toy_kernel(means, instance.threshold, one_level(deltas), keys, reward_exponents(means), model,
                                   max_samples))]
'''


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy_uniform.py"
    path.write_text(TOY_MODULE)
    spec = importlib.util.spec_from_file_location("toy_uniform", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_algorithm_is_one_module_and_one_registry_entry(toy, monkeypatch):
    entry = gbai.Algorithm("toy-uniform", "CSS-LUCB's stopping rule, uniform on F_t", "tests/test_layers.py",
                           toy.UniformCSS, toy.run_toy)
    monkeypatch.setitem(gbai.ALGORITHMS, "toy-uniform", entry)  # the one registry entry
    assert gbai.resolve("toy-uniform").spec == "toy-uniform"
    covered = set()
    for instance in [gbai.table1_example(), gbai.Instance([[0.2, 0.8], [0.6, 0.15], [0.25, 0.5]], 0.35)]:
        for seed in range(3):
            fast = gbai.run(instance, "toy-uniform", delta=0.2, seed=seed, max_samples=200_000)
            step = gbai.run(instance, "toy-uniform", delta=0.2, seed=seed, max_samples=200_000, engine="step")
            assert fast.same_outcome(step), (fast, step)
            assert fast.stopped and fast.answer == instance.answer
            covered.add(fast.answer)
    assert gbai.INFEASIBLE in covered and 0 in covered


def test_the_registry_names_each_algorithm_once():
    assert set(gbai.ALGORITHMS) == {algorithm.name for algorithm in gbai.ALGORITHMS.values()}
    assert set(REFERENCES) == {algorithm.name for algorithm in REFERENCES.values()}
    assert not set(gbai.ALGORITHMS) & set(REFERENCES)  # one spec, one algorithm
    assert gbai.PAPER_ALGORITHMS == ("css-lucb", "ae", "feasibility-then-bai")
    for algorithm in [*gbai.ALGORITHMS.values(), *REFERENCES.values()]:
        for module in algorithm.modules:
            assert importlib.util.find_spec(module) is not None, module
