"""The suite's own settings: the anyio backends, the quick loop's ``slow`` tests, and one line
about the real-world data in ``../shared/``.

The quick loop (docs/contributing.md): ``python -m pip install -e '.[test]' && python -m
pytest -m "not slow"``, a few minutes on two cores. What it leaves out is declared once, in
``quick_loop.SLOW``, by test path (a folder, a module, or one test function), each with why.
"""

from __future__ import annotations

import pytest

from quick_loop import SLOW
from realdata import HAVE_SAMPLES, SHARED, SKIP_REASON


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every anyio-marked test runs on asyncio and on trio."""
    return request.param


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    prefixes = tuple(SLOW)
    for item in items:
        if item.nodeid.startswith(prefixes):
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config: pytest.Config) -> str:
    if HAVE_SAMPLES:
        return f"real-world data: {SHARED}"
    return f"real-world data: {SKIP_REASON}: the tests that read it skip"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    # One line, however many tests skipped for it: the data is one thing to fetch, not many.
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SKIP_REASON in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} test(s) skipped: {SKIP_REASON}", yellow=True)
