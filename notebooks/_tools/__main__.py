"""The tools' one command line: ``python -m notebooks._tools COMMAND ...`` from the repository root (``--help``).

A command that cannot run (bad input, a missing tool: one line says which) exits with status 2, one
whose tool failed with 1, an ``autograde`` that left a notebook ungraded with 3. ``lab`` hands every
further argument to JupyterLab.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from .book.build import build_book
from .common import MissingPrerequisite
from .course import feedback, grades, grading, kit, release
from .lab import launch
from .run.runner import run_notebooks

COURSE = Path("build/assignments")


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system has one (Linux), else every core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity call
        return os.cpu_count() or 1


def book_command(notebooks: Path, output: Path) -> int:
    """make book: the site, and where it is."""
    start = time.perf_counter()
    index = build_book(notebooks, output)
    print(f"book written to {index} ({time.perf_counter() - start:.1f} s)")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per command, which runs ``run(args)``."""
    main_parser = argparse.ArgumentParser(prog="python -m notebooks._tools", description=(
        "Run the notebooks headless, render them as a book, make and grade assignments, pack the student kit; "
        "`lab` opens them in JupyterLab (the arguments after it go to JupyterLab)."))
    commands = main_parser.add_subparsers(dest="mode", required=True, metavar="COMMAND")
    names = argparse.ArgumentParser(add_help=False)
    names.add_argument("names", nargs="*", help="notebook (assignment) name prefixes (default: all)")
    scripts = argparse.ArgumentParser(add_help=False)
    scripts.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="folder of the percent scripts")
    students = argparse.ArgumentParser(add_help=False, parents=[names])
    students.add_argument("--student", action="append", default=[], help="only this student (repeat for several)")
    students.add_argument("--students", help="as --student, several ids in one string split as a shell does "
                                             "(make's STUDENT): \"'mia chen' bob\"")

    def command(name: str, about: str, output: Path | None, parents: list, run) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=about, description=about, parents=parents)
        if output is not None:
            sub.add_argument("--output", type=Path, default=output, help=f"the output (default {output})")
        sub.set_defaults(run=run)
        return sub

    # One notebook per core: most of a notebook's time is one process (its kernel), between its sweeps.
    cores = usable_cores()
    jobs = {"type": int, "default": cores, "help": f"notebooks run at once (default: one per core, {cores} here)"}
    command("figures", "run every notebook into notebooks/, then publish the results", None, [names, scripts],
            lambda a: run_notebooks("figures", a.notebooks, a.names, a.jobs, None)).add_argument("--jobs", **jobs)
    command("quick", "run the notebooks with quick=True for the tests", Path("build/quick"), [names, scripts],
            lambda a: run_notebooks("quick", a.notebooks, a.names, a.jobs, a.output)).add_argument("--jobs", **jobs)
    command("book", "the executed notebooks as an HTML site", Path("build/book"), [scripts],
            lambda a: book_command(a.notebooks, a.output))
    command("assignments", "the nbgrader course: instructor and student versions, gradebook", COURSE,
            [names, scripts], lambda a: release.assignments_command(a.notebooks, a.output, a.names))
    autograde = command("autograde", "grade what was handed in", COURSE, [students],
                        lambda a: grading.autograde_command(a.output, a.names, a.student, a.timeout, a.memory))
    autograde.add_argument("--timeout", type=int, default=grading.CELL_TIMEOUT,
                           help=f"seconds a cell may run before it is stopped (default {grading.CELL_TIMEOUT})")
    autograde.add_argument("--memory", type=float, default=grading.DEFAULT_MEMORY_GB,
                           help=f"GB of memory a confined kernel may use (default {grading.DEFAULT_MEMORY_GB})")
    answer = command("grade-answer", "grade a written answer, or list those to grade", COURSE, [students],
                     lambda a: grading.grade_answer_command(a.output, a.names, a.student, a.answer, a.score, a.comment))
    answer.add_argument("--answer", help="the nbgrader id of the cell to grade (nbNN_exK_answer)")
    answer.add_argument("--score", help="the points given")
    answer.add_argument("--comment", help="a comment for the student")
    command("feedback", "the feedback pages of the graded submissions", COURSE, [students],
            lambda a: feedback.feedback_command(a.output, a.names, a.student))
    command("export", "the grade tables, rewritten from the gradebook", COURSE, [],
            lambda a: grades.export_command(a.output))
    command("student-kit", "the zip for students: student versions, gbai as a wheel, a guide",
            Path("build/student-kit.zip"), [scripts], lambda a: kit.student_kit_command(a.notebooks, a.course, a.output)
            ).add_argument("--course", type=Path, default=COURSE, help="the nbgrader course folder (written again)")
    return main_parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["lab"]:  # the tools live in notebooks/, beside the Lab's configuration
        return launch.main(argv[1:], Path(launch.__file__).with_name("reader_lab"), Path(__file__).resolve().parents[1])
    args = parser().parse_args(argv)
    # make student-kit's messages name the kit; the others', the pipeline and the command.
    name, failed = ("student-kit",) * 2 if args.mode == "student-kit" else ("pipeline", f"pipeline: {args.mode}")
    try:
        if getattr(args, "students", None) is not None:
            try:
                args.student += shlex.split(args.students)
            except ValueError as error:
                raise ValueError(f"STUDENT={args.students!r} cannot be split into ids ({error}); "
                                 f"quote an id with a space: STUDENT=\"'mia chen' bob\"") from None
        return args.run(args)
    except (ValueError, FileNotFoundError, MissingPrerequisite) as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"{failed} failed: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
