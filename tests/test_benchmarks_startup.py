"""benchmarks/startup.py runs every command it times, and reports each (no timing asserted)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks import startup


def test_every_row_runs_and_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    real = startup.run_once

    def run_once(argv: list[str], env: dict[str, str]) -> startup.Timing:
        seen.append(argv)
        return real(argv, env)

    monkeypatch.setattr(startup, "run_once", run_once)
    runs = startup.measure(1)
    assert list(runs) == [row.name for row in startup.ROWS]
    assert [len(ts) for ts in runs.values()] == [1] * len(startup.ROWS)
    assert len(seen) == 2 * len(startup.ROWS)  # a warm-up round, then the counted one
    assert all("{file}" not in " ".join(argv) for argv in seen)
    lines = startup.table(runs, {}).splitlines()
    assert [line.split(" | ")[0].lstrip("| ") for line in lines[2:]] == [row.name for row in startup.ROWS]
    assert [t.split(":")[0] for t in startup.targets(runs)] == [
        "chatnorm --version under 0.1 s", f"chatnorm repair of {startup.MESSAGES} messages under 0.25 s",
        "chatnorm repair at most 2x the bare copy"]


def test_the_commands_succeed(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    startup.write_jsonl(chat, startup.clean_messages(startup.MESSAGES, seed=1))
    env = {"PYTHONPATH": str(startup.ROOT)}
    for row in startup.ROWS:
        argv = [a.replace("{file}", str(chat)) for a in row.argv]
        done = subprocess.run(argv, cwd=startup.ROOT, env=env, capture_output=True, check=False)
        assert done.returncode == 0, (row.name, done.stderr[-500:])
