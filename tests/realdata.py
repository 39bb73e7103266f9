"""Where the real-world data lives: ``../shared/`` beside the checkout, never copied here.

The session samples, chat templates and peer cases come from other people's public
repositories. Tests read them in place; in a clone without ``../shared/`` the tests that
need them skip with this reason, and CI, which has it, runs them all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CHATNORM_SHARED", ROOT.parent / "shared")).resolve()
SAMPLES = SHARED / "samples"
TEMPLATES = SHARED / "validators" / "templates"
PEER_CASES = SHARED / "peers" / "cases.json"

SKIP_REASON = (
    f"real-world data not found at {SHARED} (it lives in ../shared/ beside the checkout; "
    "set CHATNORM_SHARED to point elsewhere)"
)
HAVE_SAMPLES = SAMPLES.is_dir()

needs_samples = pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)


def sample_files(sub: str, pattern: str) -> list[Path]:
    """The sample files under ``SAMPLES/sub`` matching ``pattern`` (empty without shared/)."""
    if not HAVE_SAMPLES:
        return []
    return sorted(p for p in (SAMPLES / sub).glob(pattern) if p.is_file())
