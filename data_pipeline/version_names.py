"""Version directory names read as TensorFlow Serving reads them (``base/1``, ``base/2``, ...).

Shared by the server's version manager (``export/model_versions.py``), ``lisa_tf.load`` and the
model-size lookup of a base directory, and ``export``'s hint for the next free version.
"""

from __future__ import annotations

from typing import Optional

#: The highest version number: TensorFlow Serving reads a version directory's name as an int64.
MAX_VERSION = 2**63 - 1


def parse_version(name: str) -> Optional[int]:
    """The version number a directory name (or a URL's ``/versions/V``) gives, as TensorFlow Serving
    reads it: ASCII digits of a number up to :data:`MAX_VERSION`; ``None`` for anything else.

    ``str.isdigit`` also accepts digits such as ``²`` that ``int`` refuses, and a larger number breaks
    every answer that carries the version (an int64 in TensorFlow Serving's protos).
    """
    if not (name.isascii() and name.isdigit()):
        return None
    digits = name.lstrip("0") or "0"
    if len(digits) > len(str(MAX_VERSION)):
        return None
    number = int(digits)
    return number if number <= MAX_VERSION else None


__all__ = ["MAX_VERSION", "parse_version"]
