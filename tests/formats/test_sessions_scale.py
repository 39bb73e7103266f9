"""The own-format session repair on the shapes a sweep found quadratic, pinned at small sizes.

Late results (a turn of k calls, the user's next message, then the k results), many lines
held while many calls are open, and a long run of removed results that later lines branch
from. Each is checked against a straightforward expectation of the whole output (every line,
its ``parentUuid``, every record), and the work is counted, not timed: the open calls scanned
and the removed-line entries looked up must not grow with the lines read while they wait.
The limit on what a wait holds (``max_held_bytes``) covers the results moving up too.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest

import normalizer
from normalizer import LimitExceeded
from normalizer.formats import _session_lines, _sessions
from normalizer.formats._records import BOM
from normalizer.formats._sessions import SessionRepairer

STUB = normalizer.DEFAULT_STUB_TEXT
ENV = {"isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "s-1", "version": "2.0.64", "gitBranch": "main"}
NAMESPACE = uuid.UUID("6f3c3b2e-4a43-5c1b-9a2e-636861746e6f")

Line = dict[str, Any]


def repaired(data: bytes, **options: Any) -> tuple[bytes, normalizer.Report]:
    repairer = SessionRepairer(**options)
    return repairer.feed(data) + repairer.close(), repairer.report


def dumps(values: list[Line]) -> bytes:
    return b"".join(orjson.dumps(v) + b"\n" for v in values)


def records(report: normalizer.Report) -> list[tuple[str, int | None, int | None]]:
    return [(r.kind, r.line, r.output) for r in report.records]


# -- Claude Code lines ----------------------------------------------------------------------------


def cc(kind: str, u: str, parent: str | None, message: Any = None, **extra: Any) -> Line:
    line: Line = {"parentUuid": parent, **ENV, "type": kind}
    if message is not None:
        line["message"] = message
    return {**line, "uuid": u, "timestamp": f"ts-{u}", **extra}


def prompt(u: str, parent: str | None, text: str = "go on") -> Line:
    return cc("user", u, parent, {"role": "user", "content": text})


def call(u: str, parent: str | None, call_id: str) -> Line:
    return cc("assistant", u, parent, {"model": "claude-sonnet-4-5", "id": "msg_1", "type": "message", "role": "assistant",
                                       "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"i": call_id}}]})


def result(u: str, parent: str | None, call_id: str) -> Line:
    return cc("user", u, parent, {"role": "user", "content": [{"tool_use_id": call_id, "type": "tool_result", "content": f"out {call_id}"}]})


def answer(u: str, parent: str | None) -> Line:
    return cc("assistant", u, parent, {"model": "claude-sonnet-4-5", "id": "msg_2", "type": "message", "role": "assistant",
                                       "content": [{"type": "text", "text": "done"}]})


def info(u: str, parent: str | None) -> Line:
    return cc("system", u, parent, subtype="info")


def snapshot(i: int) -> Line:
    return {"type": "file-history-snapshot", "messageId": f"snap-{i}", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False}


def stub(call_line: Line, call_id: str, stamp: str) -> Line:
    """The synthetic result of a 2.0 session (it hangs from the line before it: set later)."""
    envelope = {k: v for k, v in call_line.items() if k not in ("parentUuid", "type", "message", "uuid", "timestamp")}
    return {"parentUuid": None, **envelope, "type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": STUB, "is_error": True}]},
        "uuid": str(uuid.uuid5(NAMESPACE, f"{call_line['uuid']}/{call_id}")), "timestamp": stamp, "toolUseResult": f"Error: {STUB}"}


def chained(order: list[tuple[Line, int, str]]) -> tuple[bytes, list[tuple[str, int | None, int | None]]]:
    """The expected output of lines that each hung from the line before them in the file:
    ``(line, its line number, what it is)`` in output order, each hung from the chain line
    written before it, and the records that says (in the order the repairer writes them)."""
    out: list[Line] = []
    expected: list[tuple[str, int | None, int | None]] = []
    previous = None
    for n, (value, number, what) in enumerate(order):  # n: the 0-based place in the output
        if "uuid" in value:
            if value["parentUuid"] != previous and what != "stub":
                expected.append(("repoint_parent", number, n))
            value = {**value, "parentUuid": previous}
            previous = value["uuid"]
        if what in ("move_result", "stub"):
            expected.append(("stub_missing_result" if what == "stub" else what, number, n))
        out.append(value)
    return dumps(out), expected


def late_results(k: int, missing: set[int]) -> tuple[list[Line], list[tuple[Line, int, str]]]:
    """A turn of k calls, the user's next message, the results (but ``missing``) in call
    order, then an answer; and the repair expected: the results moved up whole to their
    calls, a synthetic one for each missing, then the message."""
    lines = [prompt("u0", None, "start")]
    calls = [call(f"c{i}", "u0" if i == 0 else f"c{i - 1}", f"t{i}") for i in range(k)]
    lines += calls
    lines.append(prompt("h", f"c{k - 1}", "hurry up"))
    results = [result(f"r{i}", None, f"t{i}") for i in range(k) if i not in missing]
    for i, r in enumerate(results):
        r["parentUuid"] = lines[-1]["uuid"] if i == 0 else results[i - 1]["uuid"]
        lines.append(r)
    lines.append(answer("a", lines[-1]["uuid"]))
    number = {line["uuid"]: n for n, line in enumerate(lines, 1)}
    order = [(line, number[line["uuid"]], "") for line in lines[: k + 1]]
    order += [(r, number[r["uuid"]], "move_result") for r in results]
    order += [(stub(calls[i], f"t{i}", calls[-1]["timestamp"]), number[f"c{i}"], "stub") for i in sorted(missing)]
    order += [(lines[k + 1], k + 2, ""), (lines[-1], len(lines), "")]
    return lines, order


@pytest.mark.parametrize("k, missing", [(1, set()), (2, {0}), (7, set()), (7, {1, 4}), (30, {0, 29}), (30, set(range(0, 30, 3)))])
def test_late_claude_code_results_move_up_whole_in_order(k: int, missing: set[int]) -> None:
    lines, order = late_results(k, missing)
    out, report = repaired(dumps(lines))
    expected, expected_records = chained(order)
    assert out == expected
    assert records(report) == expected_records


@pytest.mark.parametrize("k, missing", [(1, set()), (7, set()), (30, {3, 17})])
def test_late_codex_outputs_move_up_whole_in_order(k: int, missing: set[int]) -> None:
    def cx(payload: dict[str, Any], ts: str = "t") -> Line:
        return {"timestamp": ts, "type": "response_item", "payload": payload}

    def user(text: str) -> Line:
        return cx({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})

    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "r-1", "cwd": "/repo", "cli_version": "0.57.0"}}
    calls = [cx({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{i}"}, f"t{i}") for i in range(k)]
    outputs = [cx({"type": "function_call_output", "call_id": f"c{i}", "output": f"r{i}"}) for i in range(k) if i not in missing]
    done = cx({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]})
    stubs = [cx({"type": "function_call_output", "call_id": f"c{i}", "output": STUB}, f"t{k - 1}") for i in sorted(missing)]
    out, report = repaired(dumps([meta, user("go"), *calls, user("hurry"), *outputs, done]))
    assert out == dumps([meta, user("go"), *calls, *outputs, *stubs, user("hurry"), done])
    moved = [("move_result", k + 4 + i, k + 2 + i) for i in range(len(outputs))]
    added = [("stub_missing_result", 3 + i, k + 2 + len(outputs) + n) for n, i in enumerate(sorted(missing))]
    assert records(report) == moved + added


@pytest.mark.parametrize("n, m", [(1, 3), (20, 50)])
def test_lines_held_while_many_calls_are_open_are_written_after_their_results(n: int, m: int) -> None:
    calls = [call(f"c{i}", "u0" if i == 0 else f"c{i - 1}", f"t{i}") for i in range(n)]
    lines = [prompt("u0", None, "start"), *calls, prompt("h", f"c{n - 1}", "hurry up"), *map(snapshot, range(m)), answer("a", "h")]
    out, report = repaired(dumps(lines))
    order = [(line, i, "") for i, line in enumerate(lines[: n + 1], 1)]
    order += [(stub(c, f"t{i}", calls[-1]["timestamp"]), i + 2, "stub") for i, c in enumerate(calls)]
    order += [(line, i, "") for i, line in enumerate(lines[n + 1 :], n + 2)]
    expected, expected_records = chained(order)
    assert out == expected
    assert records(report) == expected_records


@pytest.mark.parametrize("k", [1, 5, 40])
def test_lines_branching_from_a_run_of_removed_results_hang_from_the_line_above_it(k: int) -> None:
    orphans = [result(f"o{i}", "a0" if i == 0 else f"o{i - 1}", f"gone{i}") for i in range(k)]
    branches = [info(f"b{i}", f"o{k - 1}") for i in range(k)]
    head = [prompt("u0", None, "start"), answer("a0", "u0")]
    out, report = repaired(dumps([*head, *orphans, info("f", None), *branches]))
    assert out == dumps([*head, info("f", None), *(info(f"b{i}", "a0") for i in range(k))])
    assert records(report) == ([("drop_orphan_result", 3 + i, None) for i in range(k)]
                               + [("repoint_parent", 4 + k + i, 3 + i) for i in range(k)])
    assert [r.dropped for r in report.records[:k]] == [orjson.dumps(o).decode() for o in orphans]


def test_a_removed_line_is_followed_to_the_line_that_survives_even_when_it_came_later() -> None:
    # o1 names o2, written after it, as its parent; o2 is removed too, after o1 was: a line
    # that names o1 hangs from o2's parent, the first time and after (the walk is shortened).
    head = [prompt("u0", None, "start"), answer("a0", "u0")]
    lines = [*head, result("o1", "o2", "gone1"), result("o2", "a0", "gone2"), info("f", None), info("b1", "o1"), info("b2", "o1"),
             info("b3", "o2")]
    out, _ = repaired(dumps(lines))
    assert out == dumps([*head, info("f", None), info("b1", "a0"), info("b2", "a0"), info("b3", "a0")])


def test_removed_lines_that_lead_back_to_themselves_leave_their_children_at_the_root() -> None:
    # A loop of removed lines (o1 <-> o2) and a line that is its own parent: nothing above
    # them survives (the walk used to go round the loop for ever).
    head = [prompt("u0", None, "start"), answer("a0", "u0")]
    lines = [*head, result("o1", "o2", "g1"), result("o2", "o1", "g2"), result("s", "s", "g3"), info("f", "a0"), info("b1", "o1"),
             info("b2", "o2"), info("b3", "s")]
    out, report = repaired(dumps(lines))
    assert out == dumps([*head, info("f", "a0"), info("b1", None), info("b2", None), info("b3", None)])
    assert [r.kind for r in report.records] == ["drop_orphan_result"] * 3 + ["repoint_parent"] * 3


# -- the work per line, counted -------------------------------------------------------------------


def scanned_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calls each listing of a turn's open calls goes through."""
    scans: list[int] = []
    original = _session_lines.Turn.unanswered

    def counting(self: Any) -> list[Any]:
        scans.append(len(self.calls))
        return original(self)

    monkeypatch.setattr(_session_lines.Turn, "unanswered", counting)
    return scans


