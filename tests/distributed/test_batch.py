"""The engine-neutral entry points: ``repair_lines`` and ``repair_file`` write what
``chatnorm repair`` writes, byte for byte; their reports merge into the CLI's report."""

from __future__ import annotations

import subprocess
import sys
import dataclasses
from pathlib import Path

import orjson
import pytest

from normalizer import InputError, UsageError
from normalizer.distributed import (FileResult, RepairedLines, repair_file, repair_lines, settings_for, total_counts,
                                    write_report)
from tests.cli.conftest import EXAMPLE, ROOT, big_session, run
from tests.distributed.corpus import finetune_file


def test_importing_the_package_imports_no_engine():
    code = "import sys, normalizer.distributed; print(sorted(m for m in ('dask', 'distributed', 'ray', 'pyarrow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out == "[]\n"


def test_lines_of_a_session_are_the_cli_output():
    lines = EXAMPLE.read_text().splitlines()
    repaired = repair_lines(lines)
    out, result = repaired.lines, repaired.result
    assert "\n".join(out).encode() + b"\n" == run("repair", "-q", EXAMPLE).stdout
    assert (result.format, result.conversations, result.messages_in, result.messages_out) == ("chat", 1, 12, 10)
    assert result.counts == {"drop_orphan_result": 1, "empty_content_to_null": 1, "merge_assistant": 1,
                             "move_result": 2, "reorder_results": 1, "stub_missing_result": 1}



def test_repair_lines_returns_named_lines_and_result():
    # A value object read by name, not a tuple read by position.
    lines = EXAMPLE.read_text().splitlines()
    repaired = repair_lines(lines)
    assert isinstance(repaired, RepairedLines) and not isinstance(repaired, tuple)
    assert [f.name for f in dataclasses.fields(RepairedLines)] == ["lines", "result"]
    assert isinstance(repaired.result, FileResult) and repaired.result.messages_out == 10
    assert "\n".join(repaired.lines).encode() + b"\n" == run("repair", "-q", EXAMPLE).stdout

def test_lines_of_training_data_are_one_line_per_conversation_as_the_cli_writes(tmp_path: Path):
    path = finetune_file(tmp_path / "train.jsonl", 200, seed=3)
    repaired = repair_lines(path.read_bytes().splitlines())  # bytes work too
    out, result = repaired.lines, repaired.result
    expected = run("repair", "-q", path).stdout
    assert len(out) == 200 == result.conversations
    assert "\n".join(out).encode() + b"\n" == expected
    report = tmp_path / "r.json"
    assert run("repair", "-q", path, "-o", tmp_path / "o.jsonl", "--report", report).returncode == 0
    assert result.counts == orjson.loads(report.read_bytes())["counts"]


def test_a_bad_line_names_the_batch_line_and_column():
    lines = [orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}).decode()] * 2 + ['{"messages": [}']
    with pytest.raises(InputError) as info:
        repair_lines(lines, name="part-7")
    assert str(info.value).startswith("part-7:3:15: not JSON: ")
    repaired = repair_lines(lines, on_invalid="skip")
    out, result = repaired.lines, repaired.result
    assert len(out) == 2 and result.counts == {"skip_invalid": 1}


def test_records_go_to_a_spool_file_and_merge_into_the_cli_report(tmp_path: Path):
    spool = tmp_path / "spool"
    spool.mkdir()
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(EXAMPLE.read_bytes())
    finetune_file(src / "b.jsonl", 30, seed=1)
    settings = settings_for(records_dir=str(spool))
    results = [repair_file(src / n, tmp_path / "out" / n, settings=settings) for n in ("a.jsonl", "b.jsonl")]
    write_report(tmp_path / "merged.json", results, 1.0)
    cli = tmp_path / "cli.json"
    assert run("repair", "-q", src, "-o", tmp_path / "cli-out", "--report", cli).returncode == 0
    merged, expected = (orjson.loads(p.read_bytes()) for p in (tmp_path / "merged.json", cli))
    for f in merged["files"] + expected["files"]:
        f.pop("seconds"), f.pop("output")
    assert merged["files"] == expected["files"]
    assert merged["counts"] == expected["counts"] == total_counts(results)
    assert list(spool.iterdir()) == []  # each spool is removed once copied
    for n in ("a.jsonl", "b.jsonl"):
        assert (tmp_path / "out" / n).read_bytes() == (tmp_path / "cli-out" / n).read_bytes()


def test_a_file_that_fails_is_a_result_not_an_exception(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(EXAMPLE.read_bytes() + b'{"role": \n')
    result = repair_file(bad, tmp_path / "out.jsonl")
    assert result.error is not None and result.error.startswith(f"{bad}:13:")
    assert not (tmp_path / "out.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.jsonl"]


def test_big_file_streams_to_the_same_bytes(tmp_path: Path):
    path = big_session(tmp_path / "big.jsonl", 3_000)
    result = repair_file(path, tmp_path / "o.jsonl")
    assert result.error is None and result.counts["merge_assistant"] == 3_000
    assert (tmp_path / "o.jsonl").read_bytes() == run("repair", "-q", path).stdout


@pytest.mark.parametrize("kwargs, needle", [
    ({"to": "json"}, "repair_lines writes lines: to must be one of auto, jsonl, finetune, not 'json'"),
    ({"on_invalid": "fail"}, "on_invalid must be 'error' or 'skip', not 'fail'"),
    ({"profile": "nope"}, "nope"),
    ({"orphan_results": "explode"}, "orphan_results"),
])
def test_wrong_options_fail_before_any_work(kwargs: dict[str, str], needle: str):
    with pytest.raises(UsageError, match=None) as info:
        repair_lines(iter(()), **kwargs)
    assert needle in str(info.value)
