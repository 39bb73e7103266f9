"""The exceptions normalizer raises.

Two families, as in h11: *you* used the API wrongly, or the *input* is bad. ::

    NormalizerError                 base of everything raised on purpose
     +-- UsageError                 caller misuse: feed() after close(), a poisoned instance,
     |                              an unknown option or profile
     +-- InputError                 the data is bad; carries where (.index / .source, .line, .column)
          +-- InvalidMessage        a message failed validation (what field, what was expected)
          +-- OrphanResultError     a tool result answers no call and orphan_results="error"
          +-- LimitExceeded         one pending turn (or one input line) outgrew a documented limit

Every InputError's ``str()`` reads "<where>: <what>. <what to do>" so the CLI can print it
as is; no traceback is needed to understand it.
"""

from __future__ import annotations

__all__ = [
    "NormalizerError",
    "UsageError",
    "InputError",
    "InvalidMessage",
    "OrphanResultError",
    "LimitExceeded",
]


class NormalizerError(Exception):
    """Base class of every error normalizer raises on purpose."""


class UsageError(NormalizerError):
    """The API was used wrongly (not a problem with the data)."""


class InputError(NormalizerError):
    """The input data is bad. Says where, what, and what to do.

    Attributes:
        index: 0-based index of the message in the stream, when known.
        source: the file (or ``"<stdin>"``) the message came from, when known.
        line, column: 1-based position in ``source``, when known.
        hint: what the user can do about it.
    """

    def __init__(
        self,
        what: str,
        *,
        index: int | None = None,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.what = what
        self.index = index
        self.source = source
        self.line = line
        self.column = column
        self.hint = hint
        super().__init__(self._render())

    @property
    def where(self) -> str:
        parts = []
        if self.source is not None:
            loc = self.source
            if self.line is not None:
                loc += f":{self.line}"
                if self.column is not None:
                    loc += f":{self.column}"
            parts.append(loc)
        if self.index is not None:
            parts.append(f"message {self.index}")
        # "FILE:LINE:COL: message N", the form of the command line's errors (colons between parts).
        return ": ".join(parts) if parts else "input"

    def _render(self) -> str:
        text = f"{self.where}: {self.what}"
        if self.hint:
            text += f". {self.hint}"
        return text

    def located(
        self, *, source: str | None = None, line: int | None = None, column: int | None = None,
        index: int | None = None,
    ) -> InputError:
        """Add file position (readers know it, the core does not) or the message index (the
        core knows it, the profile stage does not) and re-render."""
        if index is not None:
            self.index = index
        if source is not None:
            self.source = source
        if line is not None:
            self.line = line
        if column is not None:
            self.column = column
        self.args = (self._render(),)
        return self

    def __str__(self) -> str:
        return self._render()


class InvalidMessage(InputError):
    """A message does not have the shape of a chat message.

    Attributes:
        field: dotted path of the offending field (``"tool_calls.0.function"``), if any.
    """

    def __init__(self, what: str, *, field: str | None = None, **where: object) -> None:
        self.field = field
        super().__init__(what, **where)  # type: ignore[arg-type]


class OrphanResultError(InputError):
    """A tool result answers no call of the turn before it (with ``orphan_results="error"``)."""


class LimitExceeded(InputError):
    """A bounded buffer would grow past its documented limit.

    Attributes:
        limit: the option name (``"max_turn_fragments"``, ``"max_line_bytes"``...).
        value: the configured limit.
    """

    def __init__(self, what: str, *, limit: str, value: int, **where: object) -> None:
        self.limit = limit
        self.value = value
        super().__init__(what, **where)  # type: ignore[arg-type]