@pytest.mark.parametrize("k", [10, 200])
def test_late_results_do_not_scan_the_open_calls_again_for_every_line(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    scans = scanned_calls(monkeypatch)
    lines, _ = late_results(k, {k // 2})
    repaired(dumps(lines))
    # Each call once, when the turn ends (for the synthetic result), not once per line read
    # while the turn waits (k * k).
    assert sum(scans) == k


@pytest.mark.parametrize("n, m", [(10, 10), (10, 1000), (500, 1000)])
def test_held_lines_do_not_scan_the_open_calls(monkeypatch: pytest.MonkeyPatch, n: int, m: int) -> None:
    scans = scanned_calls(monkeypatch)
    calls = [call(f"c{i}", "u0" if i == 0 else f"c{i - 1}", f"t{i}") for i in range(n)]
    repaired(dumps([prompt("u0", None, "start"), *calls, prompt("h", f"c{n - 1}", "hurry up"), *map(snapshot, range(m)), answer("a", "h")]))
    assert sum(scans) == n  # not n per held line


class CountingDict(dict[str, Any]):
    """A dict that counts its lookups by key."""

    lookups = 0

    def __getitem__(self, key: str) -> Any:
        CountingDict.lookups += 1
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        CountingDict.lookups += 1
        return super().__contains__(key)


@pytest.mark.parametrize("k", [10, 300])
def test_a_line_that_names_a_removed_one_does_not_walk_the_whole_run(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    monkeypatch.setattr(CountingDict, "lookups", 0)
    orphans = [result(f"o{i}", "a0" if i == 0 else f"o{i - 1}", f"gone{i}") for i in range(k)]
    data = dumps([prompt("u0", None, "start"), answer("a0", "u0"), *orphans, info("f", None), *(info(f"b{i}", f"o{k - 1}") for i in range(k))])
    repairer = SessionRepairer()
    repairer._removed = CountingDict()
    out = repairer.feed(data) + repairer.close()
    assert out.count(b'"parentUuid":"a0"') == k
    assert CountingDict.lookups <= 6 * k  # a few per removed line and per branch: not one per removed line each (k * k)


# -- what a wait holds ----------------------------------------------------------------------------


def test_results_moving_up_count_against_max_held_bytes() -> None:
    lines, _ = late_results(6, set())
    data = dumps(lines)
    calls = sum(len(orjson.dumps(line)) for line in lines[1:7])  # the turn's lines of calls, kept until it ends
    held = len(orjson.dumps(lines[7]))  # the user's message after the calls (line 8): the wait starts there
    sizes = [len(orjson.dumps(line)) for line in lines[8:14]]  # the results, lines 9 to 14
    # Room for the calls, the message and three results: the fourth one (line 12) is past the limit.
    limit = calls + held + sum(sizes[:3]) + sizes[3] // 2
    with pytest.raises(LimitExceeded) as exc:
        repaired(data, max_held_bytes=limit)
    assert (exc.value.limit, exc.value.value, exc.value.line) == ("max_held_bytes", limit, 12)
    assert str(exc.value) == (
        f"<input>:12: the late results moving up to their calls, with the lines of the calls and the lines held from "
        f"line 8 on (the user's message they came after), come to more than max_held_bytes ({limit} bytes). Raise max_held_bytes (in Python: "
        "repair_session(..., max_held_bytes=N)) if this session really has that much tool output after the user's next message")
    # With room for all six, the same file is repaired as without a limit.
    assert repaired(data, max_held_bytes=calls + held + sum(sizes)) == repaired(data)


def test_a_held_line_past_the_limit_counts_the_results_moved_before_it() -> None:
    # Two results moved up, then a held line that brings the wait past the limit (alone it
    # would not): the wait ends there, as it does for held lines, with no error.
    lines, _ = late_results(3, set())
    lines.insert(7, snapshot(0))  # after the first two results
    held, results = len(orjson.dumps(lines[4])), len(orjson.dumps(lines[5])) + len(orjson.dumps(lines[6]))
    calls = sum(len(orjson.dumps(line)) for line in lines[1:4])  # (kept until the turn ends: the same budget)
    _, report = repaired(dumps(lines), max_held_bytes=calls + held + results + len(orjson.dumps(snapshot(0))) - 1)
    assert [r.kind for r in report.records] == ["repoint_parent", "move_result", "move_result", "stub_missing_result",
                                               "repoint_parent", "drop_orphan_result", "repoint_parent"]
    assert report.records[3].detail.startswith("call t2 ")


# -- lines kept as bytes ----------------------------------------------------------------------------


def test_a_call_on_a_first_line_with_a_bom_still_lends_its_envelope_to_its_synthetic_result() -> None:
    # Calls waiting for their results are kept as bytes and read again for their synthetic
    # result: the byte-order mark of a first line is not JSON.
    first = call("c0", None, "t0")
    data = BOM + dumps([first])
    out, report = repaired(data)
    assert out == data + dumps([{**stub(first, "t0", "ts-c0"), "parentUuid": "c0"}])
    assert [r.kind for r in report.records] == ["stub_missing_result"]
