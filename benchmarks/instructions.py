"""Instructions per message (valgrind Ir) of the library's hot paths: figures that repeat.

``python -m benchmarks.instructions [--quick] [--probes a,b,...] [--workloads bench,short,real,clean]
[--jobs 2] [--messages N] [--checkpoint-scale 25] [--compiled PYTHON] [--out benchmarks/results]``

Wall-clock timings on a shared 2-core machine move by tens of percent from one run to the
next; the number of instructions a program executes does not (two runs agree to a few
instructions per message). Every probe runs twice under ``valgrind --tool=cachegrind
--cache-sim=no``, as a whole process: once over ``S`` messages and once over ``B = 2S``, with
the same setup in both (``benchmarks/_instr_probe.py``). The figure is

    Ir per message = (Ir(B) - Ir(S)) / (B - S)

so interpreter start-up, imports, building the messages, the first calls' warm-up and the
end of the stream cancel out. The CLI and the copy are the commands themselves under
valgrind (``--trace-children=no``), on a file of ``S`` lines and one of ``B`` lines.

Probes: ``floor`` (orjson loads+dumps), ``core`` (``repair`` drained, default options),
``core_novalidate`` (``validate=False``; ``validate`` is the row core - core_novalidate, and
asking for ``validate`` runs both), ``core_norecords`` (``max_records=0``), ``profile:NAME``
for every built-in profile (``profiles`` asks for all of them), ``sync_iter`` (a Python for
loop over ``repair``), ``async_asyncio``/``async_trio`` (``arepair`` under ``anyio.run``),
``async_bare_asyncio``/``async_bare_trio`` (a bare async generator around ``feed``/``close``),
``cli`` (``python -m normalizer repair FILE > /dev/null``) and ``copy`` (``python -m
benchmarks._copy FILE > /dev/null``, the CLI's floor). With ``--compiled PYTHON`` (an
interpreter with the compiled build installed: ``.ci/compiled``'s steps), ``core_compiled``
and ``cli_compiled`` measure the ``core`` and ``cli`` probes again in that build (run with
``-P`` and without the checkout on ``PYTHONPATH``; the core probe refuses a build whose
core is not compiled).

``--checkpoint-scale K`` (default 25) stretches the async adapter's time-based checkpoint
(every 5 ms of holding the event loop) by ``K`` in the probe: valgrind runs the program about
50 times slower, so an unscaled interval would checkpoint far more often per message than a
native run. The async rows are the only ones whose count depends (slightly) on time.

Writes ``instructions.json`` (every count, the sizes, valgrind's and Python's versions, the
commit) and ``instructions.md`` (the tables) into ``--out``. Exit code 2 when valgrind is
not installed.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from ._instr_probe import FIXED_PROBES, PROFILE_PREFIX
from .workload import WORKLOADS, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results"
DEFAULT_MESSAGES = 2000
QUICK_MESSAGES = 500
DEFAULT_WORKLOADS = ("bench", "short", "real", "clean")
SUBPROCESS_PROBES = ("cli", "copy")
#: Run by the interpreter given with ``--compiled``, whose compiled build they measure.
COMPILED_PROBES = ("core_compiled", "cli_compiled")
#: What a full run measures, in table order (``profiles`` expands to every built-in profile).
DEFAULT_PROBES = (
    "floor", "validate", "core", "core_norecords", "bare_feed", "profiles", "sync_iter", "async_asyncio",
    "async_trio", "async_bare_asyncio", "async_bare_trio", "cli", "copy",
)  # fmt: skip
QUICK_PROBES = ("floor", "validate", "core", "sync_iter", "async_asyncio", "async_bare_asyncio", "cli", "copy")
CHECKPOINT_SCALE = 25.0

LABELS = {
    "floor": "orjson loads+dumps (floor)",
    "validate": "validation (core − core_novalidate)",
    "core": "repair() drained, defaults",
    "core_novalidate": "repair(validate=False)",
    "core_norecords": "repair(max_records=0)",
    "bare_feed": "the least a message-at-a-time feed does (no repair)",
    "sync_iter": "for m in repair(): pass",
    "async_asyncio": "arepair(), asyncio",
    "async_trio": "arepair(), trio",
    "async_bare_asyncio": "bare async gen around feed, asyncio",
    "async_bare_trio": "bare async gen around feed, trio",
    "cli": "python -m normalizer repair FILE",
    "copy": "python -m benchmarks._copy FILE",
    "core_compiled": "repair() drained, compiled build (mypyc)",
    "cli_compiled": "the CLI, compiled build (mypyc)",
}


class UsageError(Exception):
    """A command-line mistake (exit code 2 through argparse)."""


# --------------------------------------------------------------------------- parsing valgrind


_SUMMARY = re.compile(r"^(?:summary|totals):\s*(.*)$", re.MULTILINE)
_EVENTS = re.compile(r"^events:\s*(.*)$", re.MULTILINE)
_STDERR_IR = re.compile(r"^==\d+==\s+(?:I\s+refs|Collected)\s*:\s*([\d,]+)", re.MULTILINE)


def parse_ir(text: str) -> int:
    """The total instruction count (Ir) in cachegrind's or callgrind's output.

    Reads an out file (its ``events:`` line names the columns; ``summary:`` or callgrind's
    ``totals:`` holds the totals) or valgrind's own report on stderr (``I   refs:`` or
    callgrind's ``Collected :``). Raises ``ValueError`` when there is none.
    """
    summary = _SUMMARY.findall(text)
    if summary:
        events = _EVENTS.search(text)
        names = events.group(1).split() if events else ["Ir"]
        if "Ir" not in names:
            raise ValueError(f"no Ir event among {names}")
        return int(summary[-1].split()[names.index("Ir")])
    found = _STDERR_IR.findall(text)
    if found:
        return int(found[-1].replace(",", ""))
    raise ValueError("no instruction count (summary:, totals:, I refs:) in valgrind's output")


def per_message(ir_small: int, ir_big: int, n_small: int, n_big: int) -> float:
    """Instructions per message by difference: ``(Ir(big) - Ir(small)) / (big - small)``."""
    if n_big <= n_small:
        raise ValueError(f"the big run must measure more messages ({n_big} <= {n_small})")
    return (ir_big - ir_small) / (n_big - n_small)


def valgrind_version(valgrind: str) -> str:
    done = subprocess.run([valgrind, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or done.stderr.strip()


# --------------------------------------------------------------------------- probes and ratios


def builtin_profiles() -> list[str]:
    """The library's built-in profiles, in registry order, without ``default`` (the core row)."""
    from normalizer import PROFILES

    return [name for name in PROFILES if name != "default"]


