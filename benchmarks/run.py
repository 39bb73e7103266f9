"""Run the whole benchmark in one process and report medians and same-run ratios.

``python -m benchmarks.run [--sizes 10000,100000,1000000] [--workloads bench,short,real,clean] [--quick] [--out benchmarks/results]``

Workloads (``--workloads``, default ``bench``): ``bench`` is the seeded agent session (mean
message ~0.9 KB, ~0.05 repairs per message); ``short`` is short messages with many defects
(mean ~130 B, ~0.27 repairs per message: where per-message overhead shows); ``real`` is the
session samples under ``../shared/samples`` read with the library's readers and replicated;
``clean`` is ``short`` as the core repairs it, a healthy history with nothing left to repair
(what the per-message machinery costs when there is no work).

For every history length in ``--sizes``:

* in-process rows (sizes <= ``--inproc-max``): the core (``repair``, validation on
  and off, and bytes -> core -> bytes), the async adapter, the floor (``orjson`` loads+dumps
  of the same messages from pre-serialized bytes) and the peers (LangChain, pydantic-ai,
  and on the Responses rendering of the same history the OpenAI Agents SDK converter);
* subprocess rows (sizes <= ``--file-max``): ``python -m normalizer repair FILE`` against a
  bare orjson JSONL copy of the same file, wall time and peak RSS;
* memory probes (sizes >= ``--mem-min``): peak RSS of the CLI, the async adapter and the
  orjson copy, each in a fresh process fed by the streaming generator (no list, no file).

Every timed row is repeated ``--repeats`` times, interleaved (round-robin, rotated each
round) and reduced to its median. Ratios are computed from medians of the same run. Writes
``bench.json``, ``bench.md`` (the table) and ``bench.png`` (chart) into ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from . import _probe
from .workload import WORKLOADS, Mix, responses_items, responses_to_chat, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
Message = dict[str, Any]
Thunk = Callable[[], object]

COLUMNS = ("row", "workload", "size", "msgs/s", "µs/msg", "peak RSS MB", "cost × floor", "speed × LangChain", "note")
ROW_KEYS = (
    "key", "row", "group", "workload", "size", "unit", "units", "status", "median_s", "times_s",
    "per_s", "us_per_unit", "peak_rss_mb", "cost_vs_floor", "speed_vs_langchain", "note",
)  # fmt: skip


# --------------------------------------------------------------------------- data


@dataclass
class Data:
    """One history length, materialised once for the in-process rows."""

    size: int
    workload: str
    msgs: list[Message]
    blobs: list[bytes]
    items: list[Message]
    item_blobs: list[bytes]
    chat_file: Path | None = None
    items_file: Path | None = None
    _extra: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._extra:
            self._extra[key] = make()
        return self._extra[key]


def make_data(size: int, seed: int, mix: Mix, workdir: Path, files: bool, workload: str = "bench") -> Data:
    msgs = list(WORKLOADS[workload](size, seed=seed, mix=mix))
    blobs = [orjson.dumps(m) for m in msgs]
    items = list(responses_items(msgs)) if workload == "bench" else []
    item_blobs = [orjson.dumps(i) for i in items]
    data = Data(size, workload, msgs, blobs, items, item_blobs)
    if files:
        data.chat_file = workdir / f"chat_{workload}_{size}.jsonl"
        data.items_file = workdir / f"responses_{workload}_{size}.jsonl"
        write_jsonl(data.chat_file, msgs)
        write_jsonl(data.items_file, items)
    return data


# --------------------------------------------------------------------------- cases


class Skip(Exception):
    """A row that cannot run here; the message says why."""


@dataclass
class Case:
    key: str
    row: str
    group: str  # floor | core | cli | peer | responses | responses-floor
    unit: str  # message | item
    make: Callable[[Data], Thunk]
    rss: bool = False  # thunk returns a dict with peak_rss_kb (subprocess rows)
    note: str = ""


def _drain(it: Iterable[object]) -> None:
    deque(it, maxlen=0)


def _core() -> Any:
    try:
        import normalizer
    except ImportError as exc:  # pragma: no cover - the repo always has it
        raise Skip(f"skipped (normalizer not importable: {exc})") from None
    if not hasattr(normalizer, "repair"):
        raise Skip("skipped (core not available yet)")
    return normalizer


def _floor(d: Data) -> Thunk:
    blobs, loads, dumps = d.blobs, orjson.loads, orjson.dumps

    def run() -> None:
        for b in blobs:
            dumps(loads(b))

    return run


def _floor_items(d: Data) -> Thunk:
    blobs, loads, dumps = d.item_blobs, orjson.loads, orjson.dumps

    def run() -> None:
        for b in blobs:
            dumps(loads(b))

    return run


def _core_sync(validate: bool) -> Callable[[Data], Thunk]:
    def make(d: Data) -> Thunk:
        repair = _core().repair
        msgs = d.msgs
        return lambda: _drain(repair(msgs, validate=validate))

    return make


def _core_bytes(d: Data) -> Thunk:
    repair = _core().repair
    blobs, loads, dumps = d.blobs, orjson.loads, orjson.dumps

    def run() -> None:
        for out in repair(map(loads, blobs)):
            dumps(out)

    return run


def _async(d: Data) -> Thunk:
    arepair = _core().arepair
    msgs = d.msgs

    async def consume() -> None:
        async for _ in arepair(msgs):
            pass

    return lambda: asyncio.run(consume())


def _async_trio(d: Data) -> Thunk:
    try:
        import trio
    except ImportError:
        raise Skip("skipped (trio not installed)") from None
    arepair = _core().arepair
    msgs = d.msgs

    async def consume() -> None:
        async for _ in arepair(msgs):
            pass

    return lambda: trio.run(consume)


def _core_profile(name: str) -> Callable[[Data], Thunk]:
    def make(d: Data) -> Thunk:
        repair = _core().repair
        msgs = d.msgs
        return lambda: _drain(repair(msgs, profile=name))

    return make


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def _cli_available() -> None:
    _core()
    if importlib.util.find_spec("normalizer.__main__") is None:
        raise Skip("skipped (CLI not available yet)")


def _cli(d: Data) -> Thunk:
    _cli_available()
    assert d.chat_file is not None
    cmd, env = _probe.child_command("cli", str(d.chat_file)), _subprocess_env()

    def run() -> dict[str, Any]:
        res = _probe.run_child(cmd, None, env)
        if res["returncode"] != 0:
            raise RuntimeError(f"CLI failed ({res['returncode']}): {res['stderr_tail']}")
        return res

    return run


def _compiled(python: str) -> Callable[[Data], Thunk]:
    """The core row again, in the compiled build installed for ``python`` (see _compiled.py)."""

    def make(d: Data) -> Thunk:
        if not python:
            raise Skip("skipped (no --compiled PYTHON: build one with .ci/compiled's steps)")
        assert d.chat_file is not None
        script = str(Path(__file__).parent / "_compiled.py")

        def run() -> dict[str, Any]:
            done = subprocess.run([python, "-P", script, str(d.chat_file)], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"compiled row failed: {done.stderr[-300:]}")
            res: dict[str, Any] = json.loads(done.stdout)
            if not res["compiled"]:
                raise RuntimeError(f"{python} runs the pure-Python core, not the compiled build")
            return res

        return run

    return make


def _copy(d: Data) -> Thunk:
    assert d.chat_file is not None
    cmd, env = _probe.child_command("copy", str(d.chat_file)), _subprocess_env()
    return lambda: _probe.run_child(cmd, None, env)


def _langchain(d: Data) -> Thunk:
    try:
        from langchain_core.messages import convert_to_messages, merge_message_runs
        from langchain_core.messages.utils import convert_to_openai_messages
    except ImportError:
        raise Skip("skipped (not installed)") from None
    msgs = d.msgs
    return lambda: convert_to_openai_messages(merge_message_runs(convert_to_messages(msgs)))


def chat_to_pydantic_ai(msgs: Iterable[Message]) -> list[Message]:
    """Chat dicts -> pydantic-ai's own serialized ``ModelMessage`` dicts, one per message.

    pydantic-ai cannot read OpenAI chat dicts: its history is ``ModelRequest`` /
    ``ModelResponse`` objects (serialized as ``{"kind", "parts": [...]}``). This mapping is
    workload preparation, not timed.
    """
    ts = "2025-01-01T00:00:00Z"
    names: dict[str, str] = {}
    out: list[Message] = []
    for m in msgs:
        role = m["role"]
        if role == "assistant":
            parts: list[Message] = []
            if m.get("reasoning_content"):
                parts.append({"part_kind": "thinking", "content": m["reasoning_content"]})
            if m.get("content") is not None:
                parts.append({"part_kind": "text", "content": _text(m["content"])})
            for c in m.get("tool_calls") or ():
                names[c["id"]] = c["function"]["name"]
                parts.append(
                    {
                        "part_kind": "tool-call",
                        "tool_name": c["function"]["name"],
                        "args": c["function"]["arguments"],
                        "tool_call_id": c["id"],
                    }
                )
            out.append({"kind": "response", "parts": parts, "timestamp": ts})
        elif role == "tool":
            part = {
                "part_kind": "tool-return",
                "tool_name": names.pop(m["tool_call_id"], "unknown"),
                "content": m["content"],
                "tool_call_id": m["tool_call_id"],
                "timestamp": ts,
            }
            out.append({"kind": "request", "parts": [part]})
        else:
            kind = "system-prompt" if role in ("system", "developer") else "user-prompt"
            out.append({"kind": "request", "parts": [{"part_kind": kind, "content": _text(m["content"]), "timestamp": ts}]})
    return out


def _text(content: Any) -> Any:
    """Chat content as pydantic-ai's text parts and prompts take it: a list of content parts
    (the real sessions' shape) joined into one string."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return content if content is not None else ""


def _pydantic_ai(d: Data) -> Thunk:
    try:
        from pydantic_ai._agent_graph import _clean_message_history
        from pydantic_ai.messages import ModelMessagesTypeAdapter
    except ImportError:
        raise Skip("skipped (not installed)") from None
    dicts = d.cached("pydantic_ai", lambda: chat_to_pydantic_ai(d.msgs))
    ta = ModelMessagesTypeAdapter

    def run() -> None:
        ta.dump_python(_clean_message_history(ta.validate_python(dicts)), mode="json")

    return run


def _agents(d: Data) -> Thunk:
    try:
        from agents.models.chatcmpl_converter import Converter
    except ImportError:
        raise Skip("skipped (not installed)") from None
    items = d.items
    return lambda: Converter.items_to_messages(items)


def _core_responses(d: Data) -> Thunk:
    repair = _core().repair
    items = d.items
    to_chat = _responses_reader()
    return lambda: _drain(repair(to_chat(items)))


def _responses_reader() -> Callable[[Iterable[Message]], Iterable[Message]]:
    """The library's Responses-items -> chat converter (items in memory), else ours."""
    try:
        conv_cls = importlib.import_module("normalizer.formats").ResponsesConverter
    except (ImportError, AttributeError):
        return responses_to_chat

    def to_chat(items: Iterable[Message]) -> Iterable[Message]:
        conv = conv_cls()
        feed = conv.feed
        for item in items:
            out = feed(item)
            if out:
                yield from out
        yield from conv.close()

    return to_chat


CASES: tuple[Case, ...] = (
    Case("floor", "floor: orjson loads+dumps", "floor", "message", _floor),
    Case("core_validate", "core repair, validate=on", "core", "message", _core_sync(True)),
    Case("core_novalidate", "core repair, validate=off", "core", "message", _core_sync(False)),
    Case("core_bytes", "bytes→loads→core→dumps, validate=on", "core", "message", _core_bytes),
    Case("async", "async adapter arepair (asyncio), validate=on", "core", "message", _async),
    Case("async_trio", "async adapter arepair (trio), validate=on", "core", "message", _async_trio),
    Case("langchain", "LangChain convert+merge_message_runs+to_openai", "peer", "message", _langchain),
    Case(
        "pydantic_ai",
        "pydantic-ai validate+_clean_message_history+dump",
        "peer",
        "message",
        _pydantic_ai,
        note="own ModelMessage dicts (chat dicts not accepted)",
    ),
    Case("floor_items", "floor: orjson loads+dumps (Responses items)", "responses-floor", "item", _floor_items),
    Case("agents_sdk", "Agents SDK Converter.items_to_messages", "responses", "item", _agents),
    Case("core_responses", "normalizer Responses→chat + core", "responses", "item", _core_responses),
    Case("cli", "CLI: python -m normalizer repair FILE", "cli", "message", _cli, rss=True),
    Case("copy", "floor: orjson JSONL copy (subprocess)", "cli", "message", _copy, rss=True),
)
PROFILE_NAMES = (
    "openai", "deepseek", "moonshot", "anthropic", "bedrock", "gemini", "mistral", "groq",
    "xai", "qwen", "zhipu", "jinja-strict", "ollama", "strict",
)  # fmt: skip


def profile_cases(names: Iterable[str]) -> list[Case]:
    """One core row per built-in profile (``default`` is the core_validate row)."""
    return [Case(f"profile_{n}", f"core, profile={n}", "profile", "message", _core_profile(n)) for n in names]


# (row key suffix, probe mode, label, core options)
MEM_MODES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("copy", "copy", "RSS probe: orjson copy via pipe", ()),
    ("cli", "cli", "RSS probe: CLI via pipe", ()),
    ("async", "async", "RSS probe: async adapter", ()),
    ("async_norecords", "async", "RSS probe: async adapter, max_records=0", ("max_records=0",)),
)


