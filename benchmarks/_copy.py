"""The CLI's floor: a bare orjson JSONL copy (``python -m benchmarks._copy FILE > OUT``).

Reads the file line by line, ``orjson.loads`` + ``orjson.dumps`` each line, writes stdout.
Same I/O pattern as ``normalizer repair FILE``, with no repair at all.
"""

from __future__ import annotations

import sys

import orjson


def main(argv: list[str] | None = None) -> int:
    """Copy ``argv[0]`` (or stdin for ``-``) to stdout through orjson."""
    args = sys.argv[1:] if argv is None else argv
    loads, dumps, opt = orjson.loads, orjson.dumps, orjson.OPT_APPEND_NEWLINE
    out = sys.stdout.buffer
    write = out.write
    src = sys.stdin.buffer if not args or args[0] == "-" else open(args[0], "rb")  # noqa: SIM115
    with src:
        for line in src:
            if line.strip():
                write(dumps(loads(line), option=opt))
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
