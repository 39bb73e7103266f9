"""Profiles: what to repair, and what to check, for a named provider.

A :class:`Profile` is data: the provider rules it enforces (ids from the catalogue,
``rules.RULES``: each entry declared beside the rule object of its key, with the provider's
exact error text and its evidence) plus a few
*encoding* settings on which providers genuinely conflict (providers.md §16, "Provider
conflicts"): how a tool-only assistant message encodes its empty content, the tool-call id
style, what to do with ``reasoning_content``, whether a final assistant message is allowed,
where system messages may go, and whether turns must strictly alternate.

The rules decide the structural repairs too: a profile listing a ``role.first_user`` rule
gets a leading user placeholder, one listing ``role.mistral_transitions`` gets a bridge
assistant between a tool result and a user message, and so on (see ``_stage.py``). So
check and repair cannot drift apart: ``check(repair(x))`` is empty by construction, and the
tests assert it for every built-in profile over generated histories.

Profiles extend one another (``extends``) and load from TOML or JSON files::

    # my-mistral.toml
    extends = "mistral"
    trailing_assistant = "forbid"          # append a user turn instead of prefix: true
    placeholder_continue = "Please go on."
    add_rules = ["OA-6a"]
    [options]                              # defaults for the core's options
    trailing_calls = "drop"

A name may carry boolean flags after a colon: ``"deepseek:no-thinking"``,
``"zhipu:thinking"`` (any boolean field, ``no-`` turns it off).

A profile file is small data, and is read as such whatever the path names: it must end in
``.toml`` or ``.json`` and be a regular file (a FIFO, a device such as ``/dev/zero`` or a
directory is refused without being read), at most :data:`MAX_PROFILE_BYTES` long, nested at
most :data:`MAX_PROFILE_DEPTH` levels deep, and ``extends`` chains at most
:data:`MAX_PROFILE_EXTENDS` files. Every refusal is a ``UsageError`` saying ``file:line``
where it can (the CLI exits 2).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .rules import RULES, plan_for, thinking_only
from .._errors import UsageError
from .._small_files import nested_at, read_small_text
from .._options import make_options
from .._note import Note
from ._encode import Spelling
from ._stage import ProfileStage
from ._builtins import BUILTINS

__all__ = ["Profile", "PROFILES", "get_profile", "load_profile", "make_stage", "MAX_PROFILE_BYTES",
           "MAX_PROFILE_DEPTH", "MAX_PROFILE_EXTENDS"]

#: The longest profile file read. A real one is a few hundred bytes; the cap keeps a wrong
#: path (a log, a dump) from being read whole.
MAX_PROFILE_BYTES = 1 << 20
#: How deeply a profile file's tables, arrays and dotted keys may nest. A real one is three
#: levels deep (fields, ``[options]``, a value); the cap stops the parsers' recursion (and
#: tomllib's quadratic dotted keys) long before they could crash or exhaust memory.
MAX_PROFILE_DEPTH = 32
#: Profile files in one ``extends`` chain (each loads its parent recursively).
MAX_PROFILE_EXTENDS = 32


class Profile(BaseModel):
    """Which provider rules apply, and how the provider wants a few things encoded."""

    # defer_build: the built-in profiles are the library's own data, made without
    # validation (tests/profiles/test_profiles.py validates each); the schema is built when
    # a profile file, a flag or derive() is first validated, not at start-up.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    description: str = ""
    """One line for people: which provider, which endpoint."""
    extends: str | None = None
    """The profile this one was built from (informational once loaded)."""
    rules: tuple[str, ...] = ()
    """Rule ids from ``normalizer.profiles.RULES`` that this provider enforces."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Defaults for the core's options (the caller's keywords win)."""

    tool_only_content: Literal["keep", "null", "empty", "omit"] = "keep"
    """Content of an assistant message that has only tool calls: ``null`` (OpenAI, Moonshot,
    Anthropic/Bedrock converters: ``""`` becomes an empty text block), ``empty`` (``""``:
    xAI, Groq, Ollama, chat templates), ``omit`` (no key), or ``keep`` (the core's ``null``)."""
    id_style: Literal["keep", "openai40", "responses64", "unique", "anthropic64", "mistral9"] = "keep"
    """Tool-call ids: ``openai40``/``responses64`` clamp long ids (hash); ``unique``,
    ``anthropic64`` and ``mistral9`` make every id of the conversation unique (``_stage.py``)."""
    reasoning: Literal["keep", "require", "strip"] = "keep"
    """``reasoning_content``: ``require`` pads ``""`` on assistant messages when ``thinking``
    (DeepSeek, Kimi, GLM); ``strip`` removes reasoning fields (Groq)."""
    thinking: bool = False
    """The provider's thinking mode is on (``reasoning="require"`` only applies then)."""
    trailing_assistant: Literal["allow", "prefix", "forbid"] = "allow"
    """A final assistant message: allowed, marked ``prefix: true`` (Mistral), or followed by
    a user placeholder (Claude >= 4.6, newer Gemini)."""
    system: Literal["anywhere", "leading", "single", "fold"] = "anywhere"
    """System messages: ``anywhere``; ``leading`` (hoisted by the converter; later ones become
    user text); ``single`` (one leading system: leading ones merge, later ones become user
    text); ``fold`` (no system role: folded into the first user message)."""
    first_user: bool = False
    """The first non-system message must be a user message (also implied by the rules)."""
    alternate: bool = False
    """User and assistant turns strictly alternate (also implied by the rules)."""
    content_form: Literal["keep", "string"] = "keep"
    """``string``: a content list made only of text parts is sent as one string."""
    arguments: Literal["string", "object"] = "string"
    """Call arguments as a JSON string (OpenAI) or as an object (Ollama native)."""
    opaque: Literal["keep", "plain"] = "keep"
    """Opaque continuation state (Codex interim items, ``finish_reason: "incomplete"``):
    ``keep`` replays such a turn exactly as stored (OpenAI); ``plain`` treats it as any
    assistant turn and drops the state (kept in the report): providers that cannot replay it
    reject what it leaves (an interim with no text and no calls, reasoning chunks)."""
    placeholder_user: str = "."
    """A structural user message (leading user, between assistants, empty user content)."""
    placeholder_continue: str = "Continue."
    """The user message appended where a final assistant message is forbidden."""
    placeholder_bridge: str = "Understood."
    """The assistant message put between a tool result and a user message (Mistral)."""
    placeholder_part: str = "[{kind} omitted: only text can be sent here]"
    """Text that stands in for a part that is not text (an image...) where the provider
    accepts only a string (``content.string_only``); ``{kind}`` is the part's type and
    ``{profile}`` the profile's name. The part itself is kept whole in the report."""

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, rules: tuple[str, ...]) -> tuple[str, ...]:
        for rule in rules:
            if rule not in RULES:
                raise ValueError(f"unknown rule {rule!r}; the rules are: {', '.join(RULES)}")
        return tuple(dict.fromkeys(rules))

    @field_validator("placeholder_user", "placeholder_continue", "placeholder_bridge", "placeholder_part")
    @classmethod
    def _visible(cls, text: str) -> str:
        # " " is rejected by Anthropic and Bedrock (AN-7: opencode PR #3194 was reverted).
        if not text.strip():
            raise ValueError("a placeholder must contain non-whitespace text (providers reject blank text)")
        return text

    @model_validator(mode="after")
    def _coherent(self) -> Profile:
        plan = plan_for(self.active_rules())
        if self.system == "anywhere" and (self.alternate or plan.alternate or plan.bridge):
            raise ValueError(
                "strict alternation and Mistral's role transitions need system messages out of the "
                "way: set system to 'leading', 'single' or 'fold'"
            )
        return self

    # -- derived

    def keys(self) -> frozenset[str]:
        """The canonical keys of the active rules (what check detects, what the stage repairs)."""
        return _derived(tuple(self.rules), self.requires_reasoning()).keys

    def requires_reasoning(self) -> bool:
        """True when assistant tool-call turns must carry ``reasoning_content``."""
        return self.reasoning == "require" and self.thinking

    def active_rules(self) -> tuple[str, ...]:
        """The rules in force: reasoning rules only apply in thinking mode."""
        return _derived(tuple(self.rules), self.requires_reasoning()).active

    def core_options(self) -> dict[str, Any]:
        return dict(self.options)

    def derive(self, name: str, **changes: Any) -> Profile:
        """A new profile extending this one (``add_rules``/``remove_rules`` edit the rules)."""
        return _build(self, {"name": name, **changes}, where=None)


