"""Agent histories with the defects that the providers' own code rejects.

Built on the property-test strategies of ``test_stage.py`` (split turns, missing, orphan
and reordered results, systems mid-history, empty contents, bad ids and names, opaque
interim turns), plus what real agent logs hold and the judges trip on: parallel calls,
truncated call arguments, ``reasoning`` beside ``reasoning_content``, thinking and
``tool_use`` parts left in content, a history that starts with an assistant call, a
system-only history.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from test_stage import assistant, exchange, histories, message, opaque_histories, system, tool, user

Messages = list[dict[str, Any]]

TRUNCATED = ['{"path": "src/a.py", "text": "def f(', '{"q": [1, 2', '{"a": {"b": "c"', "{", '{"x": 1,']
FUNCTIONS = ["read_file", "get_weather", "f"]


@st.composite
def parallel_exchange(draw: Any) -> Messages:
    """An assistant turn with 2-3 calls (some arguments truncated), all answered, in order."""
    k = draw(st.integers(2, 3))
    ids = [f"call_{draw(st.sampled_from(['p', 'q', 'r']))}{i}" for i in range(k)]
    calls = [{"id": i, "type": "function", "function": {
        "name": draw(st.sampled_from(FUNCTIONS)),
        "arguments": draw(st.sampled_from(['{"path": "a.py"}', '{"city": "Paris"}', *TRUNCATED[:2]]))}}
        for i in ids]
    turn: dict[str, Any] = {"role": "assistant", "content": draw(st.sampled_from([None, "", "Let me check."])),
                            "tool_calls": calls}
    return [turn, *({"role": "tool", "tool_call_id": i, "content": f"result {i}"} for i in ids)]


@st.composite
def reasoning_assistant(draw: Any) -> dict[str, Any]:
    """An assistant message with reasoning as agents store it (fields, or parts in content)."""
    msg = draw(assistant())
    kind = draw(st.sampled_from(["reasoning", "both_unequal", "thinking_part", "tool_use_part"]))
    if kind == "reasoning":
        msg["reasoning"] = "thought"
    elif kind == "both_unequal":
        msg["reasoning"] = "thought one"
        msg["reasoning_content"] = "thought two"
    elif kind == "thinking_part":
        msg["content"] = [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                          {"type": "text", "text": draw(st.sampled_from(["Answer.", ""]))}]
    else:
        msg["content"] = [{"type": "text", "text": "Calling."},
                          {"type": "tool_use", "id": "toolu_01A", "name": "f", "input": {}}]
    return msg


truncated_call = st.builds(
    lambda args, cid: [{"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": "read_file", "arguments": args}}]},
        {"role": "tool", "tool_call_id": cid, "content": "done"}],
    st.sampled_from(TRUNCATED), st.sampled_from(["toolu_01C4Xv9", "call_abc", "call_1"]),
)

chunk = st.one_of(
    message.map(lambda m: [m]), exchange(), parallel_exchange(), truncated_call,
    reasoning_assistant().map(lambda m: [m]),
)

#: A history as agents leave them: mostly the messy histories, some special shapes.
agent_histories = st.one_of(
    histories,
    opaque_histories,
    st.lists(chunk, min_size=1, max_size=8).map(lambda chunks: [m for c in chunks for m in c]),
    st.lists(system(), min_size=1, max_size=2),  # system-only
    st.tuples(parallel_exchange(), st.lists(chunk, max_size=4)).map(  # starts with an assistant call
        lambda t: [*t[0], *(m for c in t[1] for m in c)]),
    st.tuples(user(), tool()).map(list),
)
