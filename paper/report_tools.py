"""Tools of ``make paper``: the fingerprint of the report's sources, and the checks of a build's log.

``python paper/report_tools.py fingerprint`` prints the SHA-256 fingerprint of the
sources (every ``paper/*.tex``, every ``paper/*.bib`` and every figure file the
``.tex`` files include), which ``make paper`` stores in the PDF's metadata
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
_EXTENSIONS = (".pdf", ".png", ".jpg", ".jpeg")


def _uncommented(tex: str) -> str:
    return "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in tex.splitlines())


def source_files(paper: Path = PAPER) -> list[Path]:
    """The files the report is built from: ``paper/*.tex``, ``paper/*.bib`` and every figure they include.

    A figure named without an extension is the file pdfLaTeX would pick (``.pdf``,
    then ``.png``, ``.jpg``); a figure that does not exist raises ``FileNotFoundError``.
    """
    texts = sorted(paper.glob("*.tex"))
    if not texts:
        raise FileNotFoundError(f"no .tex file in {paper}")
    figures = set()
    for tex in texts:
        for name in _GRAPHICS.findall(_uncommented(tex.read_text(encoding="utf-8"))):
            path = paper / name.strip()
            candidates = [path] if path.suffix.lower() in _EXTENSIONS else [
                path.with_name(path.name + extension) for extension in _EXTENSIONS]
            found = next((candidate for candidate in candidates if candidate.is_file()), None)
            if found is None:
                raise FileNotFoundError(f"{tex.name} includes {name}, which does not exist")
            figures.add(found.resolve())
    return texts + sorted(paper.glob("*.bib")) + sorted(figures)


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
