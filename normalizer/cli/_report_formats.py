"""``chatnorm check --output-format``: the findings as people and CI tools read them.

* ``text`` (default): one line per finding, ``FILE:LINE:COL: message N: CODE [key] text``,
  a root cause's consequences indented under it; colour on a terminal.
* ``concise``: one line per violation, ``FILE:LINE:COL: CODE text``, a violation folded
  under a root cause ending in ``[NZ-1 turn.split]`` (so the lines are the violations counted).
* ``json``: a JSON list, one finding a line: ``code``, ``key``, ``message``, ``file``,
  ``line``, ``column``, ``fixable``, ``severity``, ``message_index``, ``conversation``,
  ``provider`` and ``cause`` (the root cause a violation is folded under, or null). Root
  causes are listed too (code ``NZ-...``), each before its consequences.
* ``github``: GitHub Actions workflow commands, ``::error file=F,line=L,col=C,title=T::text``,
  one per problem (a root cause lists its consequences in its text).
* ``sarif``: a SARIF 2.1.0 log: the profile's rules in ``tool.driver.rules``, one result
  per finding (a consequence points at its root cause in ``relatedLocations``).

Every format is written as files are checked (nothing waits for the end but the closing
brackets), so memory does not grow with the number of files. Human text goes through
``printable`` (escapes); JSON and SARIF are data and keep it as it is.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import quote

import orjson

from .. import __version__
from ..profiles import KEYS, RULES
from ._findings import CAUSES, OTHER_CODES, Finding, Root
from ._text import printable, say

__all__ = ["FORMATS", "Summary", "make_output", "Output"]

FORMATS = ["text", "concise", "json", "github", "sarif"]

_URI = "https://github.com/chat-normalizer/chat-normalizer"


@dataclass
class Summary:
    """What the run found, for the last lines."""

    files: int = 0
    bad_files: int = 0
    failed: int = 0
    messages: int = 0
    violations: int = 0  # provider-level findings (roots not counted)
    problems: int = 0  # top-level findings: roots and violations on their own
    warnings: int = 0
    fixable: int = 0  # problems the repair fixes
    incomplete: int = 0
    profile: str = "default"
    training: bool = False
    repair: str = "chatnorm repair"


def _text(finding: Finding) -> str:
    return finding.describe()  # a root cause's sentence is made from what it holds


def _where(finding: Finding) -> str:
    where = finding.file if finding.line is None else f"{finding.file}:{finding.line}:{finding.column or 1}"
    what = [] if finding.conversation is None else [f"conversation {finding.conversation}"]
    if finding.session is not None:
        what.append(f"(session {finding.session})")
    if finding.index is not None:
        what.append(f"message {finding.index}")
    elif finding.conversation is None and finding.code != "input":
        what.append("the history")
    return f"{where}: {' '.join(what)}" if what else where


class Output:
    """The null output; subclasses write one format."""

    def __init__(self, stream: IO[str], *, statistics: bool = False) -> None:
        self.stream = stream
        self.statistics = statistics
        self.counts: Counter[str] = Counter()
        self.fixable_codes: dict[str, bool] = {}

    def count(self, findings: list[Finding]) -> None:
        """Count the violations by code (a root cause counts its violations, not itself:
        the rows of ``--statistics`` add up to the summary's violations)."""
        for finding in findings:
            for one in finding.consequences if isinstance(finding, Root) else [finding]:
                self.counts[one.code] += 1
                self.fixable_codes[one.code] = one.fixable

    def begin(self, rules: list[str]) -> None:
        pass

    def file(self, name: str, findings: list[Finding], omitted: int) -> None:
        pass

    def unreadable(self, finding: Finding) -> None:
        """A file that could not be read (said on stderr by every format; data formats list it too)."""

    def end(self, summary: Summary, quiet: bool) -> None:
        pass

    def write(self, text: str) -> None:
        self.stream.write(text)

    def statistics_table(self) -> None:
        for code, n in sorted(self.counts.items(), key=lambda item: (-item[1], item[0])):
            mark = "[*]" if self.fixable_codes.get(code) else "   "
            self.write(printable(f"{n:>5,}\t{code:<7}\t{mark} {_key_of(code)}") + "\n")


def _key_of(code: str) -> str:
    if code in RULES:
        return RULES[code].keys[0] if len(RULES[code].keys) == 1 else ", ".join(RULES[code].keys)
    if code in CAUSES:
        return CAUSES[code][0]
    return OTHER_CODES.get(code, (code, ""))[0]


def _summary_lines(summary: Summary) -> list[str]:
    if summary.violations:
        text = f"{summary.violations:,} violation{'s' if summary.violations != 1 else ''}"
        if summary.problems != summary.violations:
            text += f" ({summary.problems:,} problem{'s' if summary.problems != 1 else ''})"
        text += f" in {summary.bad_files:,} of {summary.files:,} file(s)"
        if summary.warnings:
            text += f" ({summary.warnings:,} warning{'s' if summary.warnings != 1 else ''})"
    elif summary.failed:  # a file not read was not found clean
        text = (f"no violations in the {summary.files - summary.failed:,} other file(s), "
                f"{summary.messages:,} messages")
    else:
        text = f"no violations: {summary.files:,} file(s), {summary.messages:,} messages"
    text += f" [profile {summary.profile}{', training data' if summary.training else ''}]"
    if summary.failed and summary.violations:
        text += f"; {summary.failed:,} file(s) could not be read"
    elif summary.failed:
        text = f"{summary.failed:,} file(s) could not be read; {text}"
    if summary.incomplete:
        text += f"; check incomplete for {summary.incomplete:,} file(s) (--max-seen-ids)"
    lines = [text]
    if summary.fixable:
        lines.append(f"{summary.fixable:,} fixable with `{summary.repair}` (add --diff to see the changes first)")
    return lines


class _TextOutput(Output):
    def __init__(self, stream: IO[str], *, statistics: bool = False, colour: bool = False, concise: bool = False) -> None:
        super().__init__(stream, statistics=statistics)
        self.colour = colour
        self.concise = concise

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def _line(self, finding: Finding, indent: str = "") -> str:
        code_style = "1;31" if finding.severity == "error" else "1;33"
        if self.concise:
            where = finding.file if finding.line is None else f"{finding.file}:{finding.line}:{finding.column or 1}"
            cause = f" [{finding.cause.code} {finding.cause.key}]" if finding.cause is not None else ""
            return (f"{self._style(printable(where), '1')}: {self._style(finding.code, code_style)} "
                    f"{printable(_text(finding))}{self._style(cause, '2')}")
        severity = "" if finding.severity == "error" or isinstance(finding, Root) else " (warning)"
        return (f"{indent}{self._style(printable(_where(finding)), '1')}: "
                f"{self._style(finding.code, code_style)}{severity} "
                f"{self._style('[' + finding.key + ']', '2')} {printable(_text(finding))}")

    def file(self, name: str, findings: list[Finding], omitted: int) -> None:
        self.count(findings)
        if self.statistics:
            return
        lines = []
        for finding in findings:
            if self.concise:  # a line a violation, each naming its root cause
                lines += [self._line(one) for one in (finding.consequences if isinstance(finding, Root) else [finding])]
                continue
            lines.append(self._line(finding))
            lines += [self._line(one, "    ") for one in finding.consequences]
        if omitted:
            lines.append(printable(f"{name}: ... and {omitted:,} more problem(s) (--max-per-file)"))
        if lines:
            self.write("\n".join(lines) + "\n")
            self.stream.flush()

    def end(self, summary: Summary, quiet: bool) -> None:
        if self.statistics:
            self.statistics_table()
        if not quiet:
            for line in _summary_lines(summary):
                say(line, err=True)


class _JsonOutput(Output):
    def begin(self, rules: list[str]) -> None:
        self.first = True
        if not self.statistics:
            self.write("[")

    def _item(self, finding: Finding) -> dict[str, Any]:
        cause = finding.cause
        item = {
            "code": finding.code, "key": finding.key, "message": _text(finding), "file": finding.file,
            "line": finding.line, "column": finding.column, "fixable": finding.fixable,
            "severity": finding.severity, "message_index": finding.index, "conversation": finding.conversation,
            "provider": finding.provider,
            "cause": None if cause is None else {"code": cause.code, "line": cause.line, "column": cause.column,
                                                 "message_index": cause.index},
        }
        if finding.session is not None:  # (only where there is one: other files' items keep their keys)
            item["session"] = finding.session
        return item

    def _items(self, findings: list[Finding]) -> None:
        for finding in findings:
            for one in [finding, *finding.consequences]:
                self.write(("\n" if self.first else ",\n") + orjson.dumps(self._item(one)).decode())
                self.first = False

    def file(self, name: str, findings: list[Finding], omitted: int) -> None:
        self.count(findings)
        if not self.statistics:
            self._items(findings)
            self.stream.flush()

    def unreadable(self, finding: Finding) -> None:
        self.count([finding])
        if not self.statistics:
            self._items([finding])

    def end(self, summary: Summary, quiet: bool) -> None:
        if self.statistics:
            table = [{"code": code, "key": _key_of(code), "count": n, "fixable": self.fixable_codes.get(code, False)}
                     for code, n in sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))]
            self.write(orjson.dumps(table, option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            self.write("\n]\n" if not self.first else "]\n")
        if not quiet:
            for line in _summary_lines(summary):
                say(line, err=True)


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


class _GithubOutput(_TextOutput):
    """GitHub Actions annotations: ``::error file=F,line=L,col=C,title=CODE key::text``."""

    def _annotation(self, finding: Finding) -> str:
        level = "error" if finding.severity == "error" else "warning"
        props = [f"file={_gh_property(finding.file)}"]
        if finding.line is not None:
            props += [f"line={finding.line}", f"col={finding.column or 1}"]
        props.append(f"title={_gh_property(f'{finding.code} [{finding.key}]')}")
        text = _text(finding)
        if finding.index is not None:
            text = f"message {finding.index}: {text}"
        for one in finding.consequences:
            where = f"line {one.line}, " if one.line is not None else ""
            text += f"\n- {where}message {one.index}: {one.code} [{one.key}] {one.message}"
        return f"::{level} {','.join(props)}::{_gh_data(printable(text))}"

    def file(self, name: str, findings: list[Finding], omitted: int) -> None:
        self.count(findings)
        if self.statistics:
            return
        lines = [self._annotation(finding) for finding in findings]
        if omitted:
            lines.append(f"::warning file={_gh_property(name)},title=more problems::"
                         f"{_gh_data(printable(f'... and {omitted:,} more problem(s) (--max-per-file)'))}")
        if lines:
            self.write("\n".join(lines) + "\n")
            self.stream.flush()

    def unreadable(self, finding: Finding) -> None:
        self.file(finding.file, [finding], 0)


def _uri(path: str) -> str:
    """An artifact location's URI: a relative path as it is (URI-escaped), an absolute one as
    a ``file://`` URI."""
    if os.path.isabs(path):
        return "file://" + quote(path.replace(os.sep, "/"))
    return quote(path.replace(os.sep, "/"))


class _SarifOutput(Output):
    """A SARIF 2.1.0 log, streamed: the head (tool and rules), the results, the tail."""

    def begin(self, rules: list[str]) -> None:
        self.rule_index = {code: i for i, code in enumerate(rules)}
        driver = {
            "name": "chatnorm", "fullName": "chat-normalizer check", "version": __version__,
            "informationUri": _URI, "rules": [_sarif_rule(code) for code in rules],
        }
        head = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0"}
        self.write(orjson.dumps(head).decode()[:-1] + ',"runs":[{"tool":{"driver":' + orjson.dumps(driver).decode()
                   + '},"columnKind":"unicodeCodePoints","results":[')
        self.first = True

    def _location(self, finding: Finding, text: str | None = None) -> dict[str, Any]:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(finding.file)}}
        if finding.line is not None:
            physical["region"] = {"startLine": finding.line, "startColumn": finding.column or 1}
        location: dict[str, Any] = {"physicalLocation": physical}
        if text is not None:
            location["message"] = {"text": text}
        return location

    def _result(self, finding: Finding) -> dict[str, Any]:
        result: dict[str, Any] = {
            "ruleId": finding.code,
            "level": "error" if finding.severity == "error" else "warning",
            "message": {"text": _text(finding)},
            "locations": [self._location(finding)],
            "properties": {"key": finding.key, "fixable": finding.fixable, "messageIndex": finding.index,
                           "conversation": finding.conversation},
        }
        if finding.session is not None:
            result["properties"]["session"] = finding.session
        if finding.code in self.rule_index:
            result["ruleIndex"] = self.rule_index[finding.code]
        if finding.cause is not None:
            result["relatedLocations"] = [dict(self._location(finding.cause, f"root cause: {_text(finding.cause)}"),
                                               id=0)]
        return result

    def _results(self, findings: list[Finding]) -> None:
        for finding in findings:
            for one in [finding, *finding.consequences]:
                self.write(("" if self.first else ",") + "\n" + orjson.dumps(self._result(one)).decode())
                self.first = False

    def file(self, name: str, findings: list[Finding], omitted: int) -> None:
        self.count(findings)
        self._results(findings)
        self.stream.flush()

    def unreadable(self, finding: Finding) -> None:
        self.count([finding])
        self._results([finding])

    def end(self, summary: Summary, quiet: bool) -> None:
        self.write("\n]}]}\n")
        if not quiet:
            for line in _summary_lines(summary):
                say(line, err=True)