@dataclass(frozen=True)
class _Derived:
    active: tuple[str, ...]
    keys: frozenset[str]


@functools.lru_cache(maxsize=256)
def _derived(rules: tuple[str, ...], thinking: bool) -> _Derived:
    # What the rules in force are, from what decides it (a profile is immutable, but a
    # copy made with model_copy(update=...) is another profile: the cache is keyed by the
    # fields, not the instance). Every Normalizer asks this several times (its encoder,
    # its stage), and the CLI makes one per file: computed once per set of rules.
    active = tuple(r for r in rules if thinking or not thinking_only(r))
    return _Derived(active=active, keys=frozenset(k for rule in active for k in RULES[rule].keys))


def _build(parent: Profile | None, data: dict[str, Any], where: Any, trusted: bool = False) -> Profile:
    # Merge `data` over the parent's fields: options merge key by key, rules are replaced
    # by `rules` and then edited by `add_rules` / `remove_rules`. `trusted`: the built-in
    # catalogue, made without validation (see Profile.model_config).
    data = dict(data)
    # The fields as they are (model_dump would build the serializer): what is merged below
    # is copied, and the rest (strings, tuples) is immutable.
    base: dict[str, Any] = {}
    if parent is not None:
        base = {name: getattr(parent, name) for name in Profile.model_fields}
    add = data.pop("add_rules", ())
    remove = data.pop("remove_rules", ())
    for name, value in (("add_rules", add), ("remove_rules", remove), ("rules", data.get("rules", ()))):
        # Checked before the set operations below: a file can hold any value here.
        if not isinstance(value, (list, tuple)) or not all(isinstance(r, str) for r in value):
            raise _bad(where, name, "must be a list of rule ids", data)
    if parent is not None:
        base["extends"] = parent.name
        base["description"] = ""
    options = data.pop("options", None) or {}
    if not isinstance(options, dict):
        raise _bad(where, "options", "must be a table of the core's options", data)
    options = {**base.get("options", {}), **options}
    merged = {**base, **data, "options": options}
    removed = set(remove)
    rules = [r for r in merged.get("rules", ()) if r not in removed]
    merged["rules"] = tuple(rules) + tuple(r for r in add if r not in rules)
    try:
        profile = Profile.model_construct(**merged) if trusted else Profile(**merged)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"]) or "profile"
        raise _bad(where, field, err["msg"].removeprefix("Value error, "), data) from None
    try:
        make_options(profile.core_options(), {})
    except UsageError as exc:
        raise _bad(where, "options", str(exc), data) from None
    return profile


