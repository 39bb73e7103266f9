"""Gemini CLI resumes each sample it wrote (``../shared/samples/wild/gemini_cli/``), repaired
in place by chatnorm, against a stub that applies Gemini's pairing rules (``stub.gemini_violation``):
its request must be valid and hold the whole history, each response once, in order; the
unrepaired sample is the control (the stub must answer it with Gemini's 400).

On its own, Gemini CLI 0.61.0 sends every tool result twice on resume (``toolCalls[].result``
and the user record it wrote: google-gemini/gemini-cli#29365), so a session that used a tool
never resumes; a session killed during a tool lost that turn when it was written (calls are
recorded when the batch ends), and resumes as it is: the repair leaves it alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normalizer._report import new_report
from normalizer._stub import DEFAULT_STUB_TEXT
from normalizer.formats._sessions import SessionRepairer

from realdata import HAVE_SAMPLES, SKIP_REASON, sample_files
from .conftest import need, owner_params
from .drive import Owner
from .gemini_drive import request_pieces, resume, session_pieces
from .stub import GEMINI_COUNT, gemini_violation

SAMPLES = sample_files("wild/gemini_cli", "*.jsonl")
OWNERS = owner_params("gemini")
CASES = [pytest.param(p, id=p.stem) for p in SAMPLES] or [pytest.param(None, id="no-samples", marks=pytest.mark.skip(reason=SKIP_REASON))]


def repaired(data: bytes) -> bytes:
    repairer = SessionRepairer(report=new_report())
    return repairer.feed(data) + repairer.close()


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("owner", OWNERS)
@pytest.mark.parametrize("path", CASES)
def test_resume_of_the_repaired_session_is_valid_and_whole(owner: Owner | str, path: Path, tmp_path: Path) -> None:
    owner = need(owner)
    original = path.read_bytes()
    data = repaired(original)
    assert repaired(data) == data  # a second repair changes nothing
    resumed = resume(owner, data, tmp_path / "repaired")
    assert resumed.request is not None, f"{owner} sent no request: {resumed.describe()}"
    assert gemini_violation(resumed.request) is None, f"{owner}: {gemini_violation(resumed.request)}"
    assert resumed.returncode == 0, resumed.describe()
    assert request_pieces(resumed.request) == session_pieces(original)


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("owner", OWNERS)
@pytest.mark.parametrize("path", CASES)
def test_control_the_unrepaired_session(owner: Owner | str, path: Path, tmp_path: Path) -> None:
    """The stub judges: a sample with a tool round gets Gemini's 400 as it is; the one killed
    during a tool (nothing to repair) is accepted as it is."""
    owner = need(owner)
    original = path.read_bytes()
    resumed = resume(owner, original, tmp_path / "original")
    assert resumed.request is not None, f"{owner} sent no request: {resumed.describe()}"
    if path.name == "session-killed-during-tool.jsonl":
        assert repaired(original) == original
        assert (gemini_violation(resumed.request), resumed.returncode) == (None, 0)
    else:
        assert gemini_violation(resumed.request) == GEMINI_COUNT
        assert GEMINI_COUNT in resumed.output
        assert resumed.returncode != 0


def _unanswered(data: bytes) -> bytes:
    """The two-parallel-calls sample as a crash between the calls and their results leaves
    it (the research's "calls, no results" variant): no ``result`` in ``toolCalls``, no user
    record of responses."""
    lines = data.splitlines(keepends=True)
    out = []
    for line in lines:
        value = json.loads(line)
        if value.get("type") == "user" and any("functionResponse" in p for p in value.get("content") or ()):
            continue
        for call in value.get("toolCalls") or ():
            call.pop("result", None)
        out.append(line if not value.get("toolCalls") else json.dumps(value, separators=(",", ":")).encode() + b"\n")
    return b"".join(out)


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("owner", OWNERS)
def test_calls_with_no_result_get_the_stub_and_resume(owner: Owner | str, tmp_path: Path) -> None:
    owner = need(owner)
    path = next((p for p in SAMPLES if p.name == "session-two-parallel-calls.jsonl"), None)
    if path is None:
        pytest.skip(SKIP_REASON)
    broken = _unanswered(path.read_bytes())
    control = resume(owner, broken, tmp_path / "original")
    assert control.request is not None and gemini_violation(control.request) == GEMINI_COUNT, control.describe()
    data = repaired(broken)
    assert repaired(data) == data
    resumed = resume(owner, data, tmp_path / "repaired")
    assert resumed.request is not None and gemini_violation(resumed.request) is None, resumed.describe()
    pieces = request_pieces(resumed.request)
    assert pieces == session_pieces(data)
    stub = json.dumps({"output": DEFAULT_STUB_TEXT}, sort_keys=True)
    assert [p for p in pieces if p.startswith("response")] == [f"response list_directory {stub}", f"response read_file {stub}"]
