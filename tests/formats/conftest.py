from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every anyio-marked test of the formats runs on asyncio and on trio."""
    return request.param


@pytest.fixture
def samples() -> Path:
    return SAMPLES