def _bad(where: Any, field: str, what: str, data: dict[str, Any]) -> UsageError:
    # "file:line: field: what" when the profile came from a file.
    if where is None:
        return UsageError(f"profile {data.get('name', '?')!r}: {field}: {what}")
    path, text = where
    line = _line_of(text, field.split(".")[0])
    loc = f"{path}:{line}" if line else str(path)
    return UsageError(f"{loc}: profile field {field!r}: {what}")


def _line_of(text: str, key: str) -> int | None:
    # JSON `"key":` (also after `{` or `,`), TOML `key =`, dotted `key.x =`, `[key]`, `[key.x]`.
    k = re.escape(key)
    pattern = re.compile(rf'^\s*(?:[{{,]\s*)?(?:"{k}"\s*:|{k}\s*[=.]|\[\[?\s*{k}\s*[\].])')
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            return number
    return None


# ---------------------------------------------------------------------- built-in profiles

def _builtins() -> dict[str, Profile]:
    # Each entry of the table is a profile's fields, or (``extends``) the changes to an
    # earlier one's; made without validation (trusted: the library's own data).
    made: dict[str, Profile] = {}
    for entry in BUILTINS:
        data = dict(entry)
        parent = data.pop("extends", None)
        made[data["name"]] = _build(made[parent] if parent is not None else None, data, where=None, trusted=True)
    return made


#: The built-in profiles, by name.
PROFILES: dict[str, Profile] = _builtins()


# ---------------------------------------------------------------------- lookup and loading


def get_profile(profile: Any) -> Profile:
    """A Profile from a Profile, a built-in name (with ``:flag`` suffixes), or a file path.

    Raises:
        UsageError: unknown name, unreadable or invalid file (``file:line`` when known).
    """
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, os.PathLike) or (isinstance(profile, str) and _looks_like_path(profile)):
        return load_profile(profile)
    if not isinstance(profile, str):
        raise UsageError(f"profile must be a name, a path or a Profile, got {type(profile).__name__}")
    name, _, flags = profile.partition(":")
    base = PROFILES.get(name)
    if base is None:
        raise UsageError(f"unknown profile {name!r}; the profiles are: {', '.join(PROFILES)} (or a .toml/.json file)")
    if not flags:
        return base
    changes: dict[str, bool] = {}
    booleans = [f for f, info in Profile.model_fields.items() if info.annotation in (bool, "bool")]
    for flag in flags.split(","):
        field, on = (flag[3:], False) if flag.startswith("no-") else (flag, True)
        field = field.replace("-", "_")
        if field not in booleans:
            raise UsageError(f"unknown profile flag {flag!r} in {profile!r}; the flags are: {', '.join(booleans)}")
        changes[field] = on
    return base.derive(profile, description=base.description, **changes)


