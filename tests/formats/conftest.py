from __future__ import annotations

from pathlib import Path

import pytest

from realdata import HAVE_SAMPLES, SAMPLES, SKIP_REASON


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every anyio-marked test of the formats runs on asyncio and on trio."""
    return request.param


@pytest.fixture
def samples() -> Path:
    if not HAVE_SAMPLES:
        pytest.skip(SKIP_REASON)
    return SAMPLES
