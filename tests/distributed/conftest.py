"""What the engine tests share: a corpus of both layouts with its one-process outputs and
report, and the comparisons with them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.conftest import EXAMPLE, run
from tests.distributed.corpus import finetune_files, session_files


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".chatnorm-tmp." in p.name or ".chatnorm-report-" in p.name]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both layouts, a failing file, and the one-process outputs and report to compare with."""
    root = tmp_path_factory.mktemp("corpus")
    src = root / "in"
    finetune_files(src / "train", 3_000, 3, seed=7)
    session_files(src / "sessions", 60, turns_per_file=5, seed=8)
    (src / "bad.jsonl").write_bytes(EXAMPLE.read_bytes() + b'{"role": \n')
    result = run("repair", "-q", src, "-o", root / "expected", "--report", root / "expected.json")
    assert result.returncode == 1, result.stderr  # bad.jsonl
    return root


def inputs(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "in").rglob("*.jsonl"))


def same_tree(a: Path, b: Path) -> None:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert len(files) == 15  # 3 fine-tuning files, 12 sessions (bad.jsonl has no output)
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def same_report(path: Path, expected: Path) -> dict[str, Any]:
    got, want = orjson.loads(path.read_bytes()), orjson.loads(expected.read_bytes())
    for f in got["files"] + want["files"]:
        f.pop("seconds"), f.pop("output")
    assert got["files"] == want["files"]
    assert got["counts"] == want["counts"] and got["failed"] == want["failed"]
    return got
