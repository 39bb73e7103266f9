"""The batch engine: files repaired one after the other, in worker processes, or as Dask
tasks, without click or rich. ``cli`` (the command line) and ``distributed`` (the library's
engine adapters) both run it.

Modules, each imported when asked for (this package imports nothing, so that
``batch.stop``'s signal handler can be installed before the heavier imports):

* ``stop`` -- the stop flag, the signal handler, :class:`~.stop.Interrupted`;
* ``tracking`` -- progress counters (the model; the display is ``cli._progress``) and what
  a run has written; ``text`` -- text for a person, escaped, and one warning line;
* ``results`` -- :class:`~.results.Settings` and :class:`~.results.FileResult`;
* ``plan`` -- inputs (files, folders, stdin) paired with outputs; ``outputs`` -- atomic
  outputs and their temporary files;
* ``streams`` -- the input and output byte streams of one file; ``detect`` -- what a file
  is, told once from its head; ``pump`` -- the per-file pipe; ``sessions`` -- a session
  repaired in its own format; ``repair`` -- one file, end to end (``repair_file``);
* ``jobs`` -- many files, in a process pool or on Dask (``dask_engine``), handed out in the
  plan's order (``order``); ``report`` -- the ``--report`` document and the totals.
"""

from __future__ import annotations

__all__: list[str] = []