def expand_probes(names: Iterable[str], profiles: Sequence[str], compiled: bool = False) -> list[str]:
    """The probes to run for these names, in table order, each once.

    ``validate`` is a derived row: it runs ``core`` and ``core_novalidate``. ``profiles``
    expands to ``profile:NAME`` for every built-in profile. The compiled build's probes
    need ``compiled`` (an interpreter given with ``--compiled``).
    """
    out: list[str] = []
    for name in names:
        if name == "validate":
            expanded = ["core", "core_novalidate"]
        elif name == "profiles":
            expanded = [PROFILE_PREFIX + p for p in profiles]
        elif name.startswith(PROFILE_PREFIX):
            if name[len(PROFILE_PREFIX) :] not in profiles:
                raise UsageError(f"unknown profile in {name!r}; built-in: {', '.join(profiles)}")
            expanded = [name]
        elif name in FIXED_PROBES or name in SUBPROCESS_PROBES:
            expanded = [name]
        elif name in COMPILED_PROBES:
            if not compiled:
                raise UsageError(f"probe {name!r} measures the compiled build: name its interpreter with --compiled PYTHON")
            expanded = [name]
        else:
            known = ", ".join([*FIXED_PROBES, *SUBPROCESS_PROBES, *COMPILED_PROBES, "validate", "profiles", "profile:NAME"])
            raise UsageError(f"unknown probe {name!r}; the probes are: {known}")
        out.extend(p for p in expanded if p not in out)
    return out


def row_order(values: Mapping[str, object]) -> list[str]:
    """The rows of the table for these probes: measured ones plus ``validate`` when derivable."""
    fixed = ["floor", "validate", "core", "core_novalidate", "core_norecords", "core_compiled", "bare_feed"]
    profiles = [k for k in values if k.startswith(PROFILE_PREFIX)]
    tail = ["sync_iter", "async_asyncio", "async_trio", "async_bare_asyncio", "async_bare_trio", "cli", "cli_compiled",
            "copy"]
    return [k for k in fixed + profiles + tail if k in values]


