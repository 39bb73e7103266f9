"""Choices on the command line, and the one rule that names them.

Every option and every value has one name, the same in Python and on the command line,
spelled for each: ``on_invalid="error"`` is ``--on-invalid error``, ``orphan_results=
"keep_as_user"`` is ``--orphan-results keep-as-user`` (Python's snake_case is the command
line's kebab-case, as for the options themselves: ``trailing_calls`` is ``--trailing-calls``).

An old spelling still works for one release, with a warning that names the new one
(:class:`Choice`'s ``deprecated``): scripts keep running while they are updated.
"""

from __future__ import annotations

from typing import Any, get_args

import click

from ._text import say

__all__ = ["Choice", "python_value", "command_line_values"]


def command_line_values(choices: Any) -> list[str]:
    """The command line's spellings of an option's choices, from the ``Literal`` that declares
    them (``OrphanResults`` -> ``["drop", "keep-as-user", "error"]``)."""
    return [value.replace("_", "-") for value in get_args(choices)]


def python_value(value: str) -> str:
    """The Python spelling of a command-line value (``keep-as-user`` -> ``keep_as_user``)."""
    return value.replace("-", "_")


class Choice(click.Choice):  # type: ignore[type-arg]
    """A ``click.Choice`` that also takes old spellings (``deprecated``: old -> new), says
    once per run that they are deprecated, and returns the new one. Help lists the new
    spellings only."""

    def __init__(self, choices: list[str], *, deprecated: dict[str, str] | None = None) -> None:
        super().__init__(choices)
        self.deprecated = dict(deprecated or {})

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.deprecated:
            new = self.deprecated[value]
            flag = param.opts[-1] if param is not None and param.opts else "the option"
            say(f"warning: {flag} {value} is deprecated and will be removed in the next release; "
                f"use {flag} {new}", err=True)
            value = new
        return super().convert(value, param, ctx)
