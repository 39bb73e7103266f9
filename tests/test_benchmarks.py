"""Smoke test of the benchmark suite: it runs on a tiny size and produces its outputs.

No timing assertions: timings belong in the benchmark output, not in tests.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from realdata import needs_samples

from benchmarks import workload
from benchmarks.run import COLUMNS, ROW_KEYS

ROOT = Path(__file__).resolve().parent.parent


def test_workload_is_seeded_streaming_and_exact() -> None:
    gen = workload.chat_messages(500, seed=7)
    assert not isinstance(gen, list)
    first = list(gen)
    assert len(first) == 500
    assert first == list(workload.chat_messages(500, seed=7))
    assert first != list(workload.chat_messages(500, seed=8))
    assert first[0]["role"] == "system"
    assert {m["role"] for m in first} == {"system", "user", "assistant", "tool"}


def test_workload_defect_mix_is_tunable() -> None:
    def defects(mix: workload.Mix) -> int:
        msgs = list(workload.chat_messages(3000, seed=1, mix=mix))
        pairs = zip(msgs, msgs[1:])
        split = sum(a["role"] == b["role"] == "assistant" for a, b in pairs)
        empty = sum(m.get("content") == "" and bool(m.get("tool_calls")) for m in msgs)
        orphans = sum("orphan" in m.get("tool_call_id", "") for m in msgs)
        return split + empty + orphans

    assert defects(workload.Mix.parse("none")) == 0
    assert defects(workload.Mix.parse("split=0.5,empty=0.5,orphan=0.2")) > 50
    with pytest.raises(ValueError):
        workload.Mix.parse("nonsense=1")


def test_responses_rendering_round_trips_to_chat() -> None:
    msgs = list(workload.chat_messages(400, seed=2, mix=workload.Mix.parse("none")))
    items = list(workload.responses_items(msgs))
    kinds = {i.get("type", "easy") for i in items}
    assert {"function_call", "function_call_output", "message", "easy"} <= kinds
    back = list(workload.responses_to_chat(items))

    def calls(ms: list[dict]) -> list[str]:
        return [c["id"] for m in ms for c in m.get("tool_calls") or ()]

    def results(ms: list[dict]) -> list[str]:
        return [m["tool_call_id"] for m in ms if m["role"] == "tool"]

    assert calls(back) == calls(msgs)
    assert results(back) == results(msgs)
    # the naive mapping splits text + calls into two assistant messages, as gateways do
    assert len(back) >= len(msgs)


def test_short_workload_is_short_and_defect_heavy() -> None:
    import normalizer

    msgs = list(workload.short_messages(5000, seed=3))
    assert msgs == list(workload.short_messages(5000, seed=3))
    mean = sum(len(orjson.dumps(m)) for m in msgs) / len(msgs)
    assert 100 < mean < 170
    stream = normalizer.repair(msgs)
    list(stream)
    per_message = sum(stream.report.counts.values()) / len(msgs)
    assert 0.2 < per_message < 0.35
    assert {"merge_assistant", "empty_content_to_null", "stub_missing_result", "drop_orphan_result"} <= set(stream.report.counts)


@needs_samples
def test_real_workload_replicates_the_samples() -> None:
    msgs = list(workload.real_messages(3000))
    assert len(msgs) == 3000
    assert {m["role"] for m in msgs} >= {"user", "assistant", "tool"}


def test_generator_holds_constant_state() -> None:
    # 10M messages must stream: taking a slice deep into the history needs no list.
    gen = workload.chat_messages(10_000_000, seed=0)
    tail = list(itertools.islice(gen, 20_000, 20_005))
    assert len(tail) == 5
    gen.close()


def test_benchmark_command_produces_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--sizes", "300", "--repeats", "1", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    header = proc.stdout.splitlines()[0]
    for column in COLUMNS:
        assert column in header
    assert "floor: orjson loads+dumps" in proc.stdout
    assert "Targets" in proc.stdout

    result = json.loads((out / "bench.json").read_text())
    assert {"meta", "columns", "rows", "targets", "notes"} <= result.keys()
    assert result["columns"] == list(COLUMNS)
    rows = result["rows"]
    assert rows and all(set(ROW_KEYS) <= r.keys() for r in rows)
    keys = {r["key"] for r in rows}
    assert {"floor", "core_validate", "core_novalidate", "async", "copy", "mem_async", "mem_cli"} <= keys
    by = {r["key"]: r for r in rows}
    assert by["floor"]["status"] == "ok" and by["floor"]["per_s"] > 0
    for key, module in (("langchain", "langchain_core"), ("pydantic_ai", "pydantic_ai"), ("agents_sdk", "agents")):
        expected = "ok" if importlib.util.find_spec(module) is not None else "skipped (not installed)"
        assert by[key]["status"] == expected, key
    assert by["async_trio"]["status"] == "ok"
    assert by["profile_mistral"]["status"] == "ok"
    assert {r["workload"] for r in rows} == {"bench"}
    for t in result["targets"]:
        assert {"target", "value", "limit", "met"} <= t.keys()
    assert (out / "bench.md").read_text().startswith("| row |")


# -- the scale benchmark (benchmarks/scale.py, benchmarks/corpus.py) ------------------------------


def test_scale_corpus_is_seeded_and_both_layouts_hold_the_same_conversations(tmp_path: Path) -> None:
    from benchmarks import corpus

    convs = list(corpus.conversations(40, seed=3))
    assert convs == list(corpus.conversations(40, seed=3)) != list(corpus.conversations(40, seed=4))
    files = corpus.finetune_files(tmp_path / "ft", 40, 3, seed=3)
    lines = [orjson.loads(line) for p in files for line in p.read_bytes().splitlines()]
    assert [len(p.read_bytes().splitlines()) for p in files] == [14, 13, 13]
    assert len(lines) == 40 and all(set(line) == {"messages"} for line in lines)
    sessions = corpus.session_files(tmp_path / "s", 40, turns_per_file=10, seed=3)
    assert len(sessions) == 4
    messages = [orjson.loads(line) for line in sessions[0].read_bytes().splitlines()]
    assert messages[0]["role"] == "system" and sum(m["role"] == "system" for m in messages) == 1


def test_scale_benchmark_runs_and_checks_outputs(tmp_path: Path) -> None:
    pytest.importorskip("psutil")
    from benchmarks import scale

    out = tmp_path / "res"
    assert scale.main(["--conversations", "200", "--files", "4", "--per-file", "5", "--rounds", "1",
                       "--engines=--jobs", "--data", str(tmp_path / "data"), "--out", str(out)]) == 0
    data = json.loads((out / "scale.json").read_text())
    assert [(r["layout"], r["engine"]) for r in data["rows"]] == [
        ("finetune", "1 process"), ("finetune", "--jobs 2"), ("sessions", "1 process"), ("sessions", "--jobs 2")]
    assert all(r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_process_mib"] > 0 for r in data["rows"])
    assert "| finetune | --jobs 2 | 2 |" in (out / "scale.md").read_text()


def test_integrations_benchmark_prints_a_row_per_adapter(tmp_path: Path) -> None:
    out = tmp_path / "integrations.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.integrations", "--messages", "200", "--repeats", "1", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| adapter | µs/history | × core | note |" in proc.stdout
    result = json.loads(out.read_text())
    by = {r["adapter"]: r for r in result["rows"]}
    assert list(by) == ["core", "litellm", "litellm anthropic", "openai-agents", "langchain", "pydantic-ai"]
    assert by["core"]["status"] == "ok" and by["core"]["ratio_to_core"] == 1.0
    for adapter, module in (("litellm", "litellm"), ("openai-agents", "agents"), ("langchain", "langchain"), ("pydantic-ai", "pydantic_ai")):
        installed = importlib.util.find_spec(module) is not None
        assert (by[adapter]["status"] == "ok") is installed, adapter
        assert (by[adapter]["us_per_history"] is not None) is installed, adapter
