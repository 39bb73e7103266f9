"""The options the commands share, and what they decide before a command runs: the
profile (``--profile``, a name or a file, resolved once), ``--model``, ``--config`` and
``--isolated`` (``[tool.chatnorm]``, ``_config``), and the core's options
(``--orphan-results``, ``--trailing-calls``, ``--stub-text``)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeAlias

import click

from .._defaults import DEFAULT_STUB_TEXT, OrphanResults, TrailingCalls
from .._errors import NormalizerError
from ._choices import Choice, command_line_values

if TYPE_CHECKING:
    from ..profiles._profiles import Profile

__all__: list[str] = []


def _profile_names() -> list[str]:
    # From the ProfileName literal (kept in step with PROFILES by tests/test_types.py), not
    # from PROFILES: declaring the options must not load the profiles (start-up time). From
    # its own module, not normalizer._types, which imports typing_extensions (`--help`).
    import typing

    from ..profiles._builtins import ProfileName

    return sorted(n for n in typing.get_args(ProfileName) if ":" not in n)


if TYPE_CHECKING:
    # click 8.5 made ParamType generic (value and return types); subscripting it at run time
    # fails on every earlier click that the floor in pyproject.toml admits.
    _ParamType: TypeAlias = click.ParamType["Profile", Any]
else:
    _ParamType = click.ParamType


class _Profile(_ParamType):
    """A built-in profile name, or a path to a TOML/JSON profile file: resolved here, once
    per run (a file is read once), and passed down as the ``Profile`` itself."""

    name = "profile"

    def convert(self, value: Any, param: Any, ctx: Any) -> Profile:
        from ..profiles._profiles import get_profile

        if isinstance(value, str) and ctx is not None:
            ctx.meta["profile_text"] = value  # as typed, for hints that repeat the command
        try:
            return get_profile(value)  # a Profile is returned as it is (click converts defaults too)
        except NormalizerError as exc:
            self.fail(str(exc), param, ctx)


# "--help" first: click before 8.4 names the first one in "Try ... for help" (8.4 names
# "--help" whatever the order); the help lists them shortest first either way.
_CONTEXT = {"help_option_names": ["--help", "-h"], "max_content_width": 100}


def _model_option(f: Any) -> Any:
    """``--model NAME``, ``--config FILE`` and ``--isolated``, and what they decide before
    the command runs: the profile (``--profile``, else the profile of ``--model``
    (``normalizer.profile_for_model``), else ``[tool.chatnorm]``'s ``profile`` or ``model``,
    else the default) and every option not given on the command line that the
    configuration sets (``_config``). ``ctx.meta["repair"]`` is the repair command that
    uses the same profile (check's hint)."""

    @functools.wraps(f)
    def command(*args: Any, model: str | None, config: str | None, isolated: bool, **kwargs: Any) -> Any:
        from ._config import OPTION_KEYS, ConfigError, find_config

        ctx = click.get_current_context()

        def unset(name: str) -> bool:
            return ctx.get_parameter_source(name) is click.core.ParameterSource.DEFAULT

        items = list(kwargs["inputs"]) if "inputs" in kwargs else [kwargs.get("input", "-")]
        try:
            cfg = find_config(items or ["-"], config=config, isolated=isolated)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
        hint = "chatnorm repair"
        if not unset("profile"):
            hint += f" --profile {ctx.meta.get('profile_text') or kwargs['profile'].name}"
        elif model is not None:
            from ..profiles._models import profile_for_model  # only with --model: start-up of the rest

            kwargs["profile"] = profile_for_model(model)
            hint += f" --model {model}"
        elif cfg.profile is not None or cfg.model is not None:
            kwargs["profile"] = _configured_profile(cfg)
        ctx.meta["repair"] = hint
        for name in (key.replace("-", "_") for key in OPTION_KEYS):
            value = cfg.options.get(name.replace("_", "-"))
            if name in kwargs and value is not None and unset(name):
                kwargs[name] = _configured_option(ctx, name, value, cfg.path)
        for name in ("select", "ignore"):
            if name in kwargs and unset(name):
                kwargs[name] = tuple(getattr(cfg, name))
        if "purpose" in kwargs and unset("purpose") and cfg.purpose is not None:
            kwargs["purpose"] = cfg.purpose
        return f(*args, **kwargs)

    for decorator in reversed([  # click lists options in the order they are applied, last first
        click.option("--model", default=None, metavar="NAME",
                     help="The model the history is sent to (e.g. mistral-small-2506, Llama-3.1-8B-Instruct): "
                          "picks its profile from the model table (README); --profile wins over it."),
        click.option("--config", default=None, metavar="FILE", type=click.Path(dir_okay=False),
                     help="Settings from this TOML file's [tool.chatnorm] table (default: the nearest "
                          "pyproject.toml with one, from the inputs' folder upwards)."),
        click.option("--isolated", is_flag=True, help="Ignore every configuration file."),
    ]):
        command = decorator(command)
    return command


def _configured_profile(cfg: Any) -> Profile:
    from ..profiles._models import profile_for_model
    from ..profiles._profiles import get_profile

    try:
        return get_profile(cfg.profile) if cfg.profile is not None else profile_for_model(cfg.model)
    except NormalizerError as exc:
        raise click.UsageError(f"{cfg.path}: [tool.chatnorm] profile: {exc}") from None


def _configured_option(ctx: click.Context, name: str, value: str, path: str | None) -> Any:
    param = next(p for p in ctx.command.params if p.name == name)
    try:
        return param.type.convert(value, param, ctx)
    except click.BadParameter as exc:
        raise click.UsageError(f"{path}: [tool.chatnorm.options] {name.replace('_', '-')}: {exc.message}") from None



def _reader_options(f: Any) -> Any:
    """The readers' options a command line gives: each is a reader option its format declares
    (``Format.options``, so ``formats.READER_OPTIONS``), passed on by that name (:func:`_given`)."""
    return click.option(
        "--session", default=None, metavar="ID",
        help="Read only this session of a database of several (an opencode.db: every session by default, "
             "each one conversation, oldest first).")(f)


def _given(**options: Any) -> dict[str, Any]:
    """The readers' options given on the command line (None: not given), by their names in
    ``formats.READER_OPTIONS`` (loaded here, when a command runs, not when the CLI starts)."""
    from ..formats._registry import READER_OPTIONS

    unknown = set(options) - set(READER_OPTIONS)
    if unknown:  # pragma: no cover - a command line option no format declares
        raise AssertionError(f"not reader options: {sorted(unknown)}")
    return {name: value for name, value in options.items() if value is not None}


def _core_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--profile", default="default", show_default=True, type=_Profile(),
                     help="Provider profile: which rules the output must meet "
                          f"({', '.join(_profile_names())}, or a TOML/JSON file)."),
        click.option("--orphan-results", type=Choice(command_line_values(OrphanResults),
                                                     deprecated={"keep_as_user": "keep-as-user"}),
                     default="drop", show_default=True,
                     help="A tool result that answers no call: drop it (kept in the report), turn it into user "
                          "text, or fail (orphan_results in Python)."),
        click.option("--trailing-calls", type=click.Choice(command_line_values(TrailingCalls)), default=None,
                     help="Calls still unanswered at the end: answer with --stub-text, leave them open "
                          "(tools still running), or remove them. Default: stub for a session; keep for "
                          "training data (finetune, sharegpt), where an example may end on a call."),
        click.option("--stub-text", default=DEFAULT_STUB_TEXT, show_default=True,
                     help="Content of the synthetic result given to an unanswered call."),
    ]):
        f = decorator(f)
    return f
