"""Adding an algorithm takes one new module and one registry line (README, "Architecture").

The test writes a toy algorithm as a module of its own, outside the package, adds
it to the registry with one line, and runs it through both engines. It also checks
the layout rules the architecture relies on.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gbai

PACKAGE = Path(gbai.__file__).parent

TOY_MODULE = '''
"""Toy: CSS-LUCB's stopping rule, sampling every arm of F_t each round."""

import numpy as np

from gbai.algorithms.base import Algorithm
from gbai.algorithms.css_lucb import css_lucb_sets
from gbai.algorithms.kernels import CONTINUE, ArmRulePolicy, arm_rule, arm_rule_runner


@arm_rule
def uniform_rule(arm_mean, lower, upper, feasible, perfect, memory, chosen):
    answer, leader, competitor = css_lucb_sets(arm_mean, lower, upper, feasible, perfect)
    if answer != CONTINUE:
        return answer
    for i in range(chosen.size):
        chosen[i] = feasible[i]
    return CONTINUE


def no_memory(n_arms):
    return np.zeros(0, dtype=np.int64)


class UniformCSS(ArmRulePolicy):
    name = "toy-uniform"
    rule = uniform_rule
    memory_for = no_memory


ALGORITHM = Algorithm(
    name="toy-uniform",
    title="CSS-LUCB's stopping rule with uniform sampling of F_t",
    reference="tests/test_toy_algorithm.py",
    make_policy=UniformCSS,
    run_fast=arm_rule_runner(uniform_rule, no_memory),
)
'''


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy_uniform.py"
    path.write_text(TOY_MODULE)
    spec = importlib.util.spec_from_file_location("toy_uniform", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_toy_algorithm_needs_one_module_and_one_registry_line(toy, monkeypatch):
    monkeypatch.setitem(gbai.ALGORITHMS, "toy-uniform", toy.ALGORITHM)  # the one registry line
    assert gbai.resolve("toy-uniform").spec == "toy-uniform"
    covered = set()
    instances = [gbai.table1_example(), gbai.Instance([[0.2, 0.8], [0.6, 0.15], [0.25, 0.5]], 0.35)]
    for instance in instances:
        for seed in range(3):
            fast = gbai.run(instance, "toy-uniform", delta=0.2, seed=seed, max_samples=200_000)
            step = gbai.run(instance, "toy-uniform", delta=0.2, seed=seed, max_samples=200_000, engine="step")
            assert fast.same_outcome(step), (fast, step)
            assert fast.stopped and fast.answer == instance.answer
            covered.add(fast.answer)
    assert gbai.INFEASIBLE in covered and 0 in covered


def test_importing_one_algorithm_module_gives_the_whole_registry():
    code = textwrap.dedent("""
        import gbai.algorithms.css_lucb
        import sys
        registry = sys.modules["gbai.algorithms"].ALGORITHMS
        print(",".join(registry))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out.split(",") == list(gbai.ALGORITHMS)


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_imports_another_modules_private_names():
    offenders = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                offenders += [f"{path.relative_to(PACKAGE)}: {alias.name}" for alias in node.names
                              if alias.name.startswith("_") and not alias.name.endswith("__")]
    assert not offenders


def test_modules_stay_short():
    # The bound is "about 500 lines"; 520 leaves room for a docstring line or two.
    lengths = {str(path.relative_to(PACKAGE)): len(path.read_text().splitlines()) for path in _modules()}
    assert max(lengths.values()) <= 520, sorted(lengths.items(), key=lambda item: -item[1])[:3]


def test_every_algorithm_module_defines_its_registry_entry():
    from gbai import algorithms

    for name, algorithm in gbai.ALGORITHMS.items():
        module_file = next(path for path in algorithm.modules if path.startswith("algorithms/"))
        module = importlib.import_module("gbai." + module_file[:-3].replace("/", "."))
        assert module.ALGORITHM is algorithm, name
    assert set(gbai.ALGORITHMS) == {algorithm.name for algorithm in gbai.ALGORITHMS.values()}
    assert algorithms.PAPER_ALGORITHMS == ("css-lucb", "ae", "feasibility-then-bai")