def _looks_like_path(text: str) -> bool:
    return text.endswith((".toml", ".json")) or "/" in text or os.sep in text


def load_profile(path: str | os.PathLike[str], _seen: tuple[str, ...] = ()) -> Profile:
    """Load a profile from a TOML or JSON file (``extends`` resolves names and relative paths).

    Raises:
        UsageError: the file is missing, unparsable, or describes an invalid profile; the
            message says ``file:line`` where it can.
    """
    file = Path(path)
    key = str(file.resolve())
    if key in _seen:
        raise UsageError(f"{file}: profile extends itself ({' -> '.join(_seen + (key,))})")
    if len(_seen) >= MAX_PROFILE_EXTENDS:
        raise UsageError(f"{file}: more than {MAX_PROFILE_EXTENDS} profile files extend one another "
                         "(MAX_PROFILE_EXTENDS); a real chain is one or two files long")
    suffix = file.suffix.lower()
    # The suffix first: a path such as /dev/zero is refused before anything is opened.
    if suffix not in (".toml", ".json"):
        raise UsageError(f"{file}: a profile file must end in .toml or .json")
    text = _read_text(file)
    deep = _too_deep(text, suffix)
    if deep is not None:
        raise UsageError(f"{file}:{deep[0]}:{deep[1]}: {_DEEP}")
    data: Any
    try:
        data = _parse(file, text, suffix)
    except RecursionError:  # the pre-check missed a nesting the parser recursed on
        raise UsageError(f"{file}: {_DEEP}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{file}:1: a profile file must hold an object (a table of profile fields)")
    for field, value in data.items():  # dotted TOML keys nest without brackets
        if _depth_exceeds(value, MAX_PROFILE_DEPTH - 1):
            raise _bad((file, text), str(field), _DEEP, data)
    data.setdefault("name", file.stem)
    parent_ref = data.pop("extends", None)
    parent: Profile | None = None
    if parent_ref is not None:
        if not isinstance(parent_ref, str):
            raise _bad((file, text), "extends", "must be a profile name or a path", data)
        if _looks_like_path(parent_ref):
            try:
                parent = load_profile(file.parent / parent_ref, _seen + (key,))
            except UsageError as exc:
                if _seen:
                    raise
                # Said once, by the file the caller named: its extends line led to the bad file.
                raise _bad((file, text), "extends", str(exc), data) from None
        else:
            try:
                parent = get_profile(parent_ref)
            except UsageError as exc:
                raise _bad((file, text), "extends", str(exc), data) from None
    return _build(parent, data, where=(file, text))


_DEEP = (f"nested deeper than {MAX_PROFILE_DEPTH} levels (MAX_PROFILE_DEPTH); "
         "a profile is a table of fields, a few levels deep")


def _read_text(file: Path) -> str:
    """The file's text, if it is a regular file of at most MAX_PROFILE_BYTES in UTF-8."""
    return read_small_text(file, what="a profile file", limit=MAX_PROFILE_BYTES, limit_name="MAX_PROFILE_BYTES")


def _parse(file: Path, text: str, suffix: str) -> Any:
    if suffix == ".toml":
        # Imported here: only a profile file needs it (tomllib and its regular expressions are
        # ~15M instructions, ~5 ms, of a start-up that parses no TOML).
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10 (mypy checks as 3.10, where tomli may be absent)
            import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            at = re.search(r"line (\d+), column (\d+)", str(exc))
            loc = f"{file}:{at.group(1)}:{at.group(2)}" if at else str(file)
            raise UsageError(f"{loc}: invalid TOML: {str(exc).split(' (at ')[0]}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


def _too_deep(text: str, suffix: str) -> tuple[int, int] | None:
    """Where (line, column) the text first nests deeper than MAX_PROFILE_DEPTH, or None."""
    return nested_at(text, toml=suffix == ".toml", limit=MAX_PROFILE_DEPTH)


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when ``value`` nests lists/dicts more than ``limit`` levels (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def make_stage(
    profile: Profile, encoder: Spelling, out: Callable[[dict[str, Any] | None, list[Note]], None]
) -> ProfileStage | None:
    """The profile's stage after the core (sending what is final to ``out``), or None when
    it has nothing to do."""
    stage = ProfileStage(profile, encoder, out)
    return None if stage.idle else stage
