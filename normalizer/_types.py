"""The public API's types, for type checkers: what a caller may pass, and what comes out.

Nothing here runs on the per-message path; these are names for ``mypy``/``pyright``:

* :data:`ProfileName`: the built-in profiles (and their documented flag spellings) as a
  ``Literal``, so ``profile="mistrall"`` is caught before it runs. A profile *file* is a
  ``pathlib.Path`` (or :func:`normalizer.load_profile`); a plain ``str`` path still works at
  run time, but is not part of the typed surface (it would make every typo a valid ``str``).
* :class:`RepairOptions`: the core's keyword options as a ``TypedDict``, used with
  ``**options: Unpack[RepairOptions]`` so a misspelled option or a wrong value is a type error.
* :data:`ChatMessage`: what the repair yields. When the ``openai`` package is installed it is
  the OpenAI SDK's own ``ChatCompletionMessageParam``, so the output goes to
  ``client.chat.completions.create(messages=...)`` without a cast; without it, a plain dict.
  (At run time every message is a plain ``dict``; this is a promise about its shape, which
  the repair makes good for the OpenAI tool-pairing rules.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Union

from typing_extensions import TypedDict

from ._defaults import OnInvalid, OrphanResults, TrailingCalls

# The built-in profiles by name, and the flag spellings the README documents: declared beside
# the built-in profiles' data (a new built-in profile is one file's change).
from .profiles._builtins import ProfileName

if TYPE_CHECKING:
    from ._report import Repair
    from .profiles._profiles import Profile

    try:
        from openai.types.chat import ChatCompletionMessageParam as ChatMessage  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # pragma: no cover - only for type checkers without openai
        ChatMessage = dict[str, Any]  # type: ignore[misc, unused-ignore]
else:
    ChatMessage = dict

__all__ = ["ChatMessage", "ProfileName", "ProfileArg", "RepairOptions"]


#: What ``profile=`` takes: a built-in name, a :class:`~normalizer.Profile`, or a profile file.
ProfileArg = Union[ProfileName, "Profile", "os.PathLike[str]"]


class RepairOptions(TypedDict, total=False):
    """The core's options (``Normalizer(**options)``, ``repair(..., **options)``...); see
    :class:`normalizer.Options` for what each one does."""

    validate: bool
    on_invalid: OnInvalid
    orphan_results: OrphanResults
    trailing_calls: TrailingCalls
    merge_text_then_calls: bool
    stub_text: str
    max_turn_fragments: int
    max_held_messages: int
    max_held_bytes: int
    max_records: int
    max_depth: int
    on_record: Callable[[Repair], None] | None
