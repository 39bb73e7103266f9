from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every anyio-marked test runs on asyncio and on trio."""
    return request.param
