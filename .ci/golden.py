"""Same output as before a restructuring: record every case's output once, compare later.

    python .ci/golden.py record /tmp/golden     # on the commit before the change
    python .ci/golden.py compare /tmp/golden    # on the changed tree: lists every difference

A case is one input through one path, and its result holds everything a user sees: the
repaired messages (or the CLI's bytes), the report's records and ``check``'s findings.

- every sample under ``../shared/samples`` (the formats not read yet left out), through
  ``chatnorm repair`` with its defaults (sessions in their own format), with ``--to jsonl``
  under every profile, through ``--check`` and ``--diff``, and through ``chatnorm check``
  under every profile;
- every peer case of ``../shared/peers/cases.json`` and 400 seeded hypothesis histories of
  ``tests/test_properties.py``, repaired with every profile and two option sets, the output
  checked with the same profile and the input checked with it too.

The results are written as one JSON file a case (gitignored: they derive from other people's
samples), so ``diff`` shows what changed. Exit 1 when anything differs.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import normalizer  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from normalizer.cli._main import cli  # noqa: E402

from realdata import PEER_CASES, SAMPLES  # noqa: E402

Case = Callable[[], Any]
OPTION_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "keep": {"orphan_results": "keep_as_user", "trailing_calls": "keep"},
}


def _run_cli(args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        writes = args[0] == "repair" and not {"--check", "--diff"} & set(args)
        result = CliRunner().invoke(cli, [*args, "--report", str(report)] if writes else args)
        return {
            "exit": result.exit_code,
            "stdout": result.stdout,
            "stderr": _TIMES.sub("<time>", result.stderr),
            "report": _timeless(json.loads(report.read_text())) if report.exists() else None,
        }


# What changes from run to run: the time a run took.
_TIMES = re.compile(r"\d+(\.\d+)? ?(ms|s)\b")


def _timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _sample_cases() -> Iterator[tuple[str, Case]]:
    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "SOURCES.md")
    for path in files:
        name = "sample/" + str(path.relative_to(SAMPLES)).replace("/", "__")
        file = str(path)
        yield f"{name}/repair", lambda file=file: _run_cli(["repair", file])
        yield f"{name}/repair-check", lambda file=file: _run_cli(["repair", "--check", file])
        yield f"{name}/repair-diff", lambda file=file: _run_cli(["repair", "--diff", file])
        for profile in normalizer.PROFILES:
            yield f"{name}/to-jsonl-{profile}", lambda file=file, p=profile: _run_cli(
                ["repair", "--to", "jsonl", "--profile", p, file]
            )
            yield f"{name}/check-{profile}", lambda file=file, p=profile: _run_cli(
                ["check", "--output-format", "json", "--profile", p, file]
            )


def _repaired(messages: list[Any], profile: str, options: dict[str, Any]) -> dict[str, Any]:
    try:
        out = normalizer.repair(messages, profile=profile, **options)
        output = list(out)
    except normalizer.NormalizerError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "output": output,
        "records": out.report.model_dump(mode="json"),
        "check_output": [v.model_dump() for v in normalizer.check(output, profile=profile)],
        "check_input": _check(messages, profile),
    }


def _check(messages: list[Any], profile: str) -> Any:
    try:
        return [v.model_dump() for v in normalizer.check(messages, profile=profile)]
    except normalizer.NormalizerError as exc:
        return f"{type(exc).__name__}: {exc}"


def _history_cases(prefix: str, histories: list[list[Any]]) -> Iterator[tuple[str, Case]]:
    for n, history in enumerate(histories):
        for profile in normalizer.PROFILES:
            for label, options in OPTION_SETS.items():
                yield f"{prefix}/{n:03d}/{profile}-{label}", (
                    lambda h=history, p=profile, o=options: _repaired(h, p, o)
                )


def _peer_histories() -> list[list[Any]]:
    from normalizer.formats import read_messages

    histories = []
    for case in json.loads(PEER_CASES.read_text(encoding="utf-8")):
        try:
            if (case.get("expect") or {}).get("via") == "responses":  # (the reader a case names is under expect)
                histories.append(list(read_messages(case["input"], format="responses")))
            else:
                histories.append(case["input"])
        except normalizer.NormalizerError:
            continue
    return histories


def _hypothesis_histories(count: int = 400) -> list[list[Any]]:
    from hypothesis import HealthCheck, given, seed, settings

    from test_properties import histories

    drawn: list[list[Any]] = []

    @seed(20261205)
    @settings(max_examples=count, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(histories)
    def draw(history: list[Any]) -> None:
        drawn.append(json.loads(json.dumps(history)))

    draw()
    return drawn


def cases() -> Iterator[tuple[str, Case]]:
    yield from _sample_cases()
    yield from _history_cases("peer", _peer_histories())
    yield from _history_cases("hypothesis", _hypothesis_histories())


def _file(folder: Path, name: str) -> Path:
    return folder / (hashlib.sha1(name.encode()).hexdigest()[:16] + ".json")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("record", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    command, folder = argv[0], Path(argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    differ = 0
    total = 0
    for name, case in cases():
        total += 1
        text = json.dumps({"case": name, "result": case()}, indent=1, ensure_ascii=False, sort_keys=True)
        path = _file(folder, name)
        if command == "record":
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            differ += 1
            path.with_suffix(".new").write_text(text, encoding="utf-8")
            print(f"differs: {name}  (diff {path} {path.with_suffix('.new')})")
    print(f"{total} cases, {differ} differ", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
