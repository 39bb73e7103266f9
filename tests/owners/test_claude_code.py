"""Claude Code resumes each Claude Code sample, and each broken variant of two of them, as
the original file and as repaired; its first model request of each is compared (see
drive.py). Every sample of ``../shared/samples/claude_code/`` and ``real/claude_code/`` runs
on every installed version (each resume takes 0.5 to 2 s; the original and the repaired file
resume at once); the variants are made from a 1.0 session (``ccviewer_v1.0.108``), a 2.0 one
(``pai_v2.0.71``; in both, results hang from the line before them) and a 2.1 one
(``spotter_v2.1.38_tool_heavy``: results hang from their ``tool_use`` line). A version
judges only files that it or an older version wrote (see ``drive.too_new``), and no version
resumes a sub-agent transcript (skipped).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from normalizer import repair_session
from normalizer._defaults import DEFAULT_STUB_TEXT

from realdata import HAVE_SAMPLES, SKIP_REASON, sample_files
from .conftest import known_defect, need, owner_params
from .drive import Owner, call_ids, judge, resume, stub_ids, subagent_transcript, too_new, variants

SAMPLES = sample_files("claude_code", "*.jsonl") + sample_files("real/claude_code", "*.jsonl")
BASES = ["ccviewer_v1.0.108", "pai_v2.0.71", "spotter_v2.1.38_tool_heavy"]
OWNERS = owner_params("claude")


def _cases() -> list[Any]:
    cases = [pytest.param(path.name, path.read_bytes(), id=path.stem[:40]) for path in SAMPLES]
    for base in BASES:
        path = next((p for p in SAMPLES if p.name.startswith(base)), None)
        if path is None:
            continue
        for name, data in variants(path.read_bytes(), "claude").items():
            cases.append(pytest.param(f"{base}:{name}", data, id=f"{base}-{name}"))
    return cases or [pytest.param("none", b"", id="no-samples", marks=pytest.mark.skip(reason=SKIP_REASON))]


CASES = _cases()


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("owner", OWNERS)
@pytest.mark.parametrize(("name", "data"), CASES)
def test_resume_keeps_history(owner: Owner | str, name: str, data: bytes, tmp_path: Path,
                              request: pytest.FixtureRequest) -> None:
    """The repaired file's request is valid and holds all the original's did, plus stubs."""
    owner = need(owner)
    if (known := known_defect(request.node.callspec.id, owner)) is not None:
        request.applymarker(known)
    if subagent_transcript(data):
        pytest.skip("a sub-agent transcript (all sidechain): Claude Code resumes sessions, not these")
    if (newer := too_new(owner, data)) is not None:
        pytest.skip(newer)
    judged = judge(owner, data, tmp_path, DEFAULT_STUB_TEXT)
    assert judged.original.request is not None, f"{owner} sent no request for the original: {judged.original.describe()}"
    assert judged.repaired.request is not None, f"{owner} sent no request for the repair: {judged.repaired.describe()}"
    assert judged.violation is None, f"{owner} sent a request the API refuses: {judged.violation}"
    assert not judged.lost, f"{owner}: the repaired file's request lost {judged.lost}"
    assert not judged.gained, f"{owner}: the repaired file's request gained {judged.gained}"
    # A call the repair answered is in the request (with the stub, or with its own result when
    # the stub hangs on a branch the owner does not walk): the owner loaded the kept call.
    unloaded = set(judged.stubs) - call_ids(judged.repaired.request, "claude")
    assert not unloaded, f"{owner} did not load the calls the repair answered with a stub: {sorted(unloaded)}"


STUB_BASES = ["ccviewer_v1.0.108", "pai_v2.0.71", "spotter_v2.1.38_tool_heavy"]


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("owner", OWNERS)
@pytest.mark.parametrize("base", STUB_BASES)
def test_the_kept_call_and_its_stub_are_loaded(owner: Owner | str, base: str, tmp_path: Path) -> None:
    """Issue 35: Claude Code 2.0.76 sent the original's request for a repaired file, the kept
    call and its stub not loaded, while the stub was stamped like its tool_use line (2.0
    resumes from the latest line, a tie going to the first). Stamped 1 ms later, every version
    loads them: the file cut after a call, repaired, resumes with the call and the stub."""
    owner = need(owner)
    path = next((p for p in SAMPLES if p.name.startswith(base)), None)
    if path is None:
        pytest.skip(f"no sample {base}")
    data = path.read_bytes()
    if (newer := too_new(owner, data)) is not None:
        pytest.skip(newer)
    out = io.BytesIO()
    report = repair_session(io.BytesIO(variants(data, "claude")["cut_after_call"]), out)
    stubbed = {r.detail.split()[1] for r in report.records if r.kind == "stub_missing_result"}
    assert len(stubbed) == 1
    resumed = resume(owner, out.getvalue(), tmp_path)
    assert resumed.request is not None, resumed.describe()
    assert stub_ids(resumed.request, "claude", DEFAULT_STUB_TEXT) == stubbed
    assert stubbed <= call_ids(resumed.request, "claude")
