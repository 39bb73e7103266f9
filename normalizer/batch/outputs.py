"""Writing outputs safely, and the temporary files that makes.

**An output file is never half-written.** :class:`AtomicOutput` writes to a hidden
temporary file in the destination's own folder (so the final ``os.replace`` is a rename
on one file system, atomic on POSIX) and renames it only when everything was written;
any failure, ^C or SIGTERM removes the temporary file and leaves the destination -- for
``--in-place``, the original -- exactly as it was.

Temporary files are named ``.NAME.chatnorm-tmp.RUN.HOST.PID.XXXXXXXX``; one whose process
is gone is removed by the next run on its host that writes into its folder, whatever ran
it: one process, ``--jobs``, Dask or Ray.
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
    "AtomicOutput", "open_output", "make_folder", "keep_backup", "TMP_MARK",
    "remove_stale_temps", "remove_run_temps", "remove_live_temps", "temp_owner", "temp_prefix", "host_id",
    "keep_owner_and_mode",
]

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


@dataclass(frozen=True, slots=True)
class _Made:
    """A temporary file made (:func:`_create_temp`): its descriptor and path."""

    fd: int
    path: str


def _create_temp(folder: str, prefix: str, mode: int) -> _Made:
    """A new file ``folder/prefix + 8 random hex digits`` (the names ``_TMP_NAME`` knows),
    created exclusively (never an existing file or symlink); its descriptor and path."""
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{_NAMES.getrandbits(32):08x}")
        # Listed before it exists: a signal that lands between the file's creation and the
        # return still finds it in _LIVE_TEMPS (remove_live_temps), which the run removes.
        _LIVE_TEMPS.add(path)
        try:
            return _Made(os.open(path, _TEMP_FLAGS, mode), path)
        except FileExistsError:
            _LIVE_TEMPS.discard(path)  # another's file: never ours to remove
            continue
        except FileNotFoundError:
            # The folder went away since it was made (or was never made by us): once more.
            make_folder(folder, again=True)
            return _Made(os.open(path, _TEMP_FLAGS, mode), path)
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
        made = _create_temp(folder, prefix, 0o600 if mode_from is not None else 0o666)  # listed live
        self.tmp = made.path
        self.file: IO[bytes] = os.fdopen(made.fd, "wb")
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
