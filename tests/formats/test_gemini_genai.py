"""The ``gemini`` profile's output, written with the Gemini writer, judged by Google's own code
(issue 36): every content of every judged history (peer cases, hermes cases, generated and real
histories: ``profiles/judged_histories.py``) validates as google-genai's ``types.Content``
(pydantic, ``extra="forbid"``: a key Gemini does not define is refused), and the contents keep
the pairing rules Gemini states (as many response parts as call parts, right after them).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profiles"))

import normalizer  # noqa: E402
from judged_histories import all_histories  # noqa: E402
from normalizer.formats._gemini import GeminiWriter  # noqa: E402
from realdata import HAVE_SAMPLES, SKIP_REASON  # noqa: E402
from test_gemini_cli import assert_gemini_rules  # noqa: E402

genai_types = pytest.importorskip("google.genai.types", reason="google-genai judges the gemini output (pip install -e '.[test,judges]')")

pytestmark = pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)


def _contents(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    repaired = list(normalizer.repair(copy.deepcopy(history), profile="gemini"))
    writer = GeminiWriter()
    return [c for m in repaired for c in writer.feed(m)] + writer.close()


def test_every_judged_history_is_a_request_google_genai_accepts() -> None:
    histories = all_histories()
    assert len(histories) >= 240
    refused = []
    for name, history in histories:
        contents = _contents(history)
        for i, content in enumerate(contents):
            try:
                genai_types.Content.model_validate(content)
            except ValueError as error:  # pydantic's ValidationError
                refused.append((name, i, str(error).splitlines()[:3]))
        if contents:
            assert_gemini_rules(contents)
    assert refused == []


def test_a_thinking_block_of_another_provider_is_a_thought_part() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
                                          {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "go on"},
    ]
    contents = _contents(history)
    assert contents[1] == {"role": "model", "parts": [{"text": "hmm", "thought": True}, {"text": "ok"}]}
    assert genai_types.Content.model_validate(contents[1]).parts[0].thought is True


def test_truncated_arguments_are_closed_for_gemini() -> None:
    history = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Mex'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    stream = normalizer.repair(copy.deepcopy(history), profile="gemini")
    assert list(stream)[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Mex"}'
    assert stream.report.counts["repair_arguments"] == 1
    contents = _contents(history)
    assert contents[1]["parts"] == [{"functionCall": {"id": "call_1", "name": "weather", "args": {"city": "Mex"}}}]