def derive(values: Mapping[str, float | None]) -> dict[str, float | None]:
    """Add the derived rows (``validate`` = core - core_novalidate) to one workload's figures."""
    out = dict(values)
    core, novalidate = values.get("core"), values.get("core_novalidate")
    if core is not None and novalidate is not None:
        out["validate"] = core - novalidate
    return out


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def ratios(values: Mapping[str, float | None]) -> list[dict[str, Any]]:
    """The ratios of one workload's Ir per message (derived rows included), in table order.

    Each is ``{"key", "label", "value"}`` (``value`` None when a side is missing). Ratios
    of costs, except ``copy ÷ cli``, which is the throughput ratio's analogue (the CLI's
    speed as a share of a bare copy's). ``cli_glue`` is in instructions per message.
    """
    v = derive(values)
    out: list[dict[str, Any]] = []

    def add(key: str, label: str, value: float | None) -> None:
        out.append({"key": key, "label": label, "value": value})

    add("core/floor", "core ÷ floor", _div(v.get("core"), v.get("floor")))
    if "core_compiled" in v:
        add("core_compiled/floor", "compiled core ÷ floor", _div(v.get("core_compiled"), v.get("floor")))
    if "bare_feed" in v:
        add("bare_feed/floor", "bare feed ÷ floor (the machinery's least)", _div(v.get("bare_feed"), v.get("floor")))
    add("validate/core", "validate ÷ core (validation's share of the core)", _div(v.get("validate"), v.get("core")))
    add("core_norecords/core", "core_norecords ÷ core", _div(v.get("core_norecords"), v.get("core")))
    profiles = [k for k in v if k.startswith(PROFILE_PREFIX)]
    for key in profiles:
        add(f"{key}/core", f"{key[len(PROFILE_PREFIX):]} ÷ core", _div(v.get(key), v.get("core")))
    measured = [(value, k) for k in profiles if (value := v[k]) is not None]
    if measured and v.get("core"):
        worst, name = max(measured)
        add("slowest_profile/core", f"slowest profile ({name[len(PROFILE_PREFIX):]}) ÷ core", _div(worst, v["core"]))
    for backend in ("asyncio", "trio"):
        add(f"async_{backend}/sync_iter", f"async ({backend}) ÷ sync_iter",
            _div(v.get(f"async_{backend}"), v.get("sync_iter")))  # fmt: skip
    for backend in ("asyncio", "trio"):
        add(f"async_{backend}/async_bare_{backend}", f"adapter ÷ bare async generator ({backend})",
            _div(v.get(f"async_{backend}"), v.get(f"async_bare_{backend}")))  # fmt: skip
    for backend in ("asyncio", "trio"):
        add(f"async_bare_{backend}/sync_iter", f"bare async generator ({backend}) ÷ sync_iter",
            _div(v.get(f"async_bare_{backend}"), v.get("sync_iter")))  # fmt: skip
    add("copy/cli", "copy ÷ cli (throughput analogue)", _div(v.get("copy"), v.get("cli")))
    if "cli_compiled" in v:
        add("copy/cli_compiled", "copy ÷ compiled cli", _div(v.get("copy"), v.get("cli_compiled")))
    cli, copy = v.get("cli"), v.get("copy")
    core_key = "core_norecords" if v.get("core_norecords") is not None else "core"
    core = v.get(core_key)
    glue = None if cli is None or copy is None or core is None else cli - copy - core
    add("cli_glue", f"cli − copy − {core_key}, Ir/msg (what the CLI adds to the core and the I/O)", glue)
    return out


# --------------------------------------------------------------------------- running


@dataclass
class Measurement:
    """One probe on one workload: its two valgrind runs and the figure."""

    workload: str
    probe: str
    small: int
    big: int
    ir_small: int | None = None
    ir_big: int | None = None
    ir_per_message: float | None = None
    status: str = "ok"
    seconds: float = 0.0


def _env(probe: str = "") -> dict[str, str]:
    env = dict(os.environ)
    if probe not in COMPILED_PROBES:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    elif "PYTHONPATH" in env:  # they import the build installed for their interpreter: the
        # checkout leaves the caller's PYTHONPATH too (-P drops only the script's folder)
        kept = [p for p in env["PYTHONPATH"].split(os.pathsep) if p and Path(p).resolve() != ROOT]
        env["PYTHONPATH"] = os.pathsep.join(kept)
    env["PYTHONHASHSEED"] = "0"  # the same dict and set layouts in both runs
    return env


