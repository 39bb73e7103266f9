"""The ``chatnorm`` command: one module per command around the library.

``_main`` declares the commands and their options (click) and maps errors to exit
statuses; ``_repair``, ``_check`` and ``_explain`` run one command each; ``_files`` plans
inputs and writes outputs atomically; ``_streams``, ``_progress`` and ``_text`` deal with
the terminal and the standard streams. Nothing here repairs anything: it loops the core.
"""

from __future__ import annotations

from ._main import main

__all__ = ["main"]
