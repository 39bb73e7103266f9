"""The frameworks are optional: ``import normalizer`` (and its command line, and the
integrations package itself) imports none of them; each adapter imports only its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("litellm", "agents", "langchain", "pydantic_ai")


def _imported_after(statement: str) -> list[str]:
    """The frameworks (top-level packages) a fresh interpreter holds after ``statement``."""
    code = (
        f"import sys\n{statement}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(FRAMEWORKS)!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return eval(done.stdout)  # a printed list of names


def test_import_normalizer_imports_no_framework() -> None:
    # The issue's own check, as it is written there.
    subprocess.run(
        [sys.executable, "-c",
         "import normalizer, sys; assert not any(m.startswith(('litellm','agents','langchain','pydantic_ai')) for m in sys.modules)"],
        check=True,
    )


@pytest.mark.parametrize("statement", [
    "import normalizer, normalizer.formats, normalizer.profiles",
    "import normalizer.cli",
    "import normalizer.integrations, normalizer.integrations._common",
])
def test_the_package_imports_no_framework(statement: str) -> None:
    assert _imported_after(statement) == []


@pytest.mark.parametrize(("module", "framework"), [
    ("litellm", "litellm"),
    ("openai_agents", "agents"),
    ("langchain", "langchain"),
    ("pydantic_ai", "pydantic_ai"),
])
def test_each_adapter_imports_its_own_framework_only(module: str, framework: str) -> None:
    pytest.importorskip(framework, reason=f"{framework} is not installed")
    assert _imported_after(f"import normalizer.integrations.{module}") == [framework]
