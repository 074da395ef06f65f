"""Lines of user text read safely: one at a time, decoded alone, bounded in length.

What ``predict --input``, ``parse --input`` and the corpus pipeline (``label-corpus``) read: a line
that cannot be used is reported with the reason and the lines around it are still read.
"""

from __future__ import annotations


def text_lines(handle, limit: int, blank: bool = False):
    """``(line number, text or None, why it is skipped or None)`` for each non-blank line of a binary
    ``handle`` (each line with ``blank``: a blank one as ``""``), read lazily.

    A line is decoded on its own (a byte that is not UTF-8 costs that line only, never the lines
    before it in the same read buffer), and read at most ``limit`` characters at a time: a longer
    line is skipped without being held in memory whole.
    """
    number = 0
    while True:
        raw = handle.readline(4 * limit + 1)  # a UTF-8 character is at most 4 bytes
        if not raw:
            return
        number += 1
        if not raw.endswith(b"\n") and len(raw) > 4 * limit:
            size = len(raw)
            while True:  # the rest of the line, discarded
                more = handle.readline(1 << 20)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    size -= more.endswith(b"\n")  # the line's own bytes, without its end
                    break
            yield number, None, (f"{size:,} bytes, over the limit of {limit:,} characters per line (a paragraph); "
                                 "split it into lines")
            continue
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            yield number, None, (f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte {error.start + 1} of the "
                                 "line); expected UTF-8 text")
            continue
        if len(line) > limit:
            yield number, None, f"{len(line):,} characters, over the limit of {limit:,} characters per line; split it"
        elif line.strip() or blank:
            yield number, line, None
