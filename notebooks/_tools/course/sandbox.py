"""Confined grading: the kernel that runs a student's notebook starts inside a bubblewrap sandbox.

A submission is code nobody has read. With `bubblewrap <https://github.com/containers/bubblewrap>`_
(``bwrap``, a Linux package) each grading kernel sees the file system read-only, with
empty folders over the places an answer must not read (the course folder with every
submission, the instructor versions and the gradebook; the repository with the
solutions; the home folder) and only two places it may write: its working folder and
a private ``/tmp``, both empty and both gone when the kernel ends. It has no network
(its own empty loopback: nothing outside answers), sees only its own processes, and
its address space is capped (``prlimit --as``), so a runaway allocation fails in the
cell instead of exhausting the machine. The kernel talks to nbgrader over Unix
sockets in a folder bound into the sandbox (TCP would be cut by the network
namespace).

Where bwrap is missing or cannot start (macOS, a Linux that denies user namespaces)
grading still runs, unconfined, and says so.

:class:`GradingExecute` is the nbgrader ``Execute`` preprocessor that grading uses:
confined when it can be, and going on after a kernel that dies in a cell.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..common import ipc_prefix
from . import checker

__all__ = ["DEFAULT_MEMORY_GB", "KERNEL_DIED", "Confinement", "confinement", "grading_execute", "sandbox_command"]

#: Address space a grading kernel may use, in GB. A notebook in the quick configuration
#: peaks far below it (numpy, numba and matplotlib loaded); a student's accidental
#: ``np.zeros(10**10)`` does not.
DEFAULT_MEMORY_GB = 4
#: The error stored in a cell whose kernel died while running it.
KERNEL_DIED = "KernelDied"
#: How many times one notebook's kernel may die before the rest of it is left unrun.
_RESTARTS = 5


@dataclass(frozen=True)
class Confinement:
    """How grading kernels run: ``bwrap`` is the sandbox command (None: unconfined, ``reason`` says why).

    ``hidden`` are folders replaced by empty ones, ``readable`` those shown again
    (read-only) inside them: the Python installation and the ``gbai`` package.
    """

    bwrap: str | None
    memory_gb: float
    hidden: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    reason: str = ""

    def describe(self) -> str:
        """One line for the console: whether answers run confined, and how."""
        if self.bwrap:
            return (f"answers run confined (bubblewrap): files read-only but the notebook's own folder and a "
                    f"private /tmp, no network, memory limit {self.memory_gb:g} GB")
        return (f"answers run UNCONFINED ({self.reason}): they can read and write whatever you can; "
                f"install bubblewrap to confine them (see the teaching guide)")


_PROBE = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-net",
          "--unshare-pid", "--die-with-parent", "true"]


def _outermost(paths: list[str]) -> tuple[str, ...]:
    """The paths, without those inside another one of them, outermost first."""
    kept: list[str] = []
    for path in sorted(set(paths), key=lambda item: (item.count(os.sep), item)):
        if not any(path == other or path.startswith(other.rstrip(os.sep) + os.sep) for other in kept):
            kept.append(path)
    return tuple(kept)


def confinement(course: Path, memory_gb: float = DEFAULT_MEMORY_GB) -> Confinement:
    """The sandbox for the kernels grading ``course``: bwrap if it is on PATH and starts, else unconfined.

    Raises ``ValueError`` for a memory limit that is not a positive number.
    """
    if (isinstance(memory_gb, bool) or not isinstance(memory_gb, (int, float)) or not memory_gb > 0
            or not math.isfinite(memory_gb)):
        raise ValueError(f"the memory limit must be a positive number of GB, got {memory_gb!r}")
    bwrap, prlimit = shutil.which("bwrap"), shutil.which("prlimit")
    if not sys.platform.startswith("linux"):
        return Confinement(None, memory_gb, reason=f"no bubblewrap on {sys.platform}")
    if bwrap is None or prlimit is None:
        return Confinement(None, memory_gb, reason=f"{'bwrap' if bwrap is None else 'prlimit'} not found on PATH")
    try:
        probe = subprocess.run([bwrap, *_PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Confinement(None, memory_gb, reason=f"bwrap does not start: {error}")
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
        return Confinement(None, memory_gb, reason=f"bwrap does not start: {said}")
    import gbai

    repository = Path(__file__).resolve().parents[3]
    hidden = [str(Path(course).resolve()), str(repository), str(Path.home().resolve())]
    # A home folder of "/" (some containers) or one holding the system would hide everything.
    hidden = [path for path in hidden if path != os.sep and not os.path.join(os.sep, "usr").startswith(
        path.rstrip(os.sep) + os.sep)]
    # What the kernel needs from the hidden folders: Python (a pyenv one lives in the
    # home folder), the venv (in the repository) and the gbai package (an editable
    # install resolves to the repository).
    readable = [str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve()),
                str(Path(gbai.__file__).resolve().parent)]
    return Confinement(bwrap, memory_gb, _outermost(hidden), tuple(sorted(set(readable), key=len)))


#: Where a confined kernel keeps what it writes besides its folder: all of it in the private /tmp.
_PRIVATE_ENVIRONMENT = {"TMPDIR": "/tmp", "HOME": "/tmp/home", "IPYTHONDIR": "/tmp/ipython",
                        "MPLCONFIGDIR": "/tmp/matplotlib", "XDG_CACHE_HOME": "/tmp/cache",
                        "GBAI_FIGURES_DIR": "/tmp/figures", "GBAI_CACHE_DIR": "/tmp/gbai-cache"}


def _copy_numba_cache(target: Path) -> None:
    """Copy gbai's compiled numba functions into ``target``, laid out as numba finds them under ``NUMBA_CACHE_DIR``.

    Inside the sandbox the package's own ``__pycache__`` is read-only, and numba then
    compiles again into ``NUMBA_CACHE_DIR`` (seconds per function on a busy machine);
    a private copy keeps the cells of a graded notebook as quick as elsewhere, and
    nothing a kernel writes there reaches another.
    """
    import hashlib

    import gbai

    for cache in Path(gbai.__file__).resolve().parent.rglob("__pycache__"):
        files = [*cache.glob("*.nbi"), *cache.glob("*.nbc")]
        if not files:
            continue
        # numba's _UserProvidedCacheLocator: <folder name>_<sha1 of the source folder's path>.
        source = str(cache.parent)
        folder = target / f"{cache.parent.name}_{hashlib.sha1(source.encode()).hexdigest()}"
        folder.mkdir(parents=True, exist_ok=True)
        for path in files:
            shutil.copy2(path, folder / path.name)


def sandbox_command(sandbox: Confinement, kernel: list[str], workdir: str, sockets: str,
                    connection_file: str) -> list[str]:
    """``kernel`` (a command) prefixed so that it runs in ``sandbox``, in an empty ``workdir`` it may write.

    ``sockets`` is the folder of the kernel's Unix sockets, bound in writable;
    ``connection_file`` is bound in read-only. Later mounts cover earlier ones, so the
    order is: read-only root, private /tmp, hidden folders, the folders shown again,
    the working folder, the sockets.
    """
    command = [sandbox.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in sandbox.hidden:
        command += ["--tmpfs", path]
    for path in sandbox.readable:
        command += ["--ro-bind", path, path]
    command += ["--ro-bind", connection_file, connection_file, "--tmpfs", workdir, "--bind", sockets, sockets,
                "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", workdir,
                # In its own process namespace the kernel's parent is process 1, which ipykernel takes
                # for "the client has gone" and exits; told that its parent is 1, it does not watch
                # (--die-with-parent ends it with the sandbox). No --new-session: the interrupt at
                # the time limit goes to the sandbox's process group, the kernel included.
                "--setenv", "JPY_PARENT_PID", "1"]
    limit = int(sandbox.memory_gb * 2**30)
    # The interrupt at the time limit goes to the whole process group: bwrap itself would die
    # of it (and the kernel with it), so it starts with SIGINT ignored. The kernel catches
    # SIGINT while it runs a cell whatever it inherited.
    ignore_interrupt = ["/bin/sh", "-c", 'trap "" INT; exec "$0" "$@"']
    return [*ignore_interrupt, *command, shutil.which("prlimit") or "prlimit", f"--as={limit}", "--", *kernel]


@functools.cache
def grading_execute() -> type:
    """The nbgrader preprocessor :class:`GradingExecute` and its kernel manager, made on first use (needs nbgrader)."""
    from jupyter_client import AsyncKernelManager
    from nbclient.exceptions import DeadKernelError
    from nbclient.util import run_sync
    from nbformat import NotebookNode
    from nbgrader.preprocessors import Execute
    from traitlets import Any

    class ConfinedKernelManager(AsyncKernelManager):
        """A kernel manager that starts its kernel in ``sandbox`` (as is when it is unconfined)."""

        sandbox = Any(None)
        #: The kernel's own folder on the host: its sockets, connection file and numba cache.
        private = Any(None)

        async def _async_pre_start_kernel(self, **kw):
            if self.sandbox is not None and self.sandbox.bwrap and self.private is None:
                # Its own folder, not one shared with the kernels graded before: nothing one
                # student's kernel leaves there reaches the next (a restart keeps it).
                if self.transport != "ipc":
                    raise RuntimeError("a confined kernel needs the ipc transport (KernelManager.transport)")
                self.private = ipc_prefix()
                self.ip = self.private
                self.connection_file = os.path.join(os.path.dirname(self.private), "connection.json")
                _copy_numba_cache(Path(os.path.dirname(self.private)) / "numba")
            return await super()._async_pre_start_kernel(**kw)

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
            if self.sandbox is not None and self.sandbox.bwrap:
                workdir = os.path.abspath(kw.get("cwd") or os.getcwd())
                folder = os.path.dirname(self.private)
                kernel_cmd = sandbox_command(self.sandbox, kernel_cmd, workdir, folder,
                                             os.path.abspath(self.connection_file))
                kw["env"] = {**(kw.get("env") or os.environ), **_PRIVATE_ENVIRONMENT,
                             "NUMBA_CACHE_DIR": os.path.join(folder, "numba")}
            await super()._async_launch_kernel(kernel_cmd, **kw)

    class GradingExecute(Execute):
        """nbgrader's ``Execute``, confined, and surviving a kernel that dies in a cell.

        When the kernel dies, the cell gets an error output ``KernelDied`` saying so; a
        new kernel runs the code cells before it again (their stored outputs are kept;
        cells that died or were stopped at the time limit are left out), so the cells
        after it find the notebook's variables, and grading goes on. Re-running keeps
        the remaining exercises gradable at the cost of running those cells twice; going
        on in a fresh kernel without them would fail every later cell on a missing
        import or variable.
        """

        sandbox = Any(None).tag(config=True)

        def create_kernel_manager(self):
            self.kernel_manager_class = ConfinedKernelManager
            manager = super().create_kernel_manager()
            manager.sandbox = self.sandbox
            return manager

        def preprocess(self, nb, resources=None, km=None):
            self._died: list[int] = []
            # The test cells run in a checker process, on plain data the kernel hands over (checker.py).
            self.checks = checker.checks_for(self, resources)
            try:
                return super().preprocess(nb, resources, km)
            finally:
                if self.checks is not None:
                    self.checks.close()

        def preprocess_cell(self, cell, resources, index):
            try:
                if self.checks is not None and checker.is_test(cell):
                    return self.checks.run(cell, resources, index, super().preprocess_cell)
                return super().preprocess_cell(cell, resources, index)
            except DeadKernelError:
                pass
            self._died.append(index)
            what = f"the kernel died while running this cell (it crashed or exited: {self._exit_description()})"
            if len(self._died) > _RESTARTS:
                cell.outputs = [self._died_output(f"{what}; it died {len(self._died)} times in this notebook, "
                                                  f"so the cells after it were not run")]
                raise DeadKernelError(f"the kernel died {len(self._died)} times")
            cell.outputs = [self._died_output(f"{what}; a new kernel ran the cells before it again and "
                                              f"grading went on")]
            self._restart(index)
            return cell, self.resources

        def _exit_description(self) -> str:
            process = getattr(getattr(self.km, "provisioner", None), "process", None)
            code = process.poll() if process is not None else None
            return f"exit status {code}" if code is not None else "no exit status"

        @staticmethod
        def _died_output(text: str):
            return NotebookNode(output_type="error", ename=KERNEL_DIED, evalue=text,
                                traceback=[f"{KERNEL_DIED}: {text}"])

        def _new_kernel(self) -> None:
            run_sync(self.km.restart_kernel)(now=True)
            self.kc.stop_channels()
            run_sync(self.async_start_new_kernel_client)()

        def _restart(self, index: int) -> None:
            """A new kernel, with the code cells before ``index`` run again (their outputs untouched)."""
            self._new_kernel()
            # A cell stopped at the time limit would only be stopped again.
            skipped = {KERNEL_DIED, (self.error_on_timeout or {}).get("ename")}
            for earlier, cell in enumerate(self.nb.cells[:index]):
                stopped = any(output.get("ename") in skipped for output in cell.get("outputs", []))
                if cell.cell_type != "code" or earlier in self._died or stopped:
                    continue
                try:
                    self.execute_cell(copy.deepcopy(cell), earlier, store_history=False)
                except DeadKernelError:  # it died again in a cell that ran before: go on without the rest
                    self._died.append(earlier)
                    self._new_kernel()
                    return

    return GradingExecute
