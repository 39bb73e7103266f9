"""What the command line writes out for start-up's sake, held to where it is declared.

The command line's lists of formats are written out because the registry they come from
(``formats._registry``) loads every converter, and ``chatnorm --help`` or ``--version`` need
not pay for that. The options' choices are read from their declaration (``_defaults``, which
imports nothing), so they need no test of their own beyond their spelling.
"""

from __future__ import annotations

from typing import get_args

import click

from normalizer import PROFILES, Options
from normalizer._defaults import OnInvalid, OrphanResults, TrailingCalls
from normalizer.cli._config import OPTION_KEYS
from normalizer.cli._main import cli
from normalizer.formats._registry import INPUT_FORMATS, OUTPUT_FORMATS


def _option(command: str, name: str) -> click.Option:
    params = cli.commands[command].params  # type: ignore[attr-defined]
    return next(p for p in params if isinstance(p, click.Option) and name in p.opts)


def _choices(command: str, name: str) -> list[str]:
    option_type = _option(command, name).type
    assert isinstance(option_type, click.Choice)
    return list(option_type.choices)


def test_from_and_to_are_the_registry_s_formats_in_its_order() -> None:
    for command in ("repair", "check", "explain"):
        assert _choices(command, "--from") == ["auto", *INPUT_FORMATS]
    assert _choices("repair", "--to") == ["auto", *OUTPUT_FORMATS]


def test_the_core_s_choices_are_the_options_own_in_kebab_case() -> None:
    for name, choices in (("--orphan-results", OrphanResults), ("--trailing-calls", TrailingCalls),
                          ("--on-invalid", OnInvalid)):
        assert _choices("repair", name) == [c.replace("_", "-") for c in get_args(choices)]
        field = Options.model_fields[name[2:].replace("-", "_")]
        assert field.annotation is choices


def test_the_configuration_s_options_are_command_line_options_of_repair_and_explain() -> None:
    for key in OPTION_KEYS:
        for command in ("repair", "explain"):
            if key == "on-invalid" and command == "explain":
                continue  # explain shows every message, valid or not
            assert _option(command, f"--{key}").name == key.replace("-", "_")


def test_the_profile_help_names_every_built_in_profile() -> None:
    help_text = _option("repair", "--profile").help or ""
    assert all(name in help_text for name in PROFILES)
