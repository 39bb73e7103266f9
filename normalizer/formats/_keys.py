"""The first pass over a JSON document for some of its own keys (sans-I/O): see
:class:`KeysScanner`.

A system prompt after the messages. JSON key order means nothing, and Claude Code writes its
request bodies ``{"model", "messages", "system", ...}``: the system prompt comes last. When a
document's record array begins and none of its ``system`` / ``instructions`` /
``system_prompt`` keys came before it, the reader asks for a first pass
(:class:`KeysScanner`: those values only, nothing else built; about a third of
the document read's own time) and gives them before the records. A stream cannot be read
twice: then the records are held until the document's keys are known -- its end, or the
system key -- up to ``max_record_bytes`` of the file (a request body is one record); past
that they go out, and a system key after them is left out, recorded whole
(``drop_late_system``): read the file itself to place it first.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from ._document import PastDouble, as_float, load_ijson, parser_errors
from ._records import CONTAINER_PREFIXES, DEFAULT_MAX_DEPTH, DOC_SLICE_BYTES
from ._scan import Cut, OpenToken, Slice, Where

__all__ = ["KeysScanner"]


class KeysScanner:
    """The values of some of a JSON document's own keys (top level, or in ``request.body`` /
    ``body``), from the document's bytes fed in chunks (sans-I/O).

    The first pass that lets a request body's ``system`` (or ``instructions``, or a hermes
    snapshot's ``system_prompt``) written *after* its messages be placed before them: the
    reader asks for it when a document's record array begins and no such key came before.
    Only the wanted values are built; everything else is tokenized by ijson's C parser and
    passed over, a counter and a flag per event. :meth:`close` gives ``{path: value}``, or
    None when the bytes are not a document it can read to the end (bad JSON, nesting past
    ``max_depth``): the main pass then says what is wrong, and where.
    """

    def __init__(self, keys: Iterable[str], *, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self._wanted = {prefix + key for prefix in CONTAINER_PREFIXES for key in keys}
        self._max_depth = max_depth
        ijson = load_ijson()
        self._errors = parser_errors(ijson)
        self._events = ijson.sendable_list()
        self._coro = ijson.basic_parse_coro(self._events, use_float=False)  # (as DocReader's)
        self._names: list[str] = []  # keys of the open objects that could hold a wanted key
        self._depth = 0  # containers open
        self._blocked = 0  # of them: arrays, or objects too deep to hold a wanted key
        self._key: str | None = None  # the current key of the innermost object
        self._open: list[Any] = []  # the wanted value being built (its open containers)
        self._value_key: Any = None
        self._target = ""
        self._failed = False
        self.found: dict[str, Any] = {}
        # A long string is held back as the main pass holds it (DocReader, OpenToken), or
        # this pass would be the quadratic one: the string state, the token cut, what is held.
        self._state = Where()
        self._carried: Cut | None = None
        self._token = OpenToken()

    def feed(self, chunk: bytes) -> None:
        for start in range(0, len(chunk), DOC_SLICE_BYTES):
            if self._failed:
                return
            try:
                self._push(chunk[start : start + DOC_SLICE_BYTES])
            except self._errors:
                self._failed = True
                return
            self._walk()

    def _push(self, piece: bytes) -> None:
        """Push the slice ``piece`` into the parser, or hold it back, as DocReader does."""
        state, token = self._state, self._token
        if token.goes_on(piece, state.in_string, state.escaped):
            ripe = token.hold(piece, state.in_string, state.escaped)
            state.strings(piece)
            if ripe is not None:
                self._coro.send(ripe)
            return
        held = token.release()
        if held:
            self._coro.send(held)
        self._coro.send(piece)
        at = Slice(piece, state, self._carried)
        state.strings(piece)
        self._carried = token.passed(at, state)

    def close(self) -> dict[str, Any] | None:
        if not self._failed:
            try:
                held = self._token.release()
                if held:
                    self._coro.send(held)
                self._coro.close()
            except self._errors:
                self._failed = True
            else:
                self._walk()
        return None if self._failed else self.found

    def _walk(self) -> None:
        open_ = self._open
        try:
            for ev, value in self._events:
                if open_:  # building a wanted value (as DocWalker.walk builds one)
                    if ev == "map_key":
                        self._value_key = value
                        continue
                    if ev == "end_map" or ev == "end_array":
                        done = open_.pop()
                        if not open_:
                            self.found[self._target] = done
                        continue
                    if ev == "start_map" or ev == "start_array":
                        if self._depth + len(open_) >= self._max_depth:
                            self._failed = True
                            return
                        value = {} if ev == "start_map" else []
                    elif type(value) is Decimal:
                        value = as_float(value, None)
                    top = open_[-1]
                    if type(top) is dict:
                        top[self._value_key] = value
                    else:
                        top.append(value)
                    if type(value) is dict or type(value) is list:
                        open_.append(value)
                    continue
                if ev == "map_key":
                    self._key = value
                    continue
                if ev == "end_map" or ev == "end_array":
                    self._depth -= 1
                    if self._blocked:
                        self._blocked -= 1
                    else:
                        self._names.pop()
                    continue
                if not self._blocked and self._depth:
                    path = ".".join(self._names[1:] + [self._key or ""])
                    if path in self._wanted:
                        self._target = path
                        if ev == "start_map" or ev == "start_array":
                            open_.append({} if ev == "start_map" else [])
                        else:
                            self.found[path] = as_float(value, None) if type(value) is Decimal else value
                        continue
                if ev == "start_map" or ev == "start_array":
                    self._depth += 1
                    if self._depth > self._max_depth:
                        self._failed = True
                        return
                    # Only objects a few levels down, reached through objects, can hold one.
                    if self._blocked or ev == "start_array" or self._depth > 3:
                        self._blocked += 1
                    else:
                        self._names.append(self._key or "")
        except PastDouble:
            self._failed = True  # the main pass refuses it, at its place
        finally:
            del self._events[:]
