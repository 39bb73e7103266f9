"""Which inputs, and which outputs: the plan of a batch run.

Inputs are files, folders (every session file in them, recursively, in sorted order so
runs are reproducible) or ``-``. Hidden files and folders are skipped: they are editor
droppings, VCS data, or our own temporary files (``outputs.TMP_MARK``).

**Outputs never land outside the output folder.** A mirrored path is built from the
input's path *relative to the folder it was found in*, then resolved (symlinks included)
and refused unless it is still inside the resolved output folder. How an output is written
(never half-written) is ``outputs``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

__all__ = ["Job", "Found", "PlanError", "SESSION_SUFFIXES", "expand_inputs", "plan_jobs", "check_paths", "resolve"]

#: What counts as a session file inside a folder. Given explicitly, any file is read.
SESSION_SUFFIXES = (".jsonl", ".json", ".ndjson")


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


@dataclass(frozen=True, slots=True)
class Found:
    """An input file found (:func:`expand_inputs`)."""

    #: The file (``-``: stdin).
    path: str
    #: The folder it was found in (its own folder for a file given by name).
    root: str
    #: Its path relative to ``root`` (what a mirrored output is named after).
    relative: str


def _hidden(name: str) -> bool:
    return name.startswith(".")


def expand_inputs(inputs: list[str], *, exclude: str | None = None,
                  missing: list[str] | None = None) -> list[Found]:
    """Every input file (:class:`Found`: its path, root and relative path), folders walked
    recursively.

    ``root`` is the folder a file was found in (its own folder for a file given by name);
    ``exclude`` is a folder not to descend into (the output folder, when it is inside an
    input folder, so a second run does not read its own output). An input that does not
    exist is added to ``missing`` when that list is given (the others are still done).

    Raises:
        PlanError: an input does not exist (and ``missing`` is None).
    """
    found: list[Found] = []
    excluded = os.path.realpath(exclude) if exclude else None
    for item in inputs:
        if item == "-":
            found.append(Found("-", "", "-"))
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
                    found.append(Found(os.path.join(folder, name), item, name if under == "." else os.path.join(under, name)))
        elif os.path.exists(item):
            found.append(Found(item, os.path.dirname(item), os.path.basename(item)))
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
        for each in found:
            path = each.path
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
        return [Job(f.path, "<stdin>" if f.path == "-" else f.path, "-") for f in found]
    if single and not os.path.isdir(output):
        path = found[0].path
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
    for each in found:
        path, rel = each.path, each.relative
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


