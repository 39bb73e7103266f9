"""``distributed/ray``'s task body, without Ray (Ray is not in the test extra): a row of jobs
in, its files repaired and their results as JSON out, which the driver turns back into the
same ``FileResult``s (``FileResult`` is slotted: no ``__dict__`` to dump)."""

from __future__ import annotations

from pathlib import Path

import orjson

from normalizer.batch.plan import Job
from normalizer.batch.repair import repair_file
from normalizer.batch.results import FileResult
from normalizer.batch.tracking import Tracker
from normalizer.distributed._batch import settings_for
from normalizer.distributed.ray import _run_row
from tests.cli.conftest import EXAMPLE


def test_a_row_of_files_comes_back_as_the_same_results(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(EXAMPLE.read_bytes())
    (src / "b.jsonl").write_bytes(b"not json\n")
    jobs = [(str(src / n), str(tmp_path / "out" / n), False) for n in ("a.jsonl", "b.jsonl")]
    settings = settings_for()
    row = _run_row({"first": 7, "jobs": orjson.dumps(jobs).decode()}, settings=settings, tag="t1")
    assert row["first"] == 7
    results = [FileResult(**data) for data in orjson.loads(row["results"])]
    assert [r.input for r in results] == [j[0] for j in jobs]
    ok, bad = results
    assert ok.error is None and ok.messages_in > 0 and ok.counts and ok.format == "chat"
    assert bad.error is not None and "b.jsonl" in bad.error
    again = repair_file(Job(jobs[0][0], jobs[0][0], str(tmp_path / "again.jsonl")), settings, Tracker(1))
    assert (ok.messages_in, ok.messages_out, ok.counts, ok.format) == (
        again.messages_in, again.messages_out, again.counts, again.format)
    assert (tmp_path / "out" / "a.jsonl").read_bytes() == (tmp_path / "again.jsonl").read_bytes()
