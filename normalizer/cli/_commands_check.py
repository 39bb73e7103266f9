"""``chatnorm check``, run: the selection of codes, the inputs, and the check (``_check``)
in the output format asked for."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from ._common import _RUNNING, _need_stdin, _PipeClosed

if TYPE_CHECKING:
    from ..profiles._profiles import Profile

__all__ = ["run_check_command"]


def _codes(values: tuple[str, ...]) -> list[str]:
    """``--select OA-1,MI --select tool`` -> ``["OA-1", "MI", "tool"]``."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def run_check_command(inputs: tuple[str, ...], *, fmt: str, profile: Profile, output_format: str,
                      select: tuple[str, ...], ignore: tuple[str, ...], purpose: str | None, statistics: bool,
                      exit_zero: bool, color: bool | None, max_per_file: int, max_seen_ids: int, quiet: bool,
                      reader_options: dict[str, Any]) -> None:
    """The ``check`` command (``_main.check`` declares its options)."""
    from ._check import CheckSettings, run_check
    from ..batch.plan import PlanError, expand_inputs
    from ._findings import Selection, SelectorError
    from ._report_formats import make_output

    if statistics and output_format == "sarif":
        raise click.UsageError("--statistics has no SARIF form: use --output-format text or json with it")
    try:
        selection = Selection(_codes(select), _codes(ignore))
    except SelectorError as exc:
        raise click.UsageError(str(exc)) from None
    items = list(inputs) or ["-"]
    _need_stdin(items, "no input: give a file or a folder, or pipe a session into it", implicit=not inputs)
    missing: list[str] = []
    try:
        files = [found.path for found in expand_inputs(items, missing=missing)]
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    if not files and not missing:
        raise click.UsageError(f"no session files in {', '.join(items)}")
    colour = color if color is not None else (sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    settings = CheckSettings(fmt=fmt, profile=profile, max_per_file=max_per_file, max_seen_ids=max_seen_ids,
                             quiet=quiet, selection=selection, purpose=purpose, exit_zero=exit_zero,
                             reader_options=reader_options,
                             repair=click.get_current_context().meta.get("repair", "chatnorm repair"))
    _RUNNING.update(command="check")
    try:
        status = run_check(files, settings, make_output(output_format, statistics=statistics, colour=colour),
                           missing=missing)
    except BrokenPipeError:
        raise _PipeClosed() from None
    if status:
        raise SystemExit(status)