def target_command(
    probe: str, files: tuple[Path, Path], small: int, big: int, run: str, checkpoint_scale: float, compiled: str = ""
) -> list[str]:
    """The command the probe's ``run`` (``small`` or ``big``) measures (without valgrind).
    The compiled build's probes run ``compiled`` (an interpreter) with ``-P``: the checkout
    is not importable, so the build installed for it is what runs."""
    path = files[0] if run == "small" else files[1]
    if probe == "cli":
        return [sys.executable, "-m", "normalizer", "repair", str(path)]
    if probe == "cli_compiled":
        return [compiled, "-P", "-m", "normalizer", "repair", str(path)]
    if probe == "copy":
        return [sys.executable, "-m", "benchmarks._copy", str(path)]
    args = [probe, str(files[1]), "--small", str(small), "--big", str(big), "--run", run,
            "--checkpoint-scale", repr(checkpoint_scale)]  # fmt: skip
    if probe == "core_compiled":
        return [compiled, "-P", str(ROOT / "benchmarks" / "_instr_probe.py"), "core", *args[1:], "--expect-compiled"]
    return [sys.executable, "-m", "benchmarks._instr_probe", *args]


def valgrind_command(valgrind: str, out_file: Path, target: list[str], tool: str = "cachegrind") -> list[str]:
    if tool == "callgrind":
        opts = [f"--callgrind-out-file={out_file}"]
    else:
        opts = ["--cache-sim=no", f"--cachegrind-out-file={out_file}"]
    return [valgrind, f"--tool={tool}", "-q", "--trace-children=no", *opts, *target]


def _tail(text: str, n: int = 400) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(("==", "--"))]
    return " ".join(" ".join(lines).split())[-n:]


def run_counted(valgrind: str, target: list[str], tmp: Path, tag: str, probe: str = "") -> tuple[int, float]:
    """Run ``target`` under cachegrind, stdout to /dev/null; its Ir and wall seconds."""
    out_file = tmp / f"cg.{tag}.out"
    t0 = time.perf_counter()
    done = subprocess.run(valgrind_command(valgrind, out_file, target), stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=_env(probe), check=False)  # fmt: skip
    seconds = time.perf_counter() - t0
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {_tail(stderr)}")
    try:
        text = out_file.read_text()
    finally:
        out_file.unlink(missing_ok=True)
    return parse_ir(text), seconds


def run_native(target: list[str], probe: str = "") -> None:
    """The same command without valgrind: it must work, and it leaves every .pyc written."""
    done = subprocess.run(target, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          cwd=ROOT, env=_env(probe), check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {_tail(done.stderr.decode('utf-8', 'replace'))}")


def prepare_workload(name: str, small: int, big: int, tmp: Path, seed: int) -> tuple[Path, Path]:
    """Write the workload's first ``small`` and first ``big`` messages as JSONL files."""
    msgs = list(WORKLOADS[name](big, seed=seed))
    files = (tmp / f"{name}_{small}.jsonl", tmp / f"{name}_{big}.jsonl")
    write_jsonl(files[0], msgs[:small])
    write_jsonl(files[1], msgs)
    return files


def measure(
    valgrind: str,
    plan: list[tuple[str, str, tuple[Path, Path]]],
    small: int,
    big: int,
    jobs: int,
    checkpoint_scale: float,
    tmp: Path,
    log: Callable[[str], None],
    compiled: str = "",
) -> list[Measurement]:
    """Every (workload, probe) of ``plan``: a native warm-up, then both valgrind runs."""
    results = {(w, p): Measurement(w, p, small, big) for w, p, _ in plan}
    files = {(w, p): f for w, p, f in plan}

    def warm(key: tuple[str, str]) -> None:
        # Natively and tiny: a probe that fails is known before valgrind's minutes.
        w, p = key
        tiny = min(10, small)
        try:
            if p in SUBPROCESS_PROBES or p == "cli_compiled":
                run_native(target_command(p, files[key], small, big, "small", checkpoint_scale, compiled), p)
            else:
                run_native(target_command(p, files[key], tiny, 2 * tiny, "big", checkpoint_scale, compiled), p)
        except RuntimeError as exc:
            results[key].status = f"error: {exc}"

    counted: dict[tuple[str, str, str], int] = {}
    done = [0]

    def count(job: tuple[str, str, str]) -> None:
        w, p, run = job
        key = (w, p)
        if results[key].status != "ok":
            return
        target = target_command(p, files[key], small, big, run, checkpoint_scale, compiled)
        try:
            ir, seconds = run_counted(valgrind, target, tmp, f"{w}.{p.replace(':', '_')}.{run}", p)
        except (RuntimeError, ValueError) as exc:
            results[key].status = f"error: {exc}"
            return
        counted[job] = ir
        results[key].seconds += seconds
        done[0] += 1
        log(f"  [{done[0]}/{2 * len(plan)}] {w:5} {p:22} {run:5} {ir:>15,} Ir  {seconds:5.1f} s")

    # Our .pyc files are current before any run (the environment may well say
    # PYTHONDONTWRITEBYTECODE): otherwise every counted run would compile these modules.
    compileall.compile_dir(str(ROOT / "normalizer"), quiet=1)
    compileall.compile_dir(str(ROOT / "benchmarks"), quiet=1)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(warm, list(results)))
        log(f"warm-up done; {2 * len(plan)} valgrind runs on {jobs} job(s)")
        list(pool.map(count, [(w, p, run) for w, p, _ in plan for run in ("small", "big")]))
    for (w, p), m in results.items():
        if m.status != "ok":
            continue
        m.ir_small, m.ir_big = counted.get((w, p, "small")), counted.get((w, p, "big"))
        if m.ir_small is None or m.ir_big is None:
            m.status = "error: a run is missing"
            continue
        m.ir_per_message = per_message(m.ir_small, m.ir_big, small, big)
    return [results[(w, p)] for w, p, _ in plan]


