"""16-bit storage of a ``.keras`` model file's weights, loaded back as float32.

A shipped model's file is mostly its weights: LISA with a fine-tuned MiniLM encoder holds 23 M float32
parameters (90 MB), and every packaged copy stays in the repository's history. Stored as float16 the
file is half the size; Keras reads a float16 weight into its float32 variable as it reads any value
(``Variable.assign`` casts), so the model loads, computes and exports in float32 as before, with
weights rounded to 11 significant bits (relative error ≤ 2⁻¹¹ ≈ 0.05 %; magnitudes under 6e-8 become
0). The packaging measures the F1 of the stored file against float32 (:mod:`lisa_tf.packages.writing`).

Keras has no such option: its quantisation (``Model.quantize``) changes the layers that compute
(int8 / float8 kernels with scales), not the storage of a float model. A weight whose values do not
fit float16 (over 65,504 in magnitude: the decoder's −1e9 transition constraints) stays float32.
"""

from __future__ import annotations

import io
import os
import zipfile

import h5py
import numpy as np

#: The weights file inside a ``.keras`` archive.
WEIGHTS_ENTRY = "model.weights.h5"
_FLOAT16 = np.finfo(np.float16)


def _fits_float16(values: np.ndarray) -> bool:
    """No value overflows float16 (values under its smallest subnormal, 6e-8, become 0: an absolute
    error far below any weight that matters)."""
    magnitudes = np.abs(values[np.isfinite(values)])
    return not magnitudes.size or magnitudes.max() <= _FLOAT16.max


def _copy(source: h5py.Group, target: h5py.Group, counts: dict) -> None:
    """Copy ``source``'s attributes, groups and datasets into ``target``, float32 datasets as float16
    where they fit (a new file: HDF5 does not give back the space of a dataset deleted in place)."""
    for attribute, value in source.attrs.items():
        target.attrs[attribute] = value
    for name, item in source.items():
        if isinstance(item, h5py.Group):
            _copy(item, target.create_group(name), counts)
            continue
        values = item[()]
        if item.dtype == np.float32:
            kind = "float16" if _fits_float16(values) else "float32"
            counts[kind] += 1
            values = values.astype(kind)
        copied = target.create_dataset(name, data=values)
        for attribute, value in item.attrs.items():
            copied.attrs[attribute] = value


def store_weights_in_float16(path: str | os.PathLike) -> dict:
    """Rewrite the float32 weights of the ``.keras`` file at ``path`` as float16, in place (the
    caller writes ``path`` as a partial file: :mod:`lisa_tf.util.atomic_files`).

    Returns:
        ``{"float16": n, "float32": m}``: how many weight arrays were converted and how many kept
        float32 because their values do not fit float16.
    """
    with zipfile.ZipFile(path) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    counts = {"float16": 0, "float32": 0}
    rewritten = []
    for info, data in entries:
        if info.filename == WEIGHTS_ENTRY:
            buffer = io.BytesIO()
            with h5py.File(io.BytesIO(data), "r") as source, h5py.File(buffer, "w") as target:
                _copy(source, target, counts)
            data = buffer.getvalue()
        rewritten.append((info, data))
    with zipfile.ZipFile(path, "w") as archive:
        for info, data in rewritten:
            archive.writestr(info, data)
    return counts
