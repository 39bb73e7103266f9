"""The core: :class:`Normalizer`, the sans-I/O state machine (``feed``, ``close``), in parts.

``_normalizer`` is the surface (feed, close, the report, the adapters' claim) over
``_actions`` (the state table's conditions and actions, the held turn, the limits); the
actions call on call hygiene (``_calls``), results and stubs (``_results``, with the stub's
words in ``normalizer._stub``), emission of a finished turn (``_emit``), what is held and its
size (``_held``), what comes in (``_input``), parked reasoning (``_parked``) and the records'
sentences (``_notes``). The table itself, the spec, is ``normalizer._state``.
"""

from __future__ import annotations

from ._normalizer import Normalizer

__all__ = ["Normalizer"]
