"""The vocabulary of JSON documents is declared by each format (``Format.document``,
:class:`~normalizer.formats._format.DocumentKeys`) and derived from the registry: the record
arrays the document reader streams, the system keys it gives first, what a document's own
keys tell detection, and which keys make an object on one line a request body.

Issue 37: adding Gemini native needed edits in three more files, which listed these by hand.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from normalizer import InputError, Report
from normalizer.formats import _detect, _document, _events, _records, _registry, read_messages
from normalizer.formats._detect import NO_GUESS, Guess
from normalizer.formats._format import Claim, DocumentKeys, Format

USER = {"role": "user", "content": "hi"}
GEMINI_USER = {"role": "user", "parts": [{"text": "hi"}]}


# -- derived from the declarations ---------------------------------------------------------------


# (Each format's part is pinned by its name, and the whole is checked against the rule, so a
# format added to the registry adds its own part without changing these tests.)

DOCUMENT_KEYS = {  # format -> (its record array paths, its system keys)
    "chat": ({"messages", "request.body.messages", "body.messages"}, ("system_prompt",)),
    "responses": ({"input", "request.body.input", "body.input"}, ("instructions",)),
    "anthropic": ({"messages"}, ("system",)),
    "gemini": ({"contents"}, ("systemInstruction", "system_instruction")),
    "opencode": ({"messages"}, ()),
    "codex": (set(), ()),
    "finetune": (set(), ()),
}


def _arrays(f: Format) -> set[str]:
    prefixes = _records.CONTAINER_PREFIXES if f.document.dumped else ("",)
    return {prefix + key for prefix in prefixes for key in f.document.arrays}


@pytest.mark.parametrize("name", DOCUMENT_KEYS)
def test_each_format_declares_its_record_arrays_and_system_keys(name: str) -> None:
    f = _registry.BY_NAME[name]
    assert (_arrays(f), f.document.system_keys) == DOCUMENT_KEYS[name]


def test_the_document_reader_streams_every_format_s_arrays() -> None:
    assert _registry.RECORD_ARRAYS == set().union(*map(_arrays, _registry.REGISTRY))
    assert "request.body.contents" not in _registry.RECORD_ARRAYS  # Gemini's are not dumped
    assert _document._STREAMS is _registry.RECORD_ARRAYS
    assert _registry.CONVERSATION_KEYS == {key for f in _registry.REGISTRY for key in f.document.arrays}


def test_the_walker_descends_the_way_to_a_dump_s_body() -> None:
    assert _document._DESCEND == {"", "request", "request.body", "body"}


def test_the_system_keys_are_every_format_s_in_the_registry_s_order() -> None:
    assert _registry.SYSTEM_KEYS == tuple(dict.fromkeys(key for f in _registry.REGISTRY for key in f.document.system_keys))
    assert _events.SYSTEM_KEYS is _registry.SYSTEM_KEYS


def test_only_a_key_one_format_alone_declares_claims_a_document() -> None:
    claims = {key: f.name for key, f in _registry.CLAIMS.items()}
    assert {key: claims.get(key) for key in ("input", "instructions", "system", "messages", "contents", "system_prompt")} == {
        "input": "responses", "instructions": "responses", "system": "anthropic",
        "messages": None, "contents": None, "system_prompt": None,  # shared, or of a format that claims nothing
    }
    assert all(f.document.claim is not Claim.NOTHING for f in _registry.CLAIMS.values())


def test_a_key_two_formats_declare_claims_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def nothing(record: dict[str, Any]) -> None:
        return None

    shared = Format("other", object, nothing, document=DocumentKeys(arrays=("input",), claim=Claim.DOCUMENT))
    monkeypatch.setattr(_registry, "REGISTRY", (*_registry.REGISTRY, shared))
    claims = _registry._claims()
    assert ("input" in claims, claims["instructions"].name) == (False, "responses")


ANY_BODY = {"request", "body", "model", "max_tokens", "input", "contents", "system", "system_prompt"}


def test_the_keys_of_a_one_line_request_body_are_any_request_s_and_the_formats_own() -> None:
    detected = _registry.body_keys(None)
    assert detected == _records.REQUEST_KEYS | {key for f in _registry.REGISTRY for key in f.document.body_keys}
    assert _records.REQUEST_KEYS == {"request", "body", "model", "max_tokens"}
    assert (ANY_BODY <= detected, "messages" in detected) == (True, False)  # (a fine-tuning line holds messages)
    assert _registry.body_keys(_registry.BY_NAME["codex"]) == detected
    assert _registry.body_keys(_registry.BY_NAME["chat"]) == detected | _registry.CONVERSATION_KEYS
    assert _registry.body_keys(_registry.BY_NAME["finetune"]) == set()


# -- what a document's keys tell detection ---------------------------------------------------------


@pytest.mark.parametrize(("keys", "stream", "hint"), [
    ({"system", "instructions"}, "input", "system"),  # the narrowest claim first
    ({"instructions", None}, "messages", "instructions"),
    (set(), "request.body.input", "input"),
    ({"system_prompt", "model"}, "messages", None),
    ({"systemInstruction"}, "contents", None),
    (set(), "", None),
    (set(), None, None),
])
def test_the_hint_is_the_key_that_claims_the_document(keys: set[str | None], stream: str | None, hint: str | None) -> None:
    assert _events.document_hint(keys, stream) == hint


WEAK_CHAT = Guess("chat", False)


@pytest.mark.parametrize(("guesses", "hint", "verdict"), [
    ([], "input", "responses"),  # a Responses key claims the document, even with no record
    ([NO_GUESS], "instructions", "responses"),
    ([WEAK_CHAT], "input", "responses"),
    ([WEAK_CHAT], "system", "anthropic"),  # an Anthropic key claims records that look like chat
    ([], "system", "chat"),  # ... and nothing else
    ([WEAK_CHAT, Guess("gemini", True)], "input", "gemini"),  # a decisive record comes first
    ([WEAK_CHAT], "messages", "chat"),  # a key several formats declare tells nothing
    ([WEAK_CHAT], "contents", "chat"),  # a key whose format claims nothing tells nothing
])
def test_decide_takes_the_claimed_format_before_a_weak_guess(guesses: list[Guess], hint: str, verdict: str) -> None:
    assert _detect.decide(guesses, hint=hint) == verdict


def test_an_anthropic_key_does_not_claim_records_that_look_like_nothing() -> None:
    with pytest.raises(InputError, match="cannot tell the format of this input"):
        _detect.decide([NO_GUESS], hint="system")


# -- read through ------------------------------------------------------------------------------


def _read(document: Any, fmt: str = "auto", *, one_line: bool = False) -> tuple[str | None, list[dict[str, Any]]]:
    data = json.dumps(document, indent=None if one_line else 1).encode()
    report = Report()
    messages = list(read_messages(io.BytesIO(data), fmt, report=report))
    return report.format, messages


@pytest.mark.parametrize(("document", "verdict"), [
    ({"messages": [USER], "system": "S"}, ("anthropic", [{"role": "system", "content": "S"}, USER])),
    ({"messages": [USER]}, ("chat", [USER])),
    ({"system": "S", "messages": []}, ("chat", [])),
    ({"instructions": "I", "messages": [USER]}, ("responses", [{"role": "system", "content": "I"}, USER])),
    ({"input": []}, ("responses", [])),
    ({"request": {"body": {"input": [USER]}}}, ("responses", [USER])),
    ({"system_prompt": "P", "messages": [USER]}, ("chat", [{"role": "system", "content": "P"}, USER])),
    ({"contents": [GEMINI_USER], "systemInstruction": {"parts": [{"text": "S"}]}},
     ("gemini", [{"role": "system", "content": "S"}, USER])),
])
def test_a_document_s_keys_are_read_as_their_format_declares(document: Any, verdict: tuple[str, list[Any]]) -> None:
    assert _read(document) == verdict


def test_a_one_line_object_is_a_request_body_by_its_keys() -> None:
    assert _read({"contents": [GEMINI_USER]}, one_line=True) == ("gemini", [USER])  # a body key: a document
    assert _read({"messages": [USER]}, one_line=True) == ("finetune", [USER])  # none: a fine-tuning line
    assert _read({"messages": [USER]}, "chat", one_line=True) == ("chat", [USER])  # a chat file: its array
