"""Corpus scale: many files, or millions of lines, repaired on every core or on a cluster.

The engine-neutral entry points are here, sync and plain data in and out, so any engine
can map them (and they pickle):

* :func:`repair_lines` -- a batch of JSON lines in, the repaired lines and a
  :class:`FileResult` out, as a :class:`RepairedLines` (``.lines``, ``.result``) (a
  partition, a Ray batch);
* :func:`repair_file` -- one file into its output, streamed, written atomically;
* :func:`repair_files` -- many files into their outputs on this machine (in this process, or
  ``jobs`` worker processes), the report written as the results come; ``keep_results=False``
  returns the :class:`Totals` only, so that nothing held grows with the number of files;
* :func:`write_report` -- the results of many of them merged into one report (counts
  summed, records streamed from each unit's spool file).

Adapters for engines live in submodules, imported only when asked for:
``normalizer.distributed.dask`` (``pip install 'chat-normalizer[dask]'``) and
``normalizer.distributed.ray`` (``chat-normalizer[ray]``). Importing this package imports
neither.
"""

from __future__ import annotations

from ._batch import (FileResult, RepairedLines, Totals, repair_file, repair_files, repair_lines, report_chunks,
                     settings_for, total_counts, write_report)

__all__ = ["FileResult", "RepairedLines", "Totals", "repair_file", "repair_files", "repair_lines", "report_chunks", "settings_for",
           "total_counts", "write_report"]
