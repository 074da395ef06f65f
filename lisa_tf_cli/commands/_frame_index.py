"""The ``--frames`` option of the commands that read a PropBank frame index (``predict``, ``export``,
``label-corpus``): the index is read and checked whole when the command starts
(:meth:`data_pipeline.frame_index.FrameIndex.load`), so a wrong one is one ``error:`` line before any model
loads, not a traceback in the middle of labelling or exporting, nor, in ``label-corpus``, whose workers
read it at their first sense, a corpus labelled only to be written as dead letters."""

from __future__ import annotations

import os
import pathlib
from typing import Optional

from data_pipeline.errors import DataFormatError


def check_frame_index(path: Optional[str | os.PathLike], option: str = "--frames") -> Optional[pathlib.Path]:
    """``path`` as a path, once the frame index there is read and checked (None: the shipped index,
    not read). It stays loaded for the command: :func:`lisa_tf.decoding.frame_meanings.frame_index`
    reads a path once per process.

    Raises:
        FrameIndexError: no such file, or no frame index (naming ``option``, the file, where in it and
            what was expected).
    """
    from lisa_tf.decoding.frame_meanings import FrameIndexError, check_frames, frame_index

    checked = check_frames(path, option)
    if checked is not None:
        try:
            frame_index(checked)
        except DataFormatError as error:
            raise FrameIndexError(f"{option} {error}") from None
    return checked