def _sarif_rule(code: str) -> dict[str, Any]:
    if code in RULES:
        rule = RULES[code]
        described = "; ".join(KEYS[key] for key in rule.keys)
        return {
            "id": code, "name": ", ".join(rule.keys),
            "shortDescription": {"text": described},
            "fullDescription": {"text": f"{rule.provider}: {rule.text}"},
            "defaultConfiguration": {"level": "error" if rule.severity == "error" else "warning"},
            "properties": {"provider": rule.provider, "evidence": rule.source, "fixable": rule.fixable},
        }
    key, text = CAUSES.get(code) or OTHER_CODES[code]
    return {
        "id": code, "name": key, "shortDescription": {"text": text},
        "defaultConfiguration": {"level": "warning" if code in CAUSES else "error"},
        "properties": {"provider": "chat-normalizer", "fixable": code in CAUSES},
    }


def make_output(fmt: str, *, statistics: bool, colour: bool, stream: IO[str] | None = None) -> Output:
    out = stream if stream is not None else sys.stdout
    if fmt == "json":
        return _JsonOutput(out, statistics=statistics)
    if fmt == "github":
        return _GithubOutput(out, statistics=statistics)
    if fmt == "sarif":
        return _SarifOutput(out, statistics=False)
    return _TextOutput(out, statistics=statistics, colour=colour, concise=fmt == "concise")
