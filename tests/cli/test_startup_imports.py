"""What starting ``chatnorm`` imports (issue 39's start-up item, issue 41's start-up row).

Modules, not time (benchmarks/startup.py times the same commands): each command runs in a
fresh interpreter through the console script's entry point, and the modules it loaded beyond
the interpreter's own start-up are compared with what it needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
CHAT = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {"role": "assistant", "content": "a"},
]
#: Run as the console script runs: ``normalizer.cli.main(argv)``; then the modules it loaded,
#: less those the interpreter had before (sys and json, loaded to report them, are both).
PROBE = """
import json, sys
before = set(sys.modules)
from normalizer.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    json.dump(sorted(set(sys.modules) - before), f)
"""
#: The third-party packages a command may load, and the engine's: what a command that does
#: not repair or check must not pay for.
THIRD_PARTY = {"click", "rich", "pydantic", "pydantic_core", "anyio", "transitions", "orjson", "ijson",
               "annotated_types", "typing_extensions", "typing_inspection"}
ENGINE = ("normalizer._core", "normalizer.formats", "normalizer.profiles._profiles", "normalizer._options",
          "normalizer.batch.jobs", "normalizer._report")


def loaded(tmp_path: Path, *argv: str) -> set[str]:
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", PROBE, str(out), *argv], cwd=tmp_path, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={"PYTHONPATH": str(ROOT)})
    return set(json.loads(out.read_text()))


def top_level(modules: set[str], among: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules} & among


def chat_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in CHAT), encoding="utf-8")
    return path


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_imports_only_the_version(tmp_path: Path, flag: str) -> None:
    modules = loaded(tmp_path, flag)
    assert {m for m in modules if m.startswith("normalizer")} == {
        "normalizer", "normalizer._compiled", "normalizer._lazy", "normalizer.cli", "normalizer.cli._version"}
    assert top_level(modules, THIRD_PARTY) == set()
    assert "typing" not in modules  # nor typing and re, which `import normalizer` used to pay for


def test_help_imports_click_and_no_engine(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "--help")
    assert top_level(modules, THIRD_PARTY) == {"click"}
    assert [m for m in modules if m.startswith(ENGINE)] == []


def test_repair_of_a_chat_file_imports_no_rich_and_no_anyio(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "repair", "-q", str(chat_file(tmp_path)), "-o", str(tmp_path / "out.jsonl"))
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").count("\n") == 4  # it ran
    third_party = top_level(modules, THIRD_PARTY)
    assert "rich" not in third_party and "anyio" not in third_party  # no terminal; no async
    assert {"click", "orjson"} <= third_party


@pytest.mark.xfail(strict=True, reason="issue 41's start-up row is not met: the options, the report and the "
                                       "built-in profiles are pydantic models (_options.py, _report.py, "
                                       "profiles/_profiles.py), and every repair makes them")
def test_repair_of_a_chat_file_imports_no_pydantic(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "repair", "-q", str(chat_file(tmp_path)), "-o", str(tmp_path / "out.jsonl"))
    assert top_level(modules, THIRD_PARTY) & {"pydantic", "pydantic_core"} == set()
