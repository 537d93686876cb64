"""Project-level checks: notebook pairs, dependency lists, the report's figures, savefig."""

import re
import tomllib
from pathlib import Path

import jupytext
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402

from gbai.plotting import savefig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def test_there_are_notebooks():
    assert len(SCRIPTS) >= 8


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_notebook_pairs_hold_the_same_cells(script):
    notebook_path = script.with_suffix(".ipynb")
    assert notebook_path.exists(), f"{script.name} has no paired .ipynb"
    from_script = jupytext.read(script)
    from_notebook = jupytext.read(notebook_path)
    assert [cell.cell_type for cell in from_script.cells] == [cell.cell_type for cell in from_notebook.cells]
    for index, (a, b) in enumerate(zip(from_script.cells, from_notebook.cells)):
        assert a.source == b.source, f"{script.name}: cell {index} differs between .py and .ipynb"
        if a.cell_type == "code":
            assert a.metadata.get("tags", []) == b.metadata.get("tags", []), f"{script.name}: tags of cell {index}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_committed_notebooks_are_executed(script):
    notebook = nbformat.read(script.with_suffix(".ipynb"), as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]
    assert code and all(cell.execution_count is not None for cell in code), "run `make figures` to execute it"
    counts = [cell.execution_count for cell in code]
    assert counts == sorted(counts), "cells were executed out of order"
    errors = [output for cell in code for output in cell.outputs if output.output_type == "error"]
    assert not errors
    parameters = [cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) == 1
    for name in ("n_runs", "delta", "seed", "workers", "quick"):
        assert re.search(rf"^{name} = ", parameters[0].source, re.MULTILINE), f"parameter {name} missing"


def _requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_and_pyproject_name_the_same_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    from_pyproject = {_requirement_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        from_pyproject |= {_requirement_name(r) for r in extra}
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [entry for entry in environment["dependencies"] if isinstance(entry, str)]
    pip_section = next(entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict))
    names = {_requirement_name(entry) for entry in conda} - {"python", "pip"}
    # Packages that only PyPI has are listed in the pip section.
    names |= {_requirement_name(line) for line in pip_section if not line.startswith("-")}
    assert "python=3.11" in conda and "pip" in conda
    assert names == from_pyproject, (names ^ from_pyproject)
    assert any(line.startswith("-e") and ".[" in line for line in pip_section), "pip section must install gbai"


def test_every_figure_of_the_report_exists():
    report = (ROOT / "paper" / "report.tex").read_text()
    included = re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", report)
    assert included, "the report includes no figure"
    for name in included:
        path = (ROOT / "paper" / name).resolve()
        candidates = [path] if path.suffix else [path.with_suffix(".pdf"), path.with_suffix(".png")]
        assert any(candidate.exists() for candidate in candidates), f"report figure {name} is missing"


def test_savefig_writes_identical_files(tmp_path):
    data = pd.DataFrame({"x": [1, 2, 3], "y": [0.1, 0.4, 0.9]})

    def draw(folder):
        fig, ax = plt.subplots()
        ax.plot(data["x"], data["y"])
        paths = savefig(fig, "check", data=data, directory=folder)
        plt.close(fig)
        return paths

    first = draw(tmp_path / "a")
    second = draw(tmp_path / "b")
    assert [path.suffix for path in first] == [".pdf", ".png", ".csv"]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs between two identical saves"
    with pytest.raises(ValueError, match="plain file stem"):
        savefig(plt.figure(), "../escape")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_no_committed_notebook_splits_a_stream(script):
    # One print can reach the notebook as one or two stream messages, depending on the
    # kernel's flush timing; the pipeline joins them so reruns are byte-identical.
    notebook = nbformat.read(script.with_suffix(".ipynb"), as_version=4)
    for index, cell in enumerate(notebook.cells):
        outputs = cell.get("outputs", [])
        for first, second in zip(outputs, outputs[1:]):
            assert not (first.output_type == second.output_type == "stream" and first.name == second.name), (
                f"{script.name}: cell {index} holds two consecutive {first.name} outputs; rerun `make figures`")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_jupyterlab_opens_the_pair_without_a_conflict(script):
    # JupyterLab's Jupytext extension refuses to open a pair whose newer .ipynb, rendered
    # as a script, differs from the .py ("is more recent than"), and saving from Lab
    # rewrites the .py with the project's configuration. So the .py must be what Lab
    # writes, and the .ipynb must carry the same header (the metadata filters) itself.
    from jupytext.config import load_jupytext_configuration_file

    config = load_jupytext_configuration_file(str(ROOT / "notebooks" / "jupytext.toml"))
    text = script.read_text()
    saved_by_lab = jupytext.writes(jupytext.read(script, config=config), fmt="py:percent", config=config)
    assert saved_by_lab == text, f"saving {script.name} from JupyterLab would change it"
    from_notebook = jupytext.writes(jupytext.read(script.with_suffix(".ipynb")), fmt="py:percent")
    assert from_notebook == text, f"{script.stem}.ipynb renders differently from {script.name}; rerun `make figures`"


def test_license_and_citation_match_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT", "pyproject.toml: the license is an SPDX expression"
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "gbai developers" in license_text
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    from gbai.version import __version__

    assert citation["version"] == __version__, "CITATION.cff names another version than gbai/version.py"
    assert citation["license"] == project["license"]
    papers = [reference for reference in citation.get("references", []) if "2412.08031" in str(reference)]
    assert papers, "CITATION.cff does not name the paper (arXiv 2412.08031)"
    citing = (ROOT / "README.md").read_text().split("## Citing", 1)[1]
    assert "@article{dharod2024constrained" in citing and "@software{gbai" in citing
    assert f"version = {{{__version__}}}" in citing, "the README cites another version of the software"


def test_setuptools_finds_every_subpackage():
    # Package discovery, not a list: a new subpackage (or data folder) of gbai ships without an edit here.
    from setuptools import find_namespace_packages

    setuptools_config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" in setuptools_config and "find" in setuptools_config["packages"], "list the packages by discovery"
    found = set(find_namespace_packages(str(ROOT), **setuptools_config["packages"]["find"]))
    folders = {".".join(path.relative_to(ROOT).parts) for path in (ROOT / "gbai").rglob("*")
               if path.is_dir() and path.name != "__pycache__" and any(path.iterdir())}
    assert folders | {"gbai"} <= found, sorted(folders - found)


def test_make_help_lists_every_target():
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("needs make")
    makefile = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", makefile, re.MULTILINE).group(1).replace("\\\n", " ").split()
    defined = set(re.findall(r"^([a-z][\w-]*):(?!=)", makefile, re.MULTILINE))
    assert defined <= set(phony), f"targets missing from .PHONY: {sorted(defined - set(phony))}"
    shown = subprocess.run(["make", "-s", "-C", str(ROOT), "help"], capture_output=True, text=True, check=True).stdout
    listed = set(re.findall(r"^make ([\w-]+)", shown, re.MULTILINE))
    assert set(phony) <= listed, f"make help does not list {sorted(set(phony) - listed)}"
