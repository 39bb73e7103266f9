"""The ``chatnorm`` command: one module per command around the library.

Only click, rich and presentation. ``_main`` declares the commands and their options (click;
the shared options are ``_options``) and maps errors to exit statuses; ``_commands_repair``
(with ``_diff`` for ``--check``/``--diff``), ``_commands_check`` (with ``_check``,
``_findings`` and ``_report_formats``) and ``_explain`` run one command each; ``_streams``,
``_progress`` and ``_text`` deal with the terminal and the standard streams. Files are
planned, repaired and written by the batch engine (``normalizer.batch``): nothing here
repairs anything.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chatnorm`` console script (and of ``python -m normalizer``); returns
    the exit status (``_main.main``).

    The signal handlers come first, before the command's modules are imported (click, the
    readers, the core: a few tenths of a second on a busy machine): a ^C in that time ends the
    run as a later one does, with one line and 130 (SIGTERM: 143), never a traceback. A bare
    ``--version`` is answered before even them: it imports nothing but the version line.
    """
    import sys

    if _print_version(sys.argv[1:] if argv is None else argv):
        return 0
    from ..batch.stop import SIGNAL, Interrupted, install, interrupted_line, settle

    install()
    try:
        from ._main import main as run

        return run(argv)  # (its own run reports a signal itself, saying what was written)
    except (Interrupted, KeyboardInterrupt):
        settle()
        sys.stderr.write(interrupted_line(SIGNAL[0], "stopped") + "\n")
        return 128 + (SIGNAL[0] or 2)


def _print_version(argv: list[str]) -> bool:
    """Answer a bare ``chatnorm --version`` without importing click or the engine (``_version``);
    True when it did. A write that fails is left to the whole command, which says what failed."""
    import sys

    from ._version import VERSION_FLAGS, version_line

    if len(argv) != 1 or argv[0] not in VERSION_FLAGS or sys.stdout is None:
        return False
    try:
        sys.stdout.write(version_line() + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        return False
    return True