# --------------------------------------------------------------------------- output


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def label(probe: str) -> str:
    if probe.startswith(PROFILE_PREFIX):
        return f"repair(profile={probe[len(PROFILE_PREFIX):]!r})"
    return LABELS.get(probe, probe)


def tables(per_workload: Mapping[str, Mapping[str, float | None]]) -> str:
    """The Ir table (a row per probe, Ir/msg and × floor per workload) and the ratio table."""
    workloads = list(per_workload)
    derived = {w: derive(v) for w, v in per_workload.items()}
    keys: list[str] = []
    for w in workloads:
        keys.extend(k for k in row_order(derived[w]) if k not in keys)
    keys = row_order(dict.fromkeys(keys))
    head = ["probe", "what"] + [c for w in workloads for c in (f"{w} Ir/msg", f"{w} × floor")]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (2 * len(workloads))]
    for k in keys:
        cells = [f"`{k}`", label(k)]
        for w in workloads:
            v = derived[w].get(k)
            cells += [_fmt(v, ",.0f"), _fmt(_div(v, derived[w].get("floor")), ".2f")]
        lines.append("| " + " | ".join(cells) + " |")
    rat = {w: {r["key"]: r for r in ratios(per_workload[w])} for w in workloads}
    rows: dict[str, str] = {}
    for w in workloads:
        for key, r in rat[w].items():
            if r["value"] is not None and not key.startswith("slowest"):
                rows.setdefault(key, r["label"])
    order = [k for w in workloads for k in rat[w]]
    lines += ["", "| ratio | " + " | ".join(workloads) + " |", "|---|" + "---:|" * len(workloads)]
    for key in sorted(rows, key=order.index):
        values = [rat[w][key]["value"] if key in rat[w] else None for w in workloads]
        cells = [_fmt(value, ",.0f" if key == "cli_glue" else ".2f") for value in values]
        lines.append(f"| {rows[key]} | " + " | ".join(cells) + " |")
    slowest = [f"{w}: {sp['label']} = {sp['value']:.2f}" for w in workloads
               if (sp := rat[w].get("slowest_profile/core")) is not None and sp["value"] is not None]  # fmt: skip
    if slowest:
        lines += ["", "Slowest profile: " + "; ".join(slowest) + "."]
    return "\n".join(lines)


