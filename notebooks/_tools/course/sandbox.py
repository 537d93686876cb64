"""Confined grading: the kernel that runs a student's notebook starts inside a bubblewrap sandbox.

A submission is code nobody has read. With `bubblewrap <https://github.com/containers/bubblewrap>`_
(``bwrap``, a Linux package) each grading kernel runs as an unprivileged user (uid 65534
in a user namespace of its own, every capability dropped, no further user namespace)
whoever grades, root included. It sees only what it needs, read-only: the system's
programs and libraries, a few files of ``/etc``, the Python installation, the venv and
the ``gbai`` package; nothing else of the host (no other checkout, no home folder, no
course folder, no socket). It may write only its working folder and a private
``/tmp``, both empty and gone when it ends. It has no network (its own empty
loopback), sees only its own processes, and starts with a fixed environment (none
of the teacher's variables). The kernel talks to nbgrader over Unix sockets in a
folder bound into the sandbox (TCP would be cut by the network namespace).

Limits per kernel: its address space per process (``prlimit --as``) and its number of
processes; where grading may write a cgroup (v1, as root) the processes and the memory
of all the kernel's processes together are capped there, which also tells when a cap was
reached; else the process limit is ``RLIMIT_NPROC`` inside its user namespace, which
counts its own processes only. A notebook's outputs are kept up to :data:`OUTPUT_MB`.

Where bwrap is missing or cannot start (macOS, a Linux that denies user namespaces)
grading still runs, unconfined, and says so.

:class:`GradingExecute` is the nbgrader ``Execute`` preprocessor that grading uses:
confined when it can be, and going on after a kernel that dies in a cell.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..common import ipc_prefix
from . import checker

__all__ = ["DEFAULT_MEMORY_GB", "KERNEL_DIED", "OUTPUT_MB", "PROCESSES", "Confinement", "confinement",
           "grading_execute", "sandbox_command"]

#: Address space a grading kernel may use, in GB. A notebook in the quick configuration
#: peaks far below it (numpy, numba and matplotlib loaded); a student's accidental
#: ``np.zeros(10**10)`` does not.
DEFAULT_MEMORY_GB = 4
#: Processes and threads one grading kernel may have: numpy's and numba's thread pools take one
#: per core, so a large machine needs a few hundred; a fork bomb stops here.
PROCESSES = 512
#: Output kept of one graded notebook, in MB: the committed notebooks hold less than 1 MB each,
#: figures included; what comes after is left out of the graded notebook and its feedback page.
OUTPUT_MB = 4
#: The error stored in a cell whose kernel died while running it.
KERNEL_DIED = "KernelDied"
#: How many times one notebook's kernel may die before the rest of it is left unrun.
_RESTARTS = 5
#: The user a confined kernel runs as, inside its user namespace ("nobody").
_UID = 65534
#: What a kernel's process sees of ``/etc``: the dynamic linker's cache, the time zone, fonts and the
#: alternatives that some of /usr/bin's commands link to.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "alternatives")
#: The system's own folders, shown as they are on the host: a folder, or a link into /usr.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: The cgroup v1 controllers that cap a kernel, with their limit file and the counter that says it was hit.
_CGROUP_FILES = {"pids": ("pids.max", "pids.events"), "memory": ("memory.limit_in_bytes", "memory.failcnt")}


@dataclass(frozen=True)
class Confinement:
    """How grading kernels run: ``bwrap`` is the sandbox command (None: unconfined, ``reason`` says why).

    ``readable`` are the folders shown read-only besides the system's: the Python
    installation, the venv and the ``gbai`` package. ``cgroups`` maps each cgroup v1
    controller (``pids``, ``memory``) grading may write to the folder where each kernel
    gets its own group (empty: none writable). ``capabilities`` is what the probe read
    from inside the sandbox (``CapEff``, ``Uid``).
    """

    bwrap: str | None
    memory_gb: float
    readable: tuple[str, ...] = ()
    cgroups: tuple[tuple[str, str], ...] = ()
    capabilities: str = ""
    reason: str = ""

    @property
    def processes_capped(self) -> str | None:
        """How the process limit binds: ``cgroup``, ``rlimit``, or None (root without a writable cgroup)."""
        if "pids" in dict(self.cgroups):
            return "cgroup"
        return "rlimit" if os.getuid() != 0 else None

    def describe(self) -> str:
        """One line for the console: whether answers run confined, how, and within which limits."""
        if not self.bwrap:
            return (f"answers run UNCONFINED ({self.reason}): they can read and write whatever you can; "
                    f"install bubblewrap to confine them (see the teaching guide)")
        processes = {"cgroup": f"{PROCESSES} processes (cgroup)",
                     "rlimit": f"{PROCESSES} processes (RLIMIT_NPROC in its user namespace)",
                     None: "no process limit (root, and no writable cgroup)"}[self.processes_capped]
        memory = (f"{self.memory_gb:g} GB of memory for all its processes together (cgroup) and per process"
                  if "memory" in dict(self.cgroups) else
                  f"{self.memory_gb:g} GB of memory per process (no writable cgroup: not for all together)")
        return (f"answers run confined (bubblewrap, as uid {_UID} in a user namespace, {self.capabilities}): "
                f"they see only the system's programs and libraries and Python, read-only, their notebook's "
                f"empty folder and a private /tmp, no network, no host socket, none of your environment "
                f"variables; per notebook at most {processes}, {memory}, {OUTPUT_MB} MB of output kept")


def _cgroup_parents() -> tuple[tuple[str, str], ...]:
    """The cgroup v1 folders (under this process's own groups) where grading may make a group per kernel."""
    parents = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return ()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in set(controllers.split(",")) & set(_CGROUP_FILES):
            parent = os.path.join("/sys/fs/cgroup", controller, path.lstrip("/"))
            probe = os.path.join(parent, f"gbai-probe-{uuid.uuid4().hex[:8]}")
            try:
                os.mkdir(probe)
                os.rmdir(probe)
            except OSError:
                continue
            parents.append((controller, parent))
    return tuple(sorted(parents))


def confinement(memory_gb: float = DEFAULT_MEMORY_GB) -> Confinement:
    """The sandbox for grading kernels: bwrap if it is on PATH and a Python starts in it, else unconfined.

    The probe runs this Python in the very sandbox a kernel gets, and reads its
    capabilities and user from inside. Raises ``ValueError`` for a memory limit that is
    not a positive number.
    """
    if (isinstance(memory_gb, bool) or not isinstance(memory_gb, (int, float)) or not memory_gb > 0
            or not math.isfinite(memory_gb)):
        raise ValueError(f"the memory limit must be a positive number of GB, got {memory_gb!r}")
    bwrap, prlimit = shutil.which("bwrap"), shutil.which("prlimit")
    if not sys.platform.startswith("linux"):
        return Confinement(None, memory_gb, reason=f"no bubblewrap on {sys.platform}")
    if bwrap is None or prlimit is None:
        return Confinement(None, memory_gb, reason=f"{'bwrap' if bwrap is None else 'prlimit'} not found on PATH")
    import gbai

    # The venv as its own path names it and as it resolves (a venv reached through a link).
    readable = [str(Path(sys.base_prefix).resolve()), sys.prefix, str(Path(sys.prefix).resolve()),
                str(Path(gbai.__file__).resolve().parent)]
    sandbox = Confinement(bwrap, memory_gb, _outermost(readable), _cgroup_parents())
    status = "import os; print(*(line for line in open('/proc/self/status') if line.startswith(('CapEff', 'Uid'))))"
    with tempfile.TemporaryDirectory(prefix="gbai-probe-") as folder:
        connection = os.path.join(folder, "connection.json")
        Path(connection).touch()
        try:
            probe = subprocess.run(sandbox_command(sandbox, [sys.executable, "-c", status], folder, folder, connection),
                                   capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            return Confinement(None, memory_gb, reason=f"bwrap does not start: {error}")
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
        return Confinement(None, memory_gb, reason=f"bwrap does not start: {said}")
    fields = dict(line.split(":", 1) for line in probe.stdout.replace("\n ", "\n").splitlines() if ":" in line)
    effective, uid = fields.get("CapEff", "?").strip(), fields.get("Uid", "?").split()[0]
    capabilities = "no capabilities" if int(effective or "1", 16) == 0 else f"capabilities {effective}"
    if uid != str(_UID):
        capabilities += f", uid {uid}"
    return Confinement(bwrap, memory_gb, sandbox.readable, sandbox.cgroups, capabilities)


def _outermost(paths: list[str]) -> tuple[str, ...]:
    """The paths, without those inside another one of them, outermost first."""
    kept: list[str] = []
    for path in sorted(set(paths), key=lambda item: (item.count(os.sep), item)):
        if not any(path == other or path.startswith(other.rstrip(os.sep) + os.sep) for other in kept):
            kept.append(path)
    return tuple(kept)


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


def _environment(sandbox: Confinement, private: str) -> dict[str, str]:
    """The whole environment of a confined kernel: where it writes (its private /tmp), where gbai is, no progress
    bars. ``private`` is its folder on the host (sockets, numba cache), bound in at the same path."""
    import gbai

    return {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "PYTHONPATH": str(Path(gbai.__file__).resolve().parents[1]), "LANG": "C.UTF-8", "TMPDIR": "/tmp",
            "HOME": "/tmp/home", "IPYTHONDIR": "/tmp/ipython", "MPLCONFIGDIR": "/tmp/matplotlib",
            "XDG_CACHE_HOME": "/tmp/cache", "GBAI_FIGURES_DIR": "/tmp/figures", "GBAI_CACHE_DIR": "/tmp/gbai-cache",
            "NUMBA_CACHE_DIR": os.path.join(private, "numba"), "TQDM_DISABLE": "1",
            # In its own process namespace the kernel's parent is process 1, which ipykernel takes
            # for "the client has gone" and exits; told that its parent is 1, it does not watch
            # (--die-with-parent ends it with the sandbox).
            "JPY_PARENT_PID": "1"}


def _allowed(sandbox: Confinement) -> list[str]:
    """The bwrap options that show the kernel the system's folders, a few /etc files and ``readable``, read-only."""
    command = []
    for path in _SYSTEM:
        if os.path.islink(path):
            command += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            command += ["--ro-bind", path, path]
    for name in _ETC:
        command += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for path in sandbox.readable:
        command += ["--ro-bind", path, path]
    return command


def sandbox_command(sandbox: Confinement, kernel: list[str], workdir: str, sockets: str, connection_file: str,
                    cgroups: tuple[str, ...] = ()) -> list[str]:
    """``kernel`` (a command) prefixed so that it runs in ``sandbox``, in an empty ``workdir`` it may write.

    ``sockets`` is the kernel's private folder (its Unix sockets, its numba cache), bound in
    writable; ``connection_file`` is bound in read-only. The command first joins the
    ``cgroups`` folders (one per controller) so that all its processes count there.
    Mounts build an empty root up: a private /tmp, the allowed folders (some may lie
    under /tmp), the working folder and the sockets, then the root goes read-only.
    """
    command = [sandbox.bwrap, "--unshare-user", "--uid", str(_UID), "--gid", str(_UID), "--cap-drop", "ALL",
               # The private /tmp first: a repository or a Python under /tmp is then shown inside it.
               "--disable-userns", "--clearenv", "--tmpfs", "/tmp", *_allowed(sandbox), "--dev", "/dev",
               "--proc", "/proc", "--ro-bind", connection_file, connection_file, "--tmpfs", workdir,
               "--bind", sockets, sockets, "--remount-ro", "/", "--unshare-net", "--unshare-pid", "--unshare-ipc",
               "--die-with-parent", "--chdir", workdir]
    for name, value in _environment(sandbox, sockets).items():
        command += ["--setenv", name, value]
    limit = int(sandbox.memory_gb * 2**30)
    # The interrupt at the time limit goes to the whole process group: bwrap itself would die
    # of it (and the kernel with it), so it starts with SIGINT ignored. The kernel catches
    # SIGINT while it runs a cell whatever it inherited. No --new-session: the interrupt
    # must reach the kernel.
    join = "".join(f"echo $$ > {shlex.quote(os.path.join(group, 'cgroup.procs'))} && " for group in cgroups)
    start = ["/bin/sh", "-c", join + 'trap "" INT; exec "$0" "$@"']
    # RLIMIT_NPROC set inside the user namespace counts that namespace's processes alone.
    return [*start, *command, shutil.which("prlimit") or "prlimit", f"--as={limit}", f"--nproc={PROCESSES}", "--",
            *kernel]


def _new_cgroups(sandbox: Confinement) -> tuple[str, ...]:
    """A cgroup of each writable controller for one kernel, its caps written: the folders, in ``sandbox.cgroups``'s
    order."""
    name = f"gbai-kernel-{uuid.uuid4().hex[:12]}"
    limits = {"pids": str(PROCESSES), "memory": str(int(sandbox.memory_gb * 2**30))}
    groups = []
    for controller, parent in sandbox.cgroups:
        folder = os.path.join(parent, name)
        os.mkdir(folder)
        Path(folder, _CGROUP_FILES[controller][0]).write_text(limits[controller])
        groups.append(folder)
    return tuple(groups)


def _remove_cgroups(groups: tuple[str, ...]) -> None:
    """Remove a kernel's cgroups once its last process is gone (the sandbox's end kills them all)."""
    for folder in groups:
        for _ in range(50):
            try:
                os.rmdir(folder)
                break
            except FileNotFoundError:
                break
            except OSError:  # processes still exiting
                time.sleep(0.1)


def _cgroup_hits(groups: tuple[str, ...]) -> dict[str, int]:
    """How often each controller of a kernel's cgroups refused it: forks past the limit, memory at the limit."""
    hits = {}
    for folder in groups:
        controller = "pids" if os.path.exists(os.path.join(folder, "pids.events")) else "memory"
        try:
            text = Path(folder, _CGROUP_FILES[controller][1]).read_text().split()
        except OSError:
            continue
        hits[controller] = int(text[-1])
    return hits


def _tasks_under(pid: int) -> int:
    """Processes and threads descending from ``pid`` (itself left out), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except (OSError, ValueError):
            continue
        children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    count, todo = 0, list(children.get(pid, []))
    while todo:
        child = todo.pop()
        todo += children.get(child, [])
        with contextlib.suppress(OSError):
            count += len(os.listdir(f"/proc/{child}/task"))
    return count


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
        #: The kernel's own cgroups (one folder per controller), kept across restarts.
        cgroups = Any(())

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
                self.cgroups = _new_cgroups(self.sandbox)
            return await super()._async_pre_start_kernel(**kw)

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
            if self.sandbox is not None and self.sandbox.bwrap:
                workdir = os.path.abspath(kw.get("cwd") or os.getcwd())
                kernel_cmd = sandbox_command(self.sandbox, kernel_cmd, workdir, os.path.dirname(self.private),
                                             os.path.abspath(self.connection_file), self.cgroups)
            await super()._async_launch_kernel(kernel_cmd, **kw)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart)
            if not restart:
                _remove_cgroups(self.cgroups)

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

        def confine(self, command: list[str]) -> list[str]:
            """``command`` (the checker's: it talks over its pipes) prefixed to run in this grading's sandbox, with a
            private folder of its own, as a kernel's; as it is when grading is unconfined."""
            if self.sandbox is None or not self.sandbox.bwrap:
                return command
            folder = Path(ipc_prefix()).parent
            (folder / "connection.json").write_text("{}")  # the sandbox binds one in, as for a kernel
            (folder / "work").mkdir()
            _copy_numba_cache(folder / "numba")
            # The sandbox sets the whole environment (bwrap --clearenv), as a kernel's.
            return sandbox_command(self.sandbox, command, str(folder / "work"), str(folder),
                                   str(folder / "connection.json"))

        def create_kernel_manager(self):
            self.kernel_manager_class = ConfinedKernelManager
            manager = super().create_kernel_manager()
            manager.sandbox = self.sandbox
            return manager

        def preprocess(self, nb, resources=None, km=None):
            self._died: list[int] = []
            self._output_bytes = self._cut = 0
            # The test cells run in a checker process, on plain data the kernel hands over (checker.py).
            self.checks = checker.checks_for(self, resources)
            try:
                return super().preprocess(nb, resources, km)
            finally:
                if self.checks is not None:
                    self.checks.close()

        def execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
            """nbclient's, then a note in the cell (its metadata ``gbai_limits`` and a line of output)
            for each cap the kernel reached while it ran."""
            before, cut = self._hits(), self._cut
            try:
                return super().execute_cell(cell, cell_index, execution_count, store_history)
            finally:
                after = self._hits()
                notes = [f"the kernel reached its limit of {PROCESSES} processes"] if after.get(
                    "pids", 0) > before.get("pids", 0) else []
                if after.get("memory", 0) > before.get("memory", 0):
                    notes.append(f"the kernel's processes together reached the memory limit of "
                                 f"{self.sandbox.memory_gb:g} GB")
                if self._cut and not cut:  # named where the output passed the limit, not in every cell after
                    notes.append(f"the notebook's output passed {OUTPUT_MB} MB: {self._cut / 2**20:.1f} MB of "
                                 f"this cell's output was cut, and the output of the cells after it")
                if notes:
                    cell.metadata.setdefault("gbai_limits", []).extend(notes)
                    # On stdout: nbgrader fails a test cell that writes to stderr.
                    cell.outputs.append(NotebookNode(output_type="stream", name="stdout",
                                                     text="".join(f"[grading: {note}]\n" for note in notes)))

        def _hits(self) -> dict[str, int]:
            """The kernel's cap counters: forks refused (``pids``), and memory at the limit (``memory``).

            Without a pids cgroup the process limit is RLIMIT_NPROC, which keeps no count: a
            kernel holding nearly its limit of processes and threads counts as having reached it.
            """
            groups = getattr(self.km, "cgroups", ())
            hits = _cgroup_hits(groups)
            process = getattr(getattr(self.km, "provisioner", None), "process", None)
            if process is not None and self.sandbox is not None and self.sandbox.bwrap and (
                    self.sandbox.processes_capped == "rlimit"):
                hits["pids"] = int(_tasks_under(process.pid) >= PROCESSES - 8)
            return hits

        def output(self, outs, msg, display_id, cell_index):
            """nbclient's, but past :data:`OUTPUT_MB` of a notebook's output, what comes is cut as it arrives,
            with a line saying so; errors and a test's result are kept, shortened, since they decide its score."""
            out = super().output(outs, msg, display_id, cell_index)
            if out is None:
                return out
            content = msg.get("content", {})
            if checker.MIME in content.get("data", {}):  # a test cell's answers go to the checker, not the notebook
                return out
            size = (len(content.get("text", "")) + sum(len(str(value)) for value in content.get("data", {}).values())
                    + sum(map(len, content.get("traceback", []))))
            self._output_bytes += size
            if self._output_bytes <= OUTPUT_MB * 2**20:
                return out
            graded = self.nb.cells[cell_index].get("metadata", {}).get("nbgrader", {}).get("grade")
            if out.output_type == "error" or (out.output_type == "execute_result" and graded):
                for key in ("evalue", "text"):
                    if isinstance(out.get(key), str):
                        out[key] = out[key][:1000]
                if "traceback" in out:
                    out.traceback = [line[:1000] for line in out.traceback[-20:]]
                for key, value in out.get("data", {}).items():
                    out.data[key] = value[:1000] if isinstance(value, str) else value
                return out
            outs.pop()  # the output just appended
            if not any(output.get("text", "").startswith("[grading: output cut") for output in outs):
                outs.append(NotebookNode(output_type="stream", name="stdout", text=(
                    f"[grading: output cut here, the notebook's output is kept up to {OUTPUT_MB} MB]\n")))
            self._cut += size
            return None

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
