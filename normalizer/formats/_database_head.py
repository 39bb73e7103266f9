"""Whether an input is a SQLite database (an ``opencode.db``), told by its first bytes.

Apart from ``_opencode_db`` so that asking costs no ``sqlite3`` import: every path the readers
open is asked, and only a database needs SQLite.
"""

from __future__ import annotations

import os
from typing import Any, Final

__all__ = ["SQLITE_MAGIC", "is_database"]

#: The first 16 bytes of every SQLite 3 database file: a database is known by them, never
#: by its name.
SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def is_database(source: Any) -> bool:
    """``source`` is a path (not ``"-"``) to a file that begins with SQLite's header."""
    if not isinstance(source, (str, os.PathLike)) or source == "-":
        return False
    try:
        with open(source, "rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False  # (opening it to read it says why, where every file is opened)