# --------------------------------------------------------------------------- measuring


def _row(case_key: str, row: str, group: str, size: int, unit: str, units: int, **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = dict.fromkeys(ROW_KEYS)
    rec.update(key=case_key, row=row, group=group, size=size, unit=unit, units=units, status="ok", note="")
    rec.update(kw)
    return rec


def measure_size(d: Data, cases: list[Case], repeats: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Time every case on ``d``, round-robin over ``repeats`` rotated rounds; medians."""
    thunks: dict[str, Thunk] = {}
    rows: dict[str, dict[str, Any]] = {}
    for case in cases:
        units = len(d.items) if case.unit == "item" else d.size
        rows[case.key] = _row(case.key, case.row, case.group, d.size, case.unit, units, note=case.note, workload=d.workload)
        try:
            thunks[case.key] = case.make(d)
        except Skip as exc:
            rows[case.key].update(status=str(exc))
    # The workload (several copies of the history) is long-lived harness data: keep it out
    # of the collector's way, so allocation-heavy rows are not charged for scanning it.
    gc.collect()
    gc.freeze()
    times: dict[str, list[float]] = {k: [] for k in thunks}
    rss: dict[str, list[int]] = {k: [] for k in thunks}
    budget = {k: repeats for k in thunks}
    order = list(thunks)
    for rnd in range(repeats):
        shift = rnd % max(1, len(order))
        for key in order[shift:] + order[:shift]:
            if len(times[key]) >= budget[key]:
                continue
            gc.collect()
            t0 = time.perf_counter()
            try:
                out = thunks[key]()
            except Exception as exc:  # a broken peer must not sink the run
                detail = " ".join(str(exc).split())[-200:]
                rows[key].update(status=f"error: {type(exc).__name__}: {detail}")
                budget[key] = 0
                continue
            dt = time.perf_counter() - t0
            if isinstance(out, dict) and "elapsed_s" in out:
                dt = out["elapsed_s"]
                rss[key].append(out["peak_rss_kb"])
            times[key].append(dt)
            if rnd == 0 and dt > 4.0 and repeats > 3:
                budget[key] = 3  # slow peers: 3 rounds are enough for a median
        log(f"  size {d.size:,}: round {rnd + 1}/{repeats} done")
    gc.unfreeze()
    for key, ts in times.items():
        if not ts or rows[key]["status"] != "ok":
            continue
        med = statistics.median(ts)
        rec = rows[key]
        rec.update(median_s=med, times_s=ts, per_s=rec["units"] / med, us_per_unit=med / rec["units"] * 1e6)
        if rss[key]:
            rec["peak_rss_mb"] = max(rss[key]) / 1024
    _check_mutation(d, rows)
    return list(rows.values())


def _check_mutation(d: Data, rows: dict[str, dict[str, Any]]) -> None:
    """The inputs are reused across rounds: flag any row's run that changed them."""
    if any(orjson.dumps(m) != b for m, b in zip(d.msgs, d.blobs)):
        for rec in rows.values():
            if rec["unit"] == "message" and rec["group"] in ("core", "peer"):
                rec["note"] = (rec["note"] + "; " if rec["note"] else "") + "INPUT MUTATED by some row"


def startup(repeats: int) -> dict[str, float | None]:
    """Wall time of the CLI and of the copy on a one-message file (interpreter + imports)."""
    out: dict[str, float | None] = {"cli": None, "copy": None}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one.jsonl"
        write_jsonl(path, [{"role": "user", "content": "hi"}])
        env = _subprocess_env()
        modes = ["copy"]
        try:
            _cli_available()
            modes.append("cli")
        except Skip:
            pass
        for mode in modes:
            ts = [_probe.run_child(_probe.child_command(mode, str(path)), None, env)["elapsed_s"] for _ in range(repeats)]
            out[mode] = statistics.median(ts)
    return out


def memory_probe(mode: str, size: int, seed: int, mix: str, opts: Iterable[str] = ()) -> dict[str, Any]:
    """One fresh process: ``python -m benchmarks._probe MODE SIZE``."""
    cmd = [sys.executable, "-m", "benchmarks._probe", mode, str(size), "--seed", str(seed), "--mix", mix]
    for opt in opts:
        cmd += ["--opt", opt]
    proc = subprocess.run(cmd, capture_output=True, env=_subprocess_env(), cwd=ROOT, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode("utf-8", "replace")[-400:])
    res: dict[str, Any] = orjson.loads(proc.stdout.splitlines()[-1])
    if res.get("returncode"):
        raise RuntimeError(f"exit {res['returncode']}: {res.get('stderr_tail', '')[-300:]}")
    return res


def measure_memory(sizes: list[int], seed: int, mix: str, log: Callable[[str], None]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for size in sizes:
        for key, mode, label, opts in MEM_MODES:
            rec = _row(f"mem_{key}", label, "memory", size, "message", size, workload="bench")
            try:
                if mode in ("cli", "async"):
                    if mode == "cli":
                        _cli_available()
                    else:
                        _core()
                res = memory_probe(mode, size, seed, mix, opts)
            except Skip as exc:
                rec.update(status=str(exc))
            except RuntimeError as exc:
                rec.update(status=f"error: {' '.join(str(exc).split())[-200:]}")
            else:
                med = res["elapsed_s"]
                rec.update(
                    median_s=med,
                    times_s=[med],
                    per_s=size / med,
                    us_per_unit=med / size * 1e6,
                    peak_rss_mb=res["peak_rss_kb"] / 1024,
                    note="single run; time includes the generator",
                )
                if res.get("start_rss_kb"):
                    rec["note"] += f"; RSS before first message {res['start_rss_kb'] / 1024:.1f} MB"
            rows.append(rec)
            log(f"  memory {label} @ {size:,}: {rec['status']}"
                + (f", {rec['peak_rss_mb']:.1f} MB in {rec['median_s']:.1f} s" if rec["status"] == "ok" else ""))
    return rows


# --------------------------------------------------------------------------- ratios, targets


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """Fill ``cost_vs_floor`` and ``speed_vs_langchain`` from same-size, same-run medians."""
    by = {(r["key"], r["workload"], r["size"]): r for r in rows if r["status"] == "ok"}
    for r in rows:
        if r["status"] != "ok" or r["us_per_unit"] is None or r["group"] == "memory":
            continue
        floor_key = {"cli": "copy", "responses": "floor_items", "responses-floor": "floor_items"}.get(r["group"], "floor")
        floor = by.get((floor_key, r["workload"], r["size"]))
        if floor:
            r["cost_vs_floor"] = r["us_per_unit"] / floor["us_per_unit"]
        core = by.get(("core_validate", r["workload"], r["size"]))
        if core and r["group"] == "profile":
            r["note"] = (r["note"] + "; " if r["note"] else "") + f"{r['us_per_unit'] / core['us_per_unit']:.2f} × default core"
        lc = by.get(("langchain", r["workload"], r["size"]))
        if core and r["group"] == "compiled":
            r["note"] = (r["note"] + "; " if r["note"] else "") + f"{r['us_per_unit'] / core['us_per_unit']:.2f} × pure-Python core"
        if lc and r["unit"] == "message" and r["group"] in ("core", "peer", "floor", "profile", "compiled"):
            r["speed_vs_langchain"] = lc["us_per_unit"] / r["us_per_unit"]


def targets(rows: list[dict[str, Any]], start: dict[str, float | None]) -> list[dict[str, Any]]:
    """Evaluate the targets at the largest size where both sides ran (the ``bench`` workload)."""
    by = {(r["key"], r["size"]): r for r in rows if r["status"] == "ok" and r["workload"] in ("bench", None)}

    def largest(a: str, b: str) -> int | None:
        common = [s for (k, s) in by if k == a and (b, s) in by]
        return max(common) if common else None

    out: list[dict[str, Any]] = []

    def add(name: str, a: str, b: str, fn: Callable[[dict[str, Any], dict[str, Any]], float], op: str, limit: float, stretch: float | None = None, extra: str = "") -> None:
        size = largest(a, b)
        if size is None:
            out.append({"target": name, "value": None, "limit": limit, "met": None, "detail": "not measured"})
            return
        value = fn(by[(a, size)], by[(b, size)])
        met = value <= limit if op == "<=" else value >= limit
        rec = {"target": name, "value": value, "limit": limit, "met": met, "size": size, "detail": f"at {size:,} messages{extra}"}
        if stretch is not None:
            rec["stretch"] = stretch
            rec["stretch_met"] = value <= stretch if op == "<=" else value >= stretch
        out.append(rec)

    cost = lambda x, y: x["us_per_unit"] / y["us_per_unit"]  # noqa: E731
    add("core validate=on cost ≤ 3× orjson round trip", "core_validate", "floor", cost, "<=", 3.0, 1.5)
    add("CLI throughput ≥ 1/4 of bare orjson copy", "cli", "copy", lambda x, y: y["us_per_unit"] / x["us_per_unit"], ">=", 0.25, 0.5)
    size = largest("cli", "copy")
    if size is not None and start.get("cli") and start.get("copy"):
        c, p = by[("cli", size)], by[("copy", size)]
        net_c = c["median_s"] - start["cli"]  # type: ignore[operator]
        net_p = p["median_s"] - start["copy"]  # type: ignore[operator]
        if net_c > 0 and net_p > 0:
            out[-1]["net_of_startup"] = net_p / net_c
            out[-1]["detail"] += f"; net of interpreter start-up {net_p / net_c:.2f}"
    add("core validate=on ≥ 10× LangChain throughput", "core_validate", "langchain", lambda x, y: y["us_per_unit"] / x["us_per_unit"], ">=", 10.0)
    add("async adapter cost ≤ 1.2× sync", "async", "core_validate", cost, "<=", 1.2)
    for key, label in (("mem_cli", "CLI"), ("mem_async", "async adapter"), ("mem_async_norecords", "async adapter, max_records=0")):
        sizes = sorted(s for (k, s) in by if k == key)
        if len(sizes) < 2:
            out.append({"target": f"{label} peak RSS at 10M within 10% of 100k", "value": None, "limit": 1.1, "met": None, "detail": "needs two memory sizes"})
            continue
        lo, hi = sizes[0], sizes[-1]
        value = by[(key, hi)]["peak_rss_mb"] / by[(key, lo)]["peak_rss_mb"]
        partial = "" if hi >= 10_000_000 else " (10M not run)"
        out.append({
            "target": f"{label} peak RSS at 10M within 10% of 100k", "value": value, "limit": 1.1,
            "met": value <= 1.1, "detail": f"{hi:,} vs {lo:,} messages{partial}",
        })  # fmt: skip
    return out


# --------------------------------------------------------------------------- output


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def table(rows: list[dict[str, Any]]) -> str:
    """The plain-text table (also valid GitHub markdown)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(["---", "---"] + ["---:"] * 6 + ["---"]) + "|"]
    for r in rows:
        ok = r["status"] == "ok"
        unit = "" if r["unit"] == "message" else f" /{r['unit']}"
        note = r["note"] if ok else r["status"]
        cells = [
            r["row"],
            r["workload"] or "bench",
            f"{r['size']:,}",
            _fmt(r["per_s"], ",.0f") + unit if ok else "—",
            _fmt(r["us_per_unit"], ".2f") + unit if ok else "—",
            _fmt(r["peak_rss_mb"], ".1f"),
            _fmt(r["cost_vs_floor"], ".2f"),
            _fmt(r["speed_vs_langchain"], ".1f"),
            note,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets_text(ts: list[dict[str, Any]]) -> str:
    lines = []
    for t in ts:
        mark = {True: "met", False: "MISSED", None: "n/a"}[t["met"]]
        val = "—" if t["value"] is None else f"{t['value']:.2f}"
        stretch = ""
        if "stretch" in t:
            stretch = f" (stretch {t['stretch']}: {'met' if t['stretch_met'] else 'not met'})"
        lines.append(f"- {t['target']}: {val} → {mark}{stretch} [{t['detail']}]")
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], path: Path) -> str | None:
    """Throughput and peak RSS against history length; returns a reason if skipped."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped (matplotlib not installed)"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 7.5), gridspec_kw={"width_ratios": (3, 2)})
    series: dict[str, list[tuple[int, float]]] = {}
    mem: dict[str, list[tuple[int, float]]] = {}
    labels: dict[str, str] = {}
    groups: dict[str, str] = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        labels[r["key"]] = r["row"] + (" (per item)" if r["unit"] == "item" else "")
        groups[r["key"]] = r["group"]
        if r["group"] == "memory":
            mem.setdefault(r["key"], []).append((r["size"], r["peak_rss_mb"]))
        else:
            series.setdefault(r["key"], []).append((r["size"], r["per_s"]))
    colors = plt.get_cmap("tab20").colors
    style = {"floor": "--", "responses-floor": "--", "peer": ":", "cli": "-."}
    for i, (key, pts) in enumerate(series.items()):
        pts.sort()
        ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colors[(2 * i) % 20 + (i >= 10)],
                 linestyle=style.get(groups[key], "-"), label=labels[key])  # fmt: skip
    for i, (key, pts) in enumerate(mem.items()):
        pts.sort()
        ax2.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", color=colors[2 * i], label=labels[key])
    for ax, title, ylabel in (
        (ax1, "Throughput (median of rounds; dashed = floors, dotted = peers)", "messages / s"),
        (ax2, "Peak RSS, fresh process, streamed input", "peak RSS (MB)"),
    ):
        ax.set_xscale("log")
        ax.set_xlabel("history length (messages)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2 if ax is ax1 else 1)
    ax1.set_yscale("log")
    ax2.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "normalizer"], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
        if dirty:
            commit += " (normalizer/ has uncommitted changes)"
    except OSError:
        commit = ""
    commit = os.environ.get("NORMALIZER_BENCH_COMMIT") or commit  # set when run from an export
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "commit": commit,
        "versions": {d: _version(d) for d in ("orjson", "pydantic", "anyio", "langchain-core", "openai-agents", "pydantic-ai-slim", "matplotlib", "psutil")},
    }


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None, help="history lengths, comma-separated (default 10000,100000,1000000; --quick: 2000)")
    ap.add_argument("--quick", action="store_true", help="3 rounds, small default size, memory probes at every size")
    ap.add_argument("--repeats", type=int, default=None, help="rounds per timed row (default 5; --quick: 3)")
    ap.add_argument("--inproc-max", type=int, default=100_000, help="largest size for in-process rows")
    ap.add_argument("--file-max", type=int, default=100_000, help="largest size for the CLI-on-a-file rows")
    ap.add_argument("--mem-min", type=int, default=None, help="smallest size for memory probes (default 100000; --quick: 0)")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory probes")
    ap.add_argument("--no-peers", action="store_true", help="skip LangChain, pydantic-ai and the Agents SDK")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mix", default="", help='defect rates, e.g. "split=0.2,orphan=0" or "none"')
    ap.add_argument("--workloads", default="bench", help="comma-separated: bench, short, real, clean (default bench)")
    ap.add_argument("--profiles", default="all", help='profile rows: "all", "none" or comma-separated names')
    ap.add_argument("--compiled", default="", metavar="PYTHON",
                    help="an interpreter with the compiled build installed (pip install . where a C "
                         "compiler is): adds its core row")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="directory for bench.json/.md/.png")
    args = ap.parse_args(argv)
    args.sizes = [int(s.replace("_", "")) for s in (args.sizes or ("2000" if args.quick else "10000,100000,1000000")).split(",")]
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; expected some of {sorted(WORKLOADS)}")
    names = {"all": list(PROFILE_NAMES), "none": []}.get(args.profiles)
    args.profiles = names if names is not None else [n.strip() for n in args.profiles.split(",") if n.strip()]
    if args.mem_min is None:
        args.mem_min = 0 if args.quick else 100_000
    return args