def git_commit() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "normalizer", "benchmarks",
                                ":(exclude)benchmarks/results"], cwd=ROOT, capture_output=True, text=True,
                               check=False).stdout.strip()  # fmt: skip
    except OSError:
        return ""
    return commit + (" (uncommitted changes in normalizer/ or benchmarks/)" if dirty else "")


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_MESSAGES} messages, the bench workload, probes {','.join(QUICK_PROBES)}: about a minute")
    ap.add_argument("--probes", default=None, help="comma-separated probes (default: all; see above)")
    ap.add_argument("--workloads", default=None, help="comma-separated: bench, short, real, clean (default all; --quick: bench)")
    ap.add_argument("--jobs", type=int, default=2, help="valgrind processes at once (default 2)")
    ap.add_argument("--messages", type=int, default=None,
                    help=f"S: the small run measures S messages, the big one 2S (default {DEFAULT_MESSAGES}; --quick: {QUICK_MESSAGES})")
    ap.add_argument("--checkpoint-scale", type=float, default=CHECKPOINT_SCALE,
                    help=f"stretch the async adapter's 5 ms checkpoint interval by this factor (default {CHECKPOINT_SCALE:g})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compiled", default="", metavar="PYTHON",
                    help="an interpreter with the compiled build installed (pip install . "
                    "where a C compiler is): adds the probes core_compiled and cli_compiled")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory for instructions.json/.md")
    args = ap.parse_args(argv)
    probes = args.probes or ",".join(
        (QUICK_PROBES if args.quick else DEFAULT_PROBES) + (COMPILED_PROBES if args.compiled else ())
    )
    args.probes = [p.strip() for p in probes.split(",") if p.strip()]
    workloads = args.workloads or ("bench" if args.quick else ",".join(DEFAULT_WORKLOADS))
    args.workloads = [w.strip() for w in workloads.split(",") if w.strip()]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; expected some of {sorted(WORKLOADS)}")
    args.messages = args.messages or (QUICK_MESSAGES if args.quick else DEFAULT_MESSAGES)
    if args.messages < 1:
        ap.error("--messages must be at least 1")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.checkpoint_scale <= 0:
        ap.error("--checkpoint-scale must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probes under valgrind; print and write the tables. 2: valgrind missing."""
    args = parse_args(argv)
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("benchmarks.instructions: valgrind not found on PATH; it counts the instructions "
              "(install it, e.g. apt-get install valgrind)", file=sys.stderr)  # fmt: skip
        return 2
    try:
        probes = expand_probes(args.probes, builtin_profiles(), compiled=bool(args.compiled))
    except UsageError as exc:
        print(f"benchmarks.instructions: {exc}", file=sys.stderr)
        return 2
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    small, big = args.messages, 2 * args.messages
    t_start = time.time()
    notes: list[str] = []
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="normalizer-instr-") as tmpdir:
        tmp = Path(tmpdir)
        plan: list[tuple[str, str, tuple[Path, Path]]] = []
        for w in args.workloads:
            try:
                files = prepare_workload(w, small, big, tmp, args.seed)
            except FileNotFoundError as exc:
                notes.append(f"workload {w} skipped: {exc}")
                log(f"workload {w} skipped: {exc}")
                continue
            plan += [(w, p, files) for p in probes]
        log(f"instruction counts: {len(probes)} probes × {len({w for w, _, _ in plan})} workloads, "
            f"{small:,} and {big:,} messages, {args.jobs} job(s)")  # fmt: skip
        measured = measure(valgrind, plan, small, big, args.jobs, args.checkpoint_scale, tmp, log, args.compiled)
    per_workload: dict[str, dict[str, float | None]] = {}
    for m in measured:
        per_workload.setdefault(m.workload, {})[m.probe] = m.ir_per_message
        if m.status != "ok":
            notes.append(f"{m.workload} {m.probe}: {m.status}")
    version = valgrind_version(valgrind)
    meta = {
        "command": " ".join(["python -m benchmarks.instructions", *(sys.argv[1:] if argv is None else argv)]),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t_start)),
        "duration_s": round(time.time() - t_start, 1),
        "small_messages": small,
        "big_messages": big,
        "formula": "(Ir(big) - Ir(small)) / (big - small)",
        "tool": "valgrind --tool=cachegrind --cache-sim=no",
        "valgrind": version,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "commit": os.environ.get("NORMALIZER_BENCH_COMMIT") or git_commit(),
        "checkpoint_scale": args.checkpoint_scale,
        "jobs": args.jobs,
        "seed": args.seed,
        "workloads": list(per_workload),
        "probes": probes,
        "compiled": args.compiled or None,
    }
    result = {
        "meta": meta,
        "measurements": [asdict(m) for m in measured],
        "ir_per_message": {w: derive(v) for w, v in per_workload.items()},
        "ratios": {w: ratios(v) for w, v in per_workload.items()},
        "notes": notes,
    }
    text = tables(per_workload) if per_workload else "(nothing measured)"
    header = (
        f"Instructions per message: {meta['tool']}, {version}, Python {meta['python']}, commit "
        f"{str(meta['commit'])[:12]}; (Ir({big:,}) − Ir({small:,})) / {big - small:,} messages; "
        f"`{meta['command']}` in {meta['duration_s']:.0f} s."
    )
    md = header + "\n\n" + text + "\n" + "".join(f"\n- {n}" for n in notes) + ("\n" if notes else "")
    print(md)
    (out / "instructions.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    (out / "instructions.md").write_text(md)
    log(f"wrote {out / 'instructions.json'}, {out / 'instructions.md'} in {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
