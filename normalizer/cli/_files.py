"""Files for the command line: which inputs, which outputs, and writing them safely.

Three promises live here:

* **Inputs** are files, folders (every session file in them, recursively, in sorted order so
  runs are reproducible) or ``-``. Hidden files and folders are skipped: they are editor
  droppings, VCS data, or our own temporary files (``.NAME.chatnorm-tmp.RUN.HOST.PID.XXXXXXXX``;
  one whose process is gone is removed by the next run on its host that writes into its
  folder, whatever ran it: one process, ``--jobs``, Dask or Ray).
* **Outputs never land outside the output folder.** A mirrored path is built from the
  input's path *relative to the folder it was found in*, then resolved (symlinks included)
  and refused unless it is still inside the resolved output folder.
* **An output file is never half-written.** :class:`AtomicOutput` writes to a hidden
  temporary file in the destination's own folder (so the final ``os.replace`` is a rename
  on one file system, atomic on POSIX) and renames it only when everything was written;
  any failure, ^C or SIGTERM removes the temporary file and leaves the destination -- for
  ``--in-place``, the original -- exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

__all__ = [
    "Job", "PlanError", "SESSION_SUFFIXES", "expand_inputs", "plan_jobs", "check_paths", "AtomicOutput", "open_output",
    "resolve", "make_folder",
    "keep_backup",
    "remove_stale_temps", "remove_run_temps", "temp_owner", "temp_prefix", "host_id", "keep_owner_and_mode",
]

#: What counts as a session file inside a folder. Given explicitly, any file is read.
SESSION_SUFFIXES = (".jsonl", ".json", ".ndjson")

#: Temporary outputs are named ``.<name>.chatnorm-tmp.<run>.<host>.<pid>.<random>`` next to
#: their destination (:func:`temp_prefix`, the one place that names them): the run that made
#: it (a Dask or Ray run's tag, else a token of the process), the host and pid namespace it
#: was made in (:func:`host_id`) and its process, so any later run on that host -- one
#: process, ``--jobs``, or a task of a distributed run -- can tell a file whose process died
#: (``kill -9``, a power cut, a killed cluster) from one still being written, and a retry of a
#: distributed run can find its own (:func:`remove_run_temps`).
TMP_MARK = ".chatnorm-tmp."
#: Exactly what :class:`AtomicOutput` makes (8 random hex digits), nothing looser: only files
#: matching it (or :data:`_OLD_TMP_NAME`) are ever removed as stale.
_TMP_NAME = re.compile(r"\..+\.chatnorm-tmp\.[a-z0-9]{1,32}\.([0-9a-f]{12})\.([1-9][0-9]{0,9})\.[0-9a-f]{8}")
#: What earlier versions named one process's file (``.<name>.chatnorm-tmp.<pid>.<random>``):
#: judged by its pid as they did. (Their Dask runs' files, ``<tag>-<pid>``, say no host: left.)
_OLD_TMP_NAME = re.compile(r"\..+\.chatnorm-tmp\.([1-9][0-9]{0,9})\.[a-z0-9_]{8}")


class PlanError(Exception):
    """The inputs and outputs asked for do not fit together (a usage error: exit 2)."""


@dataclass(slots=True)
class Job:
    """One input and where its repaired version goes.

    Attributes:
        input: a path, or ``"-"`` for stdin.
        name: how messages name it (``<stdin>`` for ``-``).
        output: a path, or ``"-"`` for stdout.
        in_place: the output replaces the input (keep its permissions).
    """

    input: str
    name: str
    output: str
    in_place: bool = False


def _hidden(name: str) -> bool:
    return name.startswith(".")


def expand_inputs(inputs: list[str], *, exclude: str | None = None,
                  missing: list[str] | None = None) -> list[tuple[str, str, str]]:
    """``(path, root, relative path)`` for every input file, folders walked recursively.

    ``root`` is the folder a file was found in (its own folder for a file given by name);
    ``exclude`` is a folder not to descend into (the output folder, when it is inside an
    input folder, so a second run does not read its own output). An input that does not
    exist is added to ``missing`` when that list is given (the others are still done).

    Raises:
        PlanError: an input does not exist (and ``missing`` is None).
    """
    found: list[tuple[str, str, str]] = []
    excluded = os.path.realpath(exclude) if exclude else None
    for item in inputs:
        if item == "-":
            found.append(("-", "", "-"))
            continue
        if os.path.isdir(item):
            # followlinks=False: a symlink loop must not make the walk endless.
            for folder, dirs, files in os.walk(item):
                dirs[:] = sorted(
                    d for d in dirs
                    if not _hidden(d) and os.path.realpath(os.path.join(folder, d)) != excluded
                )
                # (relative to the input folder: the folder's part once, not relpath per file)
                under = os.path.relpath(folder, item)
                for name in sorted(files):
                    if _hidden(name) or not name.endswith(SESSION_SUFFIXES):
                        continue
                    found.append((os.path.join(folder, name), item, name if under == "." else os.path.join(under, name)))
        elif os.path.exists(item):
            found.append((item, os.path.dirname(item), os.path.basename(item)))
        elif missing is not None:
            missing.append(item)
        else:
            raise PlanError(f"{item}: no such file or folder")
    return found


def _inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or below it (both resolved: absolute, normalised)."""
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def resolve(path: str, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)``, each folder resolved once (``folders`` keeps them):
    a plan of many files in few folders resolves a folder per folder, and a file with one
    ``lstat`` (only a symlink is resolved further)."""
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return os.path.realpath(path)
    real = folders.get(head)
    if real is None:
        real = folders[head] = os.path.realpath(head or os.curdir)
    candidate = os.path.join(real, tail)
    return os.path.realpath(candidate) if os.path.islink(candidate) else candidate


def _renamed(rel: str, to: str) -> str:
    # The output's suffix says what it holds; other suffixes are the user's business.
    root, ext = os.path.splitext(rel)
    if ext in (".json", ".jsonl", ".ndjson"):
        return root + (".json" if to == "json" else ".jsonl")
    return rel


def plan_jobs(inputs: list[str], *, output: str | None, in_place: bool, to: str,
              missing: list[str] | None = None) -> list[Job]:
    """Pair every input file with its output.

    * ``--in-place``: each file is its own output (stdin cannot be).
    * ``-o PATH`` with one input file: PATH is the output file (or, when PATH is an existing
      folder, the file of the same name in it).
    * ``-o DIR`` with several inputs or a folder: the input tree is mirrored in DIR.
    * no ``-o``: stdout -- one input only (several conversations on one stream would run
      together), unless ``--to finetune`` (one conversation per line) is asked for.

    An input that does not exist goes to ``missing`` when that list is given (see
    :func:`expand_inputs`): one missing file does not stop the others.

    Raises:
        PlanError: inputs and outputs that do not fit, or an output outside its folder.
    """
    single = len(inputs) == 1 and (inputs[0] == "-" or not os.path.isdir(inputs[0]))
    exclude = output if output and output != "-" and not single else None
    found = expand_inputs(inputs, exclude=exclude, missing=missing)
    if not found:
        if missing:
            return []
        raise PlanError(f"no session files ({', '.join(SESSION_SUFFIXES)}) in {', '.join(inputs)}")
    jobs: list[Job] = []
    if in_place:
        if output is not None:
            raise PlanError("--in-place and --output exclude each other")
        for path, _, _ in found:
            if path == "-":
                raise PlanError("--in-place needs files, not stdin")
            if not os.path.isfile(path):
                raise PlanError(f"{path}: not a regular file; --in-place can only replace files")
            # A symlink is written through: the temporary file goes next to the real file and
            # is renamed over it, so the link stays a link and its target gets the repair.
            jobs.append(Job(path, path, os.path.realpath(path), in_place=True))
        return jobs
    if output is None or output == "-":
        if len(found) > 1 and to != "finetune":
            raise PlanError(
                f"{len(found)} input files and one output stream: give -o DIR (mirrors the inputs), "
                "--in-place, or --to finetune (one conversation per line)"
            )
        return [Job(p, "<stdin>" if p == "-" else p, "-") for p, _, _ in found]
    if single and not os.path.isdir(output):
        path = found[0][0]
        _refuse_same(path, output)
        return [Job(path, "<stdin>" if path == "-" else path, output)]
    if os.path.exists(output) and not os.path.isdir(output):
        raise PlanError(f"{output}: exists and is not a folder (several inputs need -o DIR)")
    if not os.path.exists(output) and output.endswith(SESSION_SUFFIXES):
        # A new folder named like a file is never what was meant: say so instead of making it.
        raise PlanError(
            f"-o {output}: {len(found)} input files are written into a folder, and {output} names a file. "
            f"Give a folder (-o {os.path.splitext(output)[0]}/), or one input per run"
        )
    base = os.path.realpath(output)
    seen: dict[str, str] = {}
    folders: dict[str, str] = {}
    for path, _, rel in found:
        if path == "-":
            raise PlanError("stdin cannot be mirrored into a folder; give it alone with -o FILE")
        target = os.path.join(output, _renamed(rel, to))
        # Resolve what exists of it (a symlinked sub-folder of DIR included) before judging.
        key = resolve(target, folders)
        if os.path.isabs(rel) or not _inside(key, base):
            raise PlanError(f"{path}: its output {target} would be outside {output}; refusing to write it")
        _refuse_same(path, target)
        if key in seen:
            raise PlanError(f"{seen[key]} and {path} would both be written to {target}")
        seen[key] = path
        jobs.append(Job(path, path, target))
    return jobs


def _refuse_same(path: str, target: str) -> None:
    if path != "-" and os.path.exists(target) and os.path.samefile(path, target):
        raise PlanError(f"{target} is the input itself; use --in-place to replace it")


#: What makes two paths the same file (:func:`_identity`): an existing file's device and
#: inode as one int, or the resolved path of a file still to be made.
Identity = int | str


def _identity(path: str, folders: dict[str, str] | None = None) -> Identity | None:
    """What makes two paths the same file: the inode of an existing file (so ``./x``, a
    symlink and a hard link all agree), the resolved path of one still to be created.
    None for what is not a file we would replace (a device, a FIFO: ``/dev/null`` can take
    several outputs at once). ``folders``: as :func:`resolve` takes it."""
    try:
        st = os.stat(path)
    except OSError:  # not there yet (or not reachable): judged by where it would be
        return resolve(path, {} if folders is None else folders)
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return st.st_dev << 64 | st.st_ino  # (one int: a tuple costs three objects a file)
    return None


def _stream_identity(stream: object) -> Identity | None:
    """The inode behind stdin or stdout when it is a regular file (``< s.jsonl``,
    ``> out.jsonl``): a file like any other, which an output must not overwrite."""
    try:
        st = os.fstat(stream.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return st.st_dev << 64 | st.st_ino if stat.S_ISREG(st.st_mode) else None


#: Who writes an output, in check_paths' table: job i's output is 2 i, its backup 2 i + 1.
_STDOUT = -1
_REPORT = -2


def check_paths(jobs: list[Job], inputs: list[str], report: str | None, backup: str | None = None) -> None:
    """Refuse, before anything is written, any output that is an input or another output.

    Outputs are every job's output, the report, each ``--backup`` of an in-place file, and
    stdout when it is a file and is written
    to; inputs are every file read (stdin too, when it is a file) and every folder given.
    ``--in-place`` outputs are their own inputs by design, but each may be written once
    only, and nothing else may land on them. Temporary files need no check: each is
    created exclusively under a new name (``_create_temp``), and the report's spool lives in a private temporary folder.

    What it holds is two tables the size of the plan, of identities and job indices (an int
    each, or an output's resolved path): the sentence naming the files is made only for
    the one refused.

    Raises:
        PlanError: two of them are the same file (one line: which, and what to do).
    """
    import sys

    if report is not None and report != "-" and os.path.isdir(report):
        raise PlanError(f"--report {report}: is a folder; give the report a file name")
    reads: dict[Identity, int | str] = {}  # -> the job reading it, or the folder given
    for item in inputs:
        if item != "-" and os.path.isdir(item):
            key = _identity(item)
            if key is not None:
                reads.setdefault(key, item)
    for i, job in enumerate(jobs):
        key = _stream_identity(sys.stdin) if job.input == "-" else _identity(job.input)
        if key is not None:
            reads.setdefault(key, i)
    writes: dict[Identity, int] = {}  # -> who writes it (2 i, 2 i + 1, _STDOUT, _REPORT)

    def what(code: int) -> str:
        if code == _STDOUT:
            return "stdout"
        if code == _REPORT:
            return f"the report ({report})"
        job = jobs[code // 2]
        if code % 2:
            return f"the backup of {job.name} ({job.output}{backup})"
        return f"the output of {job.name} ({job.output})"

    def claim(key: Identity | None, code: int, in_place: bool) -> None:
        if key is None:
            return
        if key in reads and not in_place:
            read = reads[key]
            todo = "Send stdout elsewhere" if code == _STDOUT else "Give it another path"
            raise PlanError(f"{what(code)} is the input {read if isinstance(read, str) else jobs[read].name}; "
                            f"writing it would destroy the input. {todo}")
        if key in writes:
            raise PlanError(f"{what(code)} and {what(writes[key])} are the same file; give each output its own path")
        writes[key] = code

    folders: dict[str, str] = {}
    for i, job in enumerate(jobs):
        if job.output != "-":
            claim(_identity(job.output, folders), 2 * i, job.in_place)
        if backup is not None and job.in_place:
            claim(_identity(job.output + backup, folders), 2 * i + 1, False)
    if any(job.output == "-" for job in jobs):
        claim(_stream_identity(sys.stdout), _STDOUT, False)
    if report is not None and report != "-":
        claim(_identity(report), _REPORT, False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or not a pid we can ask about): keep its file
    return True


_CLEANED: set[str] = set()
_CLEANED_LOCK = threading.Lock()


def host_id() -> str:
    """Where a pid means what it says: this host (its name) and pid namespace (a container
    has its own pids, maybe under the host's name), as 12 hex digits. Files made under
    another host id are never judged by their pid here."""
    if not _HOST:
        import hashlib

        try:
            ns = os.readlink("/proc/self/ns/pid")
        except OSError:
            ns = ""  # not Linux: the host name alone
        node = os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
        _HOST.append(hashlib.sha256(f"{node}\0{ns}".encode()).hexdigest()[:12])
    return _HOST[0]


_HOST: list[str] = []
#: This process's run token, for the files of a run that has no tag of its own (one
#: process, or a ``--jobs`` worker): 'p' and 10 hex digits.
_RUN = f"p{random.Random().getrandbits(40):010x}"


def temp_prefix(path: str) -> str:
    """The name of a temporary output for ``path``, but its 8 random hex digits:
    ``.<name>.chatnorm-tmp.<run>.<host>.<pid>.`` (see :data:`TMP_MARK`)."""
    run = getattr(_OWNER, "tag", None) or _RUN
    return f".{os.path.basename(path)}{TMP_MARK}{run}.{host_id()}.{os.getpid()}."


def _stale_pid(name: str) -> int | None:
    """The pid of the process that made our temporary file ``name``, when it was made on this
    host (else None: not ours to judge, or not ours at all)."""
    match = _TMP_NAME.fullmatch(name)
    if match is not None:
        return int(match.group(2)) if match.group(1) == host_id() else None
    match = _OLD_TMP_NAME.fullmatch(name)
    return int(match.group(1)) if match is not None else None


def remove_stale_temps(folder: str, *, again: bool = False) -> list[str]:
    """Remove our temporary files in ``folder`` whose process is gone; once per folder per
    run (a folder of many outputs is not re-listed for each), unless ``again`` (after a
    worker process died). Returns what was removed.

    Only regular files (not symlinks) named exactly like ours, made on this host (and pid
    namespace), whose pid is not a live process, go; anything else -- a live run's file,
    another host's, a file we did not make -- stays. Every run does this, a task of a
    distributed run too: a killed run's files are removed by the next one on their host."""
    if folder in _CLEANED and not again:
        # The common case, every file after a folder's first: no realpath. (A relative
        # folder named again after a chdir is taken as cleaned: this is housekeeping, and a
        # stale file it misses is removed by the next run that writes there.)
        return []
    key = os.path.realpath(folder)
    with _CLEANED_LOCK:
        if key in _CLEANED and not again:
            _CLEANED.add(folder)
            return []
        _CLEANED.update((key, folder))
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed  # unreadable folder: writing into it will say what is wrong
    for entry in entries:
        if TMP_MARK not in entry.name:
            continue
        pid = _stale_pid(entry.name)
        if pid is None or pid == os.getpid():
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or _alive(pid):
                continue
            os.unlink(entry.path)
        except OSError:
            continue  # gone already, or not ours to remove: not worth failing a run over
        removed.append(entry.path)
    return removed


#: The owner tag of the temporary files this thread makes (:func:`temp_owner`).
_OWNER = threading.local()


@contextlib.contextmanager
def temp_owner(tag: str) -> Iterator[None]:
    """Within the block, this thread's temporary outputs carry the run's ``tag`` instead of
    the process's token (:func:`temp_prefix`): for a task of a distributed run, whose
    retries and client remove the run's own files by it (:func:`remove_run_temps`: an
    attempt whose worker died, on whatever host; a file that failed or was never finished)."""
    if not re.fullmatch(r"[a-z0-9]{1,32}", tag):
        raise ValueError(f"a temp owner tag is 1 to 32 lowercase letters and digits, not {tag!r}")
    _OWNER.tag = tag
    try:
        yield
    finally:
        _OWNER.tag = None


def remove_run_temps(path: str, tag: str) -> list[str]:
    """Remove the temporary files of run ``tag`` for the output ``path`` (what an attempt
    that died left behind, on any host). Returns what was removed."""
    folder = os.path.dirname(path) or "."
    prefix = f".{os.path.basename(path)}{TMP_MARK}{tag}."
    removed: list[str] = []
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(prefix)]
    except OSError:
        return removed
    for entry in entries:
        if not _TMP_NAME.fullmatch(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(entry.path)
        except OSError:
            continue
    return removed


#: Temporary files this process has made and not yet committed or removed. A signal can
#: land anywhere -- even between a temporary file's creation and the line that keeps its name -- so besides
#: each output's own abort(), the command removes whatever is still listed here when it is
#: interrupted (:func:`remove_live_temps`).
_LIVE_TEMPS: set[str] = set()


def remove_live_temps() -> None:
    """Remove every temporary output not committed yet (the end of an interrupted run)."""
    for tmp in list(_LIVE_TEMPS):
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        _LIVE_TEMPS.discard(tmp)


#: Output folders this process has made (or found): not made again for each file in them.
_FOLDERS_MADE: set[str] = set()
#: Where temporary names come from: a generator of our own (as tempfile's), so that naming
#: a file never moves the sequence of a caller who seeded the random module.
_NAMES = random.Random()
#: What O_EXCL creation of a temporary file opens it with.
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def make_folder(folder: str, *, again: bool = False) -> None:
    """Make ``folder`` (and its parents) unless this process did already; ``again``: it
    went away since."""
    if again or folder not in _FOLDERS_MADE:  # (once per folder: three system calls a file)
        os.makedirs(folder, exist_ok=True)
        _FOLDERS_MADE.add(folder)


def _create_temp(folder: str, prefix: str, mode: int) -> tuple[int, str]:
    """A new file ``folder/prefix + 8 random hex digits`` (the names ``_TMP_NAME`` knows),
    created exclusively (never an existing file or symlink); its descriptor and path."""
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{_NAMES.getrandbits(32):08x}")
        try:
            return os.open(path, _TEMP_FLAGS, mode), path
        except FileExistsError:
            continue
        except FileNotFoundError:
            # The folder went away since it was made (or was never made by us): once more.
            make_folder(folder, again=True)
            return os.open(path, _TEMP_FLAGS, mode), path
    raise FileExistsError(17, "no free temporary file name", os.path.join(folder, prefix))


def keep_owner_and_mode(path: str, st: os.stat_result) -> None:
    """Give ``path`` the owner, group and permission bits of the file ``st`` describes, as
    ``sed -i`` does for the file it replaces: a root run on a user's ``0640`` session must
    not leave it ``root:root``, which the user's own tool could then not read. The owner
    first (``chown`` clears the set-id bits), then the mode. Not being allowed to give a
    file away (EPERM: not root, or a group one is not in) is no failure: the file is then
    the runner's, as any file it writes."""
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()) and hasattr(os, "chown"):
        try:
            os.chown(path, st.st_uid, st.st_gid)
        except PermissionError:
            try:
                os.chown(path, -1, st.st_gid)  # the group alone may still be ours to give
            except PermissionError:
                pass
    os.chmod(path, stat.S_IMODE(st.st_mode))


class AtomicOutput:
    """A binary file that appears at ``path`` only when :meth:`commit` is called.

    >>> with AtomicOutput(path) as f:     # doctest: +SKIP
    ...     f.write(b"...")
    ...     f.commit()                    # without this, nothing appears

    Leaving the block without ``commit()`` (an exception, ^C) deletes the temporary file.
    ``mode_from`` copies the owner, group and permission bits of a file being replaced
    (``--in-place``: :func:`keep_owner_and_mode`)
    """

    def __init__(self, path: str, *, mode_from: str | None = None) -> None:
        self.path = path
        folder = os.path.dirname(path) or "."
        make_folder(folder)
        remove_stale_temps(folder)
        prefix = temp_prefix(path)
        # A new file gets the usual mode: 0666 less the umask, which the kernel applies.
        # (mkstemp makes 0600, and the umask can only be read by setting it: two system
        # calls a file, and a moment in which another thread's new files get umask 0.)
        fd, self.tmp = _create_temp(folder, prefix, 0o600 if mode_from is not None else 0o666)
        _LIVE_TEMPS.add(self.tmp)
        self.file: IO[bytes] = os.fdopen(fd, "wb")
        self._done = False
        if mode_from is not None:
            keep_owner_and_mode(self.tmp, os.stat(mode_from))

    def write(self, data: bytes) -> int:
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()

    def commit(self, before_replace: Callable[[], None] | None = None) -> None:
        """Flush, sync and rename over the destination; ``before_replace`` is called right
        before the rename (what it raises stops it: the temporary file is then removed by
        :meth:`abort`, and the destination left as it is)."""
        self.file.flush()
        os.fsync(self.file.fileno())  # the rename must not outrun the data (power loss)
        self.file.close()
        if before_replace is not None:
            before_replace()
        os.replace(self.tmp, self.path)
        _LIVE_TEMPS.discard(self.tmp)
        self._done = True

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self.file.close()
        except OSError:
            pass  # ENOSPC again on the final flush: the file is going away anyway
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass
        _LIVE_TEMPS.discard(self.tmp)

    def __enter__(self) -> AtomicOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


class _StreamOutput:
    """An output that is not a regular file (``/dev/null``, a FIFO, ``/dev/stdout``):
    written straight through. Renaming a temporary file over it would replace the device
    or pipe itself (as root, ``/dev/null`` would become a plain file)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: IO[bytes] = open(path, "wb")  # noqa: SIM115 - closed by commit/abort

    def write(self, data: bytes) -> int:
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()

    def commit(self) -> None:
        self.file.close()

    def abort(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass

    def __enter__(self) -> _StreamOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


def open_output(path: str, *, mode_from: str | None = None) -> AtomicOutput | _StreamOutput:
    """:class:`AtomicOutput` for a file (new or existing); straight writes for anything else
    that already exists at ``path`` (a device or a pipe cannot be half-written, nor renamed over)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return AtomicOutput(path, mode_from=mode_from)
    if stat.S_ISREG(st.st_mode):
        return AtomicOutput(path, mode_from=mode_from)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "is a folder", path)
    return _StreamOutput(path)


def keep_backup(path: str, suffix: str) -> str:
    """Keep the file at ``path`` as ``path + suffix`` before it is replaced (``--backup``):
    a hard link to it when the file system allows (the original bytes, no copy), else a
    copy with its owner, group and mode. A backup already there is replaced. Returns the
    backup's path."""
    backup = path + suffix
    if os.path.lexists(backup):
        os.unlink(backup)
    try:
        os.link(path, backup)  # (the same inode: its owner and mode too)
    except OSError:
        shutil.copy2(path, backup)
        keep_owner_and_mode(backup, os.stat(path))
    return backup
