"""Call hygiene, a part of the core (``_core.py``): the tool calls of one assistant fragment
made sendable and registered on the held turn's tool block.

Each call gets a function name (or is dropped, recorded), its ``function`` wrapper (lifted
in when it came flat), an id new to its turn (given, taken from ``call_id``, or made:
deterministic), a ``type``, and arguments as the profile wants them (a JSON string that
parses, or an object). An exact duplicate is dropped; an id used twice for different calls
is renamed, and the rename remembered so that the second result answers the second call.

Functions of the :class:`~._core.Normalizer` they serve (its tool block, its notes), not
methods: they are the core's per-fragment path, and a module function costs the same call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import orjson

from .._errors import InvalidMessage
from .._json import JSONDecodeError
from .._json import dumps as json_dumps
from .._json import loads as json_loads
from .._note import Note

if TYPE_CHECKING:
    from ._actions import TableActions

__all__ = ["clean_calls", "fresh_id", "next_alias", "call_id_of", "call_name"]

Message = dict[str, Any]


def clean_calls(n: TableActions, message: Message, index: int) -> Message:
    """Tool-call hygiene for one assistant fragment; registers its calls on the turn.

    Returns the message to hold (a copy if anything changed, never the input edited).
    """
    if "tool_calls" not in message:
        return message
    raw = message["tool_calls"]
    if not raw:
        n._turn.notes.append(Note(
            "remove_empty_tool_calls", f"removed 'tool_calls': {raw!r} from message {index}",
            [index], None,
        ))
        return {k: v for k, v in message.items() if k != "tool_calls"}
    # Fast path: every call already clean (a function with a name and non-blank string
    # arguments, an id new to the turn, a type; arguments that parse where the profile
    # repairs those that do not) -- register them, change nothing. (Arguments as
    # objects, for a profile that wants them so, take the slow path.)
    registry = n._calls
    fresh: list[str] = []
    repair = n._repair_arguments
    for item in raw if not n._object_arguments else ():
        # Named with their types once checked: compiled, a dict's get is then a native
        # dict lookup, not a Python method call (~300 instructions each, four a call).
        # (A call that is some other mapping takes the slow path, which keeps it as it is.)
        if type(item) is not dict:
            break
        clean: dict[str, Any] = item
        function = clean.get("function")
        call_id = clean.get("id")
        if (
            type(function) is not dict
            or not call_id
            or call_id in registry
            or clean.get("type") is None
        ):
            break
        named: dict[str, Any] = function
        name = named.get("name")
        arguments = named.get("arguments")
        if not name or type(arguments) is not str or not arguments or arguments.isspace() or name.isspace():
            break
        if repair is not None and repair(arguments) is not None:
            break
        registry[call_id] = clean
        fresh.append(call_id)
    else:
        if not n._object_arguments:
            unanswered = n._unanswered
            for call_id in fresh:
                unanswered[call_id] = None
            return message
    for call_id in fresh:  # undo the partial registration; the slow path redoes it all
        del registry[call_id]
    return _clean_each(n, message, index, raw)


def _clean_each(n: TableActions, message: Message, index: int, raw: Any) -> Message:
    # The slow path: each call checked and fixed on its own, in order.
    calls: list[Any] = []
    changed = False
    for position, call in enumerate(raw):
        fixed = _clean_call(n, call, position, index)
        if fixed is None:  # dropped (recorded)
            changed = True
            continue
        if fixed is not call:
            changed = True
        calls.append(fixed)
    if not changed:
        return message
    if not calls:
        return {k: v for k, v in message.items() if k != "tool_calls"}
    return {**message, "tool_calls": calls}


def _clean_call(n: TableActions, call: Any, position: int, index: int) -> Any:
    """One call, sendable and registered (a copy if anything changed); None when it is
    dropped (no function name, or an exact duplicate of an earlier call of the turn)."""
    notes = n._turn.notes
    if call_name(call) is None:
        n._record(
            "drop_nameless_call",
            f"dropped tool call {position} of message {index}: it has no function name",
            [index], call,
        )
        return None
    if call.get("function") is None:
        # {"id", "name", "arguments"}: a call without its "function" wrapper
        # (DeepSeek rejects it). The name is there: lift it in, never drop the call.
        kind = call.get("type", "function")
        call = _lift_flat_call(call)
        notes.append(Note("lift_flat_call", f"call {position} of message {index} had 'name' and 'arguments' "
                          "outside 'function'; moved them into it (type 'function')", [index],
                          None if kind == "function" else {"type": kind}))
    function = call["function"]
    fixed = call
    call_id = call.get("id")
    if not call_id:
        if call.get("call_id"):
            call_id = call["call_id"]
            notes.append(Note("call_id_as_id", f"call {call_id!r} had only 'call_id'; used it as 'id'", [index], None))
        else:
            call_id = fresh_id(n, f"call_{index}_{position}")
            notes.append(Note("assign_call_id", f"call {position} of message {index} had no id; gave it {call_id!r}", [index], None))
        fixed = {**call, "id": call_id}
    if call.get("type") is None:
        fixed = {**fixed, "type": "function"}
        notes.append(Note("add_call_type", f"call {call_id!r} had no 'type'; set 'function'", [index], None))
    fixed = _clean_arguments(n, fixed, function, call_id, position, index)
    if call_id in n._calls:
        if n._calls[call_id] == fixed:
            n._record(
                "drop_duplicate_call",
                f"dropped call {call_id!r} of message {index}: an exact duplicate of an earlier call of the turn",
                [index], call,
            )
            return None
        renamed = fresh_id(n, f"{call_id}_dup")
        n._aliases.setdefault(call_id, deque()).append(renamed)
        notes.append(Note(
            "rename_duplicate_call_id",
            f"call id {call_id!r} was used twice in one turn for different calls; the second is now {renamed!r}",
            [index], None,
        ))
        fixed = {**fixed, "id": renamed}
        call_id = renamed
    n._calls[call_id] = fixed
    n._unanswered[call_id] = None
    return fixed  # (a call lifted in is a new object: the caller sees it changed)


def _clean_arguments(n: TableActions, fixed: Any, function: Any, call_id: str, position: int, index: int) -> Any:
    # The call's arguments as the profile sends them: a JSON string (blank ones '{}', an
    # object encoded, one cut off repaired where the profile repairs them), or an object.
    arguments = function.get("arguments")
    notes = n._turn.notes
    if n._object_arguments:
        return arguments_as_object(n, fixed, function, arguments, call_id, index)
    if not isinstance(arguments, str) or not arguments.strip():
        if isinstance(arguments, (dict, list)):
            encoded = _encode_arguments(arguments, index, position)
            notes.append(Note(
                "encode_arguments", f"call {call_id!r}: arguments given as an object, encoded as JSON",
                [index], {"id": call_id, "arguments": arguments},  # the form it had
            ))
        else:
            encoded = "{}"
            notes.append(Note("default_arguments", f"call {call_id!r}: empty arguments became '{{}}'", [index], None))
        return {**fixed, "function": {**function, "arguments": encoded}}
    if n._encoder.repairs_arguments:
        repaired = n._encoder.repair_arguments(arguments)
        if repaired is not None:
            notes.append(Note(
                "repair_arguments", f"call {call_id!r}: arguments were not valid JSON (cut off?); sent as "
                f"{repaired!r}", [index], {"id": call_id, "arguments": arguments},  # the original
            ))
            return {**fixed, "function": {**function, "arguments": repaired}}
    return fixed


def arguments_as_object(n: TableActions, call: Any, function: Any, arguments: Any, call_id: str, index: int) -> Any:
    """A profile that sends arguments as an object (Ollama's native API, the Qwen3.5
    template): a JSON string holding an object is decoded; blank arguments become ``{}``;
    arguments that are no object (a JSON array, number, string or null, as text or as a
    value) become ``{}`` too, the original kept in the record: the provider refuses
    anything but a mapping (JT-5a, JT-5b). An object already is left as it is."""
    notes = n._turn.notes
    if isinstance(arguments, dict):
        return call
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        notes.append(Note("default_arguments", f"call {call_id!r}: empty arguments became {{}}",
                          [index], {"id": call_id, "arguments": arguments}))
        return {**call, "function": {**function, "arguments": {}}}
    if isinstance(arguments, str):
        try:
            value = json_loads(arguments)  # integers past 64 bits as the text has them (see _json)
        except JSONDecodeError:
            if not n._encoder.repairs_arguments:
                return call
            repaired = n._encoder.repair_arguments(arguments) or "{}"
            notes.append(Note(
                "repair_arguments", f"call {call_id!r}: arguments were not valid JSON (cut off?); sent as "
                f"{repaired}", [index], {"id": call_id, "arguments": arguments},  # the original
            ))
            return {**call, "function": {**function, "arguments": json_loads(repaired)}}
        if isinstance(value, dict):
            notes.append(Note("decode_arguments", f"call {call_id!r}: arguments sent as an object",
                              [index], {"id": call_id, "arguments": arguments}))
            return {**call, "function": {**function, "arguments": value}}
    elif not isinstance(arguments, (int, float, list)):
        return call  # not JSON at all (validate=False input): nothing to decide from
    notes.append(Note("default_arguments", f"call {call_id!r}: arguments {arguments!r} are no object; "
                      "sent as {}", [index], {"id": call_id, "arguments": arguments}))
    return {**call, "function": {**function, "arguments": {}}}


def fresh_id(n: TableActions, base: str) -> str:
    """An id the turn does not use: the first of base, base2, base3...

    Deterministic: the same input always gets the same ids (idempotence). The turn's ids
    only grow until its tool block ends, so a suffix found taken stays taken: the search
    resumes where the last one for this base stopped (O(1) amortised, not a probe per
    earlier rename)."""
    suffix = n._next_suffix.get(base, 1)
    candidate = base if suffix == 1 else f"{base}{suffix}"
    while candidate in n._calls:
        suffix += 1
        candidate = f"{base}{suffix}"
    n._next_suffix[base] = suffix  # returned now, so taken once registered: probed again, once
    return candidate


def next_alias(n: TableActions, call_id: str) -> str | None:
    """The first still-unanswered rename of ``call_id``, in call order. Answered ones are
    popped as they are passed: within a turn an answered call never becomes unanswered
    again, so each is skipped once (not once per later result)."""
    aliases = n._aliases.get(call_id)
    if aliases is None:
        return None
    unanswered = n._unanswered
    while aliases and aliases[0] not in unanswered:
        aliases.popleft()
    return aliases[0] if aliases else None


def call_id_of(call: Any) -> str | None:
    if isinstance(call, Mapping):
        return call.get("id") or call.get("call_id")
    return None


def call_name(call: Any) -> str | None:
    """The function name a call carries -- in its ``function``, or at its own top level when
    it has none (lifted in by clean_calls) -- if it has a non-blank one: a call without one
    cannot be sent, and is dropped (recorded)."""
    function = call.get("function")
    if function is None:
        name = call.get("name")
    elif type(function) is dict or isinstance(function, Mapping):
        name = function.get("name")
    else:
        return None
    return name if type(name) is str and name.strip() else None


def _lift_flat_call(call: Any) -> dict[str, Any]:
    """``{"id", "name", "arguments", ...}`` as ``{"id", "type": "function", "function": {"name",
    "arguments"}, ...}``, every other key kept."""
    function = {"name": call["name"]}
    if "arguments" in call:
        function["arguments"] = call["arguments"]
    lifted: dict[str, Any] = {"id": call["id"]} if "id" in call else {}
    lifted["type"] = "function"
    lifted["function"] = function
    for key, value in call.items():
        if key not in _FLAT_CALL_KEYS:
            lifted[key] = value
    return lifted


_FLAT_CALL_KEYS: Final = frozenset({"id", "type", "function", "name", "arguments"})


def _encode_arguments(arguments: Any, index: int, position: int) -> str:
    try:
        return json_dumps(arguments, orjson.OPT_NON_STR_KEYS).decode()  # (integers past 64 bits too)
    except (TypeError, RecursionError) as exc:  # orjson.JSONEncodeError is a TypeError
        raise InvalidMessage(
            f"arguments of call {position} cannot be encoded as JSON ({exc})",
            field=f"tool_calls.{position}.function.arguments", index=index,
            hint="arguments must be a JSON string or a JSON-compatible object",
        ) from None
