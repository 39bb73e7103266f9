"""``[tool.chatnorm]`` in ``pyproject.toml``: a project's settings, found as ruff finds its own.

From the folder of the inputs (the folder itself for a folder input, the current folder for
stdin) upwards, the first ``pyproject.toml`` that has a ``[tool.chatnorm]`` table is the
configuration (one without the table is passed over). ``--config FILE`` names one instead,
``--isolated`` ignores them all. What the command line says wins over the file; the file
wins over the defaults::

    [tool.chatnorm]
    profile = "mistral"            # a built-in name, or a profile file (relative to this file)
    model = "mistral-small-2506"   # or: the model, whose profile is used (profile wins)
    select = ["MI", "OA-1"]        # check: the rule codes reported (default: all)
    ignore = ["MI-2"]              # check: codes not reported
    purpose = "training"           # check: serving or training (default: by the format)

    [tool.chatnorm.options]        # repair and explain, spelled as on the command line
    trailing-calls = "keep"
    orphan-results = "keep-as-user"
    on-invalid = "skip"
    stub-text = "[no result]"

One run has one configuration: inputs under two (two projects in one command) are refused
with both files named.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Config", "ConfigError", "find_config", "load_config", "KEYS", "OPTION_KEYS"]

#: The keys of ``[tool.chatnorm]`` and the type of each value.
KEYS: dict[str, type] = {"profile": str, "model": str, "select": list, "ignore": list, "purpose": str, "options": dict}
#: The keys of ``[tool.chatnorm.options]``: the command-line options of repair and explain.
OPTION_KEYS = ("trailing-calls", "orphan-results", "on-invalid", "stub-text")
#: A pyproject.toml is a few kB; a file far larger is not read whole.
MAX_CONFIG_BYTES = 1 << 20
#: How deeply a configuration file's arrays, tables and dotted keys may nest, anywhere in it
#: (tomllib parses the whole file, other tools' tables too, and recurses once a level). Real
#: pyproject.toml files are a handful of levels deep.
MAX_CONFIG_DEPTH = 64
_WHAT_TO_DO = "Fix the file, name another with --config FILE, or run with --isolated (no configuration)"


class ConfigError(Exception):
    """The configuration cannot be used (a usage error: exit 2). Names the file and the key."""


@dataclass
class Config:
    """The settings of ``[tool.chatnorm]`` (empty when there is none: ``path`` None)."""

    path: str | None = None
    profile: str | None = None  # a name, or a file path made absolute
    model: str | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    purpose: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def _table(path: str) -> dict[str, Any] | None:
    """``[tool.chatnorm]`` of a pyproject.toml, or None when it has none."""
    # Imported here: a run with no pyproject.toml above its inputs parses no TOML (tomllib
    # and its regular expressions are ~15M instructions, ~5 ms, of such a start-up).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 (mypy checks as 3.10, where tomli may be absent)
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

    from .._errors import UsageError
    from .._small_files import nested_at, read_small_text

    try:
        # A regular file only (a FIFO named by --config is refused, not waited on), and a
        # bounded read: the one home of how profile files are read too.
        text = read_small_text(path, what="a configuration file", limit=MAX_CONFIG_BYTES,
                               limit_name="MAX_CONFIG_BYTES")
    except UsageError as exc:
        said = str(exc)
        raise ConfigError(f"{said}{' ' if said.endswith('?') else '. '}{_WHAT_TO_DO}") from None
    # tomllib parses the whole file and recurses once a level: an array nested a few hundred
    # deep anywhere in it (in another tool's table too) was a RecursionError traceback.
    deep = nested_at(text, toml=True, limit=MAX_CONFIG_DEPTH)
    if deep is not None:
        raise ConfigError(f"{path}:{deep[0]}:{deep[1]}: nested deeper than {MAX_CONFIG_DEPTH} levels "
                          f"(MAX_CONFIG_DEPTH), so it is not read. {_WHAT_TO_DO}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}. {_WHAT_TO_DO}") from None
    except RecursionError:  # the pre-check missed a nesting the parser recursed on
        raise ConfigError(f"{path}: nested too deeply to be read (MAX_CONFIG_DEPTH is {MAX_CONFIG_DEPTH}). "
                          f"{_WHAT_TO_DO}") from None
    tool = data.get("tool")
    table = tool.get("chatnorm") if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.chatnorm must be a table ([tool.chatnorm])")
    return table


def load_config(path: str, *, required: bool = True) -> Config:
    """The configuration in ``path`` (a pyproject.toml, or any TOML file with the table)."""
    table = _table(path)
    if table is None:
        if required:
            raise ConfigError(f"{path}: has no [tool.chatnorm] table")
        return Config()
    config = Config(path=path)
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: [tool.chatnorm] has an unknown key {key!r}; the keys are: {', '.join(KEYS)}")
        want = KEYS[key]
        if not _of_type(value, want):
            kind = "a list of strings" if want is list else "a table" if want is dict else "a string"
            raise ConfigError(f"{path}: [tool.chatnorm] {key} must be {kind}, not {value!r}")
        if key == "options":
            for name, option in value.items():
                if name not in OPTION_KEYS:
                    raise ConfigError(f"{path}: [tool.chatnorm.options] has an unknown key {name!r}; "
                                      f"the keys are: {', '.join(OPTION_KEYS)}")
                if not isinstance(option, str):
                    raise ConfigError(f"{path}: [tool.chatnorm.options] {name} must be a string, not {option!r}")
            config.options = dict(value)
        elif key == "profile":
            config.profile = _profile_path(value, path)
        elif key == "purpose":
            if value not in ("serving", "training"):
                raise ConfigError(f"{path}: [tool.chatnorm] purpose must be 'serving' or 'training', not {value!r}")
            config.purpose = value
        else:
            setattr(config, key, value)
    return config


def _of_type(value: Any, want: type) -> bool:
    if want is list:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, want)


def _profile_path(value: str, config: str) -> str:
    """A profile file named in the configuration is relative to the configuration's folder."""
    if value.endswith((".toml", ".json")) and not os.path.isabs(value):
        return os.path.join(os.path.dirname(os.path.abspath(config)), value)
    return value


def _start(item: str) -> str:
    if item == "-":
        return os.getcwd()
    path = os.path.abspath(item)
    return path if os.path.isdir(path) else os.path.dirname(path)


def _nearest(folder: str) -> str | None:
    """The nearest pyproject.toml with [tool.chatnorm], from ``folder`` upwards."""
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and _table(candidate) is not None:
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def find_config(inputs: list[str], *, config: str | None = None, isolated: bool = False) -> Config:
    """The run's configuration: ``config`` if given, none with ``isolated``, else the one
    found from the inputs' folders upwards (see the module docstring)."""
    if isolated:
        return Config()
    if config is not None:
        return load_config(config)
    found: dict[str, str] = {}  # config path -> the first input under it
    for item in inputs:
        nearest = _nearest(_start(item))
        if nearest is not None:
            found.setdefault(nearest, item)
    if not found:
        return Config()
    if len(found) > 1:
        (a, x), (b, y) = list(found.items())[:2]
        raise ConfigError(f"{x} is configured by {a} and {y} by {b}: one run has one configuration. "
                          "Run chatnorm once per project, or choose one with --config FILE (--isolated: none)")
    # Inputs with no configuration beside configured ones: the one found applies to all.
    return load_config(next(iter(found)))
