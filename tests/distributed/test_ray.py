"""Ray Data, when Ray is installed (it is not in the test extra: ~590 MB with pyarrow and
pandas; see pyproject). One local Ray for the module (2 CPUs, no dashboard), shut down at
the end. Files come out byte for byte as one process writes them, with the same merged
report; lines read with ``read_text`` come out as the command line writes them, in order
when asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import run
from tests.distributed.conftest import inputs, leftovers, same_report, same_tree

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from normalizer.distributed.ray import repair_files, repair_text  # noqa: E402

# Ray warns about its own deprecated settings as it starts and copies its contexts.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray", "ignore::FutureWarning:ray")


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


def test_files_are_byte_identical_and_the_report_merges(corpus: Path, tmp_path: Path):
    srcs = inputs(corpus)
    dsts = [tmp_path / "out" / p.relative_to(corpus / "in") for p in srcs]
    results = repair_files(srcs, dsts, report=tmp_path / "report.json")
    assert [r.input for r in results] == [str(p) for p in srcs]
    same_tree(corpus / "expected", tmp_path / "out")
    same_report(tmp_path / "report.json", corpus / "expected.json")
    assert leftovers(tmp_path) == []


def test_lines_read_as_text_come_out_in_order_as_the_cli_writes_them(corpus: Path):
    train = sorted((corpus / "in" / "train").glob("*.jsonl"))
    ds = repair_text(ray.data.read_text([str(p) for p in train]), preserve_order=True, batch_size=256)
    got = "".join(row["text"] + "\n" for row in ds.take_all()).encode()
    assert got == b"".join(run("repair", "-q", p).stdout for p in train)


def test_a_session_cut_into_rows_is_refused(corpus: Path):
    sessions = sorted((corpus / "in" / "sessions").rglob("*.jsonl"))[:2]
    ds = repair_text(ray.data.read_text([str(p) for p in sessions]))
    with pytest.raises(Exception, match="these rows read as chat, one conversation for the whole batch") as info:
        ds.take_all()
    assert "Repair session files with normalizer.distributed.ray.repair_files" in str(info.value)