def main(argv: list[str] | None = None) -> int:
    """Run everything; print the table and the targets; write JSON, markdown and PNG."""
    args = parse_args(argv)
    mix = Mix.parse(args.mix)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    cases = [c for c in CASES if not (args.no_peers and c.group in ("peer", "responses") and not c.key.startswith("core"))]
    cases += profile_cases(args.profiles)
    if args.compiled:
        cases.append(Case("core_compiled", "core repair, compiled build (mypyc)", "compiled", "message",
                          _compiled(args.compiled), rss=True,
                          note="timed in a child that holds the history as a list (its RSS)"))
    t_start = time.time()
    mem_sizes = [] if args.no_memory else [s for s in args.sizes if s >= args.mem_min]
    est = sum(s * 35e-6 for s in mem_sizes)  # ~8 + 12 + 7 + 8 µs/message over the four probes
    log(f"normalizer benchmark: sizes {args.sizes}, {args.repeats} rounds; memory probes at {mem_sizes} (~{est / 60:.1f} min)")

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="normalizer-bench-") as tmp:
        for workload, size in ((w, s) for w in args.workloads for s in args.sizes):
            inproc = size <= args.inproc_max
            files = size <= args.file_max
            chosen = [c for c in cases if (c.group == "cli" and files) or (c.group == "compiled" and files and inproc)
                      or (c.group not in ("cli", "compiled") and inproc)]
            if workload != "bench":  # the Responses rendering is of the bench workload only
                chosen = [c for c in chosen if c.unit != "item"]
            if not chosen:
                continue
            log(f"workload {workload}, size {size:,}: preparing")
            try:
                data = make_data(size, args.seed, mix, Path(tmp), files, workload)
            except FileNotFoundError as exc:
                notes.append(f"workload {workload} skipped: {exc}")
                continue
            rows.extend(measure_size(data, chosen, args.repeats, log))
            del data
            gc.collect()
            for p in Path(tmp).glob("*.jsonl"):
                p.unlink()
        start = startup(args.repeats)
    rows.extend(measure_memory(mem_sizes, args.seed, args.mix, log))
    add_ratios(rows)
    ts = targets(rows, start)
    if _responses_reader() is responses_to_chat:
        notes.append("Responses rows: normalizer has no Responses reader for iterables yet; items are mapped by benchmarks.workload.responses_to_chat (the naive per-item split) and then repaired by the core")
    notes.append("pydantic-ai cannot take OpenAI chat dicts; its row loads the same history from pydantic-ai's own serialized ModelMessage dicts (converted untimed), cleans it with the private _clean_message_history and dumps it back")
    notes.append("in-process rows share one process, so they have no peak RSS of their own: see the subprocess and RSS-probe rows")
    if start.get("cli") is not None:
        notes.append(f"interpreter start-up: CLI {start['cli'] * 1e3:.0f} ms, bare copy {start['copy'] * 1e3:.0f} ms (one-message file, included in the subprocess rows)")

    text = table(rows)
    print(text)
    print()
    print("Targets (same-run ratios of medians):")
    print(targets_text(ts))
    for n in notes:
        print(f"note: {n}")
    result = {
        "meta": {
            "command": "python -m benchmarks.run " + " ".join(sys.argv[1:] if argv is None else argv),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t_start)),
            "duration_s": time.time() - t_start,
            "sizes": args.sizes,
            "repeats": args.repeats,
            "seed": args.seed,
            "mix": vars(mix),
            "machine": machine(),
            "startup_s": start,
        },
        "columns": list(COLUMNS),
        "rows": rows,
        "targets": ts,
        "notes": notes,
    }
    (out / "bench.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    (out / "bench.md").write_text(text + "\n\nTargets:\n\n" + targets_text(ts) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n")
    why = chart(rows, out / "bench.png")
    if why:
        print(f"note: {why}")
    log(f"wrote {out / 'bench.json'}, {out / 'bench.md'}" + ("" if why else f", {out / 'bench.png'}") + f" in {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
