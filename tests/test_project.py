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


def test_notebooks_are_numbered_from_one_without_gaps():
    # The book, the course and the pipeline order the notebooks by their two-digit
    # prefix: a gap or a repeated number (a renamed or duplicated script) shows here.
    assert SCRIPTS, "no notebook scripts found"
    numbers = [int(script.name[:2]) for script in SCRIPTS]
    assert numbers == list(range(1, len(SCRIPTS) + 1)), [script.name for script in SCRIPTS]


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


# --- the README and the book's own pages -----------------------------------------------

BOOK_SOURCES = ROOT / "notebooks" / "_book"
#: The guides moved out of the README into the book (and that the README links).
GUIDES = ["results", "teaching", "large-sweeps", "architecture", "lab-and-book"]
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]\n]|\[[^\]\n]*\])*)\]\(([^()\s]+)\)")


def _markdown_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(BOOK_SOURCES.glob("*.md"))]


def _links(page: Path) -> list[str]:
    return [match.group(2) for match in _LINK.finditer(_FENCE.sub("", page.read_text(encoding="utf-8")))]


def _anchors(page: Path) -> set[str]:
    """The anchors the code host gives the headings of a Markdown page (MyST gives the same)."""
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", page.read_text(encoding="utf-8")), re.MULTILINE):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
        anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def test_the_anchors_are_those_of_the_code_host():
    page = ROOT / "README.md"
    assert {"where-each-part-of-the-paper-lives", "citing"} <= _anchors(page)
    assert "the-published-figures-explained-notebook-9" in _anchors(BOOK_SOURCES / "results.md")
    assert "3-what-students-install" in _anchors(BOOK_SOURCES / "teaching.md")


def test_the_readme_is_a_short_front_door_that_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 200, f"the README has {len(lines)} lines: move the detail to a page of notebooks/_book"
    assert lines[0].startswith("# gbai") and lines[1] == ""
    first_block = re.search(r"^```sh\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert first_block and text.index(first_block.group(0)) == len(lines[0]) + 2, "the commands must come first"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make figures", "make test"]
    # The reader finds the other entry points from the front door.
    for needed in ("make lab", "make book", "make lock", "## Where each part of the paper lives", "## Citing"):
        assert needed in text, f"the README no longer mentions {needed!r}"
    linked = {Path(target.partition("#")[0]).stem for target in _links(ROOT / "README.md")
              if target.startswith("notebooks/_book/")}
    assert set(GUIDES) <= linked, f"the README does not link {sorted(set(GUIDES) - linked)}"


def test_every_page_of_notebooks_book_is_in_the_toctree():
    index = (BOOK_SOURCES / "index.md").read_text(encoding="utf-8")
    entries = set()
    for block in re.findall(r"^```\{toctree\}\n(.*?)^```", index, re.DOTALL | re.MULTILINE):
        for line in block.splitlines():
            if line.strip() and not line.startswith(":"):
                entries.add(re.search(r"<([^>]+)>$", line.strip()).group(1) if line.strip().endswith(">")
                            else line.strip())
    assert set(GUIDES) <= entries, f"not in the book's toctree: {sorted(set(GUIDES) - entries)}"
    pages = {page.stem for page in BOOK_SOURCES.glob("*.md")} - {"index"}
    assert pages <= entries, f"pages of notebooks/_book the book leaves out: {sorted(pages - entries)}"


@pytest.mark.parametrize("page", _markdown_pages(), ids=lambda path: path.name)
def test_every_relative_link_resolves_on_the_code_host(page):
    from notebooks._tools.book.build import GENERATED_PAGES

    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # a web address
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if page.parent == BOOK_SOURCES and file.parent == BOOK_SOURCES and file.name in GENERATED_PAGES:
            continue  # written by make book beside the pages (the API reference)
        assert file.exists(), f"{page.name}: the link {target} leads nowhere"
        assert file.is_relative_to(ROOT), f"{page.name}: the link {target} leaves the repository"
        if anchor and file.suffix == ".md":
            assert anchor in _anchors(file), f"{page.name}: {file.name} has no heading for #{anchor}"
