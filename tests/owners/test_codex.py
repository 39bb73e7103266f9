"""Codex resumes each Codex rollout sample, and each broken variant of two of them, as the
original file and as repaired; its first model request of each is compared (see drive.py).
Every sample of ``../shared/samples/codex_rollout/`` and ``real/codex/`` runs on every
installed version that is not older than the one that wrote it (``drive.too_new``: 0.57.0
judges the 0.44 and 0.57 rollouts, 0.171.0 all five); each resume takes under a second. The
variants are made from ``moonmind`` (written by 0.57.0, with ``custom_tool_call`` items:
both versions judge them) and ``codemie ... v0.125.0`` (parallel calls: 0.171.0 only).

On its own, Codex answers an unanswered call with its own output ``"aborted"`` and leaves
out an output whose call is gone: the original's request is already valid; the repair must
keep everything and replace ``"aborted"`` with its stub (see ``drive.compare``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from normalizer._defaults import DEFAULT_STUB_TEXT

from realdata import HAVE_SAMPLES, SKIP_REASON, sample_files
from .conftest import known_defect, need, owner_params
from .drive import Owner, judge, stub_ids, too_new, variants

SAMPLES = sample_files("codex_rollout", "*.jsonl") + sample_files("real/codex", "*.jsonl")
BASES = ["moonmind_rollout", "codemie_rollout-2026-05-11T11-26-55_v0.125.0"]
OWNERS = owner_params("codex")

def _cases() -> list[Any]:
    cases = [pytest.param(path.read_bytes(), id=path.stem[:40]) for path in SAMPLES]
    for base in BASES:
        path = next((p for p in SAMPLES if p.name.startswith(base)), None)
        if path is None:
            continue
        for name, data in variants(path.read_bytes(), "codex").items():
            cases.append(pytest.param(data, id=f"{base[:24]}-{name}"))
    return cases or [pytest.param(b"", id="no-samples", marks=pytest.mark.skip(reason=SKIP_REASON))]


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("owner", OWNERS)
@pytest.mark.parametrize("data", _cases())
def test_resume_keeps_history(owner: Owner | str, data: bytes, tmp_path: Path,
                              request: pytest.FixtureRequest) -> None:
    """The repaired rollout's request is valid and holds all the original's did, its stubs
    where Codex put ``"aborted"``."""
    owner = need(owner)
    if (known := known_defect(request.node.callspec.id, owner)) is not None:
        request.applymarker(known)
    if (newer := too_new(owner, data)) is not None:
        pytest.skip(newer)
    judged = judge(owner, data, tmp_path, DEFAULT_STUB_TEXT)
    assert judged.original.request is not None, f"{owner} sent no request for the original: {judged.original.describe()}"
    assert judged.repaired.request is not None, f"{owner} sent no request for the repair: {judged.repaired.describe()}"
    assert judged.violation is None, f"{owner} sent a request the API refuses: {judged.violation}"
    assert not judged.lost, f"{owner}: the repaired rollout's request lost {judged.lost}"
    assert not judged.gained, f"{owner}: the repaired rollout's request gained {judged.gained}"
    unloaded = set(judged.stubs) - stub_ids(judged.repaired.request, "codex", DEFAULT_STUB_TEXT)
    assert not unloaded, f"{owner} did not send the repair's stub outputs for {sorted(unloaded)}"
