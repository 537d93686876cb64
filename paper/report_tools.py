"""Tools of ``make paper``: the fingerprint of the report's sources, and the checks of a build's log.

``python paper/report_tools.py fingerprint`` prints the SHA-256 fingerprint of the
sources (``paper/report.tex``, every ``.tex`` file it reads, its bibliography and
every figure file they include), which ``make paper`` stores in the PDF's metadata
(``/SourceFingerprint``); ``tests/test_report.py`` compares it with the current files,
so a committed ``paper/report.pdf`` older than its sources fails the tests.

``python paper/report_tools.py check build/paper/report.log`` fails (exit status 1)
on what the build log reports but LaTeX does not treat as an error: a float larger
than its page, a line wider than the margin by more than 10 pt, lost floats,
undefined references or citations, and labels that would still move.

Standard library only: ``make paper`` runs it with the system's Python.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

__all__ = ["MAX_OVERFULL_PT", "build_problems", "fingerprint", "source_files"]

PAPER = Path(__file__).resolve().parent
#: A line may stick out of the text block by a hair (invisible); wider is a defect.
MAX_OVERFULL_PT = 10.0
_GRAPHICS = re.compile(r"\\includegraphics\s*(?:\[[^\]]*\])?\s*\{([^}]+)\}")
_INPUT = re.compile(r"\\(?:input|include)\s*\{([^}]+)\}")
_BIBLIOGRAPHY = re.compile(r"\\bibliography\s*\{([^}]+)\}")
_EXTENSIONS = (".pdf", ".png", ".jpg", ".jpeg")


def _uncommented(tex: str) -> str:
    return "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in tex.splitlines())


def source_files(paper: Path = PAPER, main: str = "report.tex") -> list[Path]:
    """The files the report is built from: ``main``, every ``.tex`` it reads (``\\input``,
    ``\\include``, followed through), the ``.bib`` files of its ``\\bibliography`` and every
    figure any of them includes.

    A figure named without an extension is the file pdfLaTeX would pick (``.pdf``,
    then ``.png``, ``.jpg``); a figure or a bibliography that does not exist raises
    ``FileNotFoundError``. An ``\\input`` file that is not in ``paper/`` belongs to the
    TeX distribution; a ``.tex`` file in ``paper/`` that the report does not read (a
    draft, a generated file not used yet) is not a source.
    """
    texts: list[Path] = []
    bibliographies: list[Path] = []
    figures: set[Path] = set()
    pending = [paper / main]
    while pending:
        tex = pending.pop(0)
        if tex in texts:
            continue
        if not tex.is_file():
            if tex.parent == paper and tex.name != main:
                continue  # not in paper/: a file of the TeX distribution (glyphtounicode, ...)
            raise FileNotFoundError(f"no {tex.name} in {paper}")
        texts.append(tex)
        text = _uncommented(tex.read_text(encoding="utf-8"))
        for name in _INPUT.findall(text):
            path = paper / name.strip()
            pending.append(path if path.suffix == ".tex" else path.with_name(path.name + ".tex"))
        for names in _BIBLIOGRAPHY.findall(text):
            for name in names.split(","):
                path = paper / name.strip()
                path = path if path.suffix == ".bib" else path.with_name(path.name + ".bib")
                if not path.is_file():
                    raise FileNotFoundError(f"{tex.name} cites from {path.name}, which does not exist")
                if path not in bibliographies:
                    bibliographies.append(path)
        for name in _GRAPHICS.findall(text):
            path = paper / name.strip()
            candidates = [path] if path.suffix.lower() in _EXTENSIONS else [
                path.with_name(path.name + extension) for extension in _EXTENSIONS]
            found = next((candidate for candidate in candidates if candidate.is_file()), None)
            if found is None:
                raise FileNotFoundError(f"{tex.name} includes {name}, which does not exist")
            figures.add(found.resolve())
    return texts + bibliographies + sorted(figures)


def fingerprint(paper: Path = PAPER) -> str:
    """SHA-256 over the name (relative to the repository) and the bytes of every source file, in order."""
    root = paper.resolve().parent
    digest = hashlib.sha256()
    for path in source_files(paper):
        name = path.resolve().relative_to(root).as_posix()
        content = path.read_bytes()
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def build_problems(log: str) -> list[str]:
    """What a pdfLaTeX log reports that makes the PDF wrong although the build succeeded."""
    problems = []
    for match in re.finditer(r"Float too large for page by ([\d.]+)pt on input line (\d+)", log):
        problems.append(f"a float is larger than its page by {match.group(1)} pt (input line {match.group(2)})")
    for match in re.finditer(r"Overfull \\([hv])box \(([\d.]+)pt too (?:wide|high)\)([^\n]*)", log):
        if float(match.group(2)) > MAX_OVERFULL_PT:
            problems.append(f"overfull \\{match.group(1)}box by {match.group(2)} pt{match.group(3)}")
    if "Float(s) lost" in log:
        problems.append("floats were lost")
    for match in re.finditer(r"LaTeX Warning: (Reference|Citation) `([^']+)' on page \d+ undefined", log):
        problems.append(f"{match.group(1).lower()} {match.group(2)} is undefined")
    if "There were undefined references" in log or "There were undefined citations" in log:
        problems.append("the document has undefined references or citations")
    if "Label(s) may have changed" in log:
        problems.append("labels may have changed: the build did not settle")
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["fingerprint"] and len(argv) == 1:
        print(fingerprint())
        return 0
    if argv[:1] == ["check"] and len(argv) == 2:
        log = Path(argv[1])
        if not log.is_file():
            print(f"report_tools: no build log {log}", file=sys.stderr)
            return 2
        problems = build_problems(log.read_text(encoding="latin-1"))
        for problem in problems:
            print(f"report_tools: {log}: {problem}", file=sys.stderr)
        return 1 if problems else 0
    print("usage: python paper/report_tools.py fingerprint | check BUILD_LOG", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
