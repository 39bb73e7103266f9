"""The batch engine (``normalizer.batch``) and the engine adapters (``normalizer.distributed``)
run without the command line's libraries: importing them, in a fresh interpreter, loads
neither click nor rich."""

from __future__ import annotations

import subprocess
import sys


def test_batch_and_distributed_load_neither_click_nor_rich() -> None:
    code = (
        "import sys, normalizer.distributed, normalizer.batch\n"
        "import normalizer.batch.repair, normalizer.batch.jobs, normalizer.batch.dask_engine, normalizer.batch.report\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_distributed_imports_batch_never_cli() -> None:
    code = "import sys, normalizer.distributed; print(sorted(m for m in sys.modules if m.startswith('normalizer.cli')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_engine_warns_without_click_as_the_command_would() -> None:
    """Without the command line, ``batch.text.warn`` writes the line itself: escaped, on
    stderr, one line; with it, the command's ``say`` does."""
    code = (
        "import sys, normalizer.batch.text as t\n"
        "t.warn('warning: a\\x1b[2Jb')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'rich')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (done.stdout.strip(), done.stderr) == ("[]", "warning: a\\x1b[2Jb\n")
