"""The engine tests' corpus: the scale benchmark's generator (``benchmarks/corpus.py``)."""

from __future__ import annotations

from benchmarks.corpus import conversations, finetune_file, finetune_files, session_files

__all__ = ["conversations", "finetune_file", "finetune_files", "session_files"]
