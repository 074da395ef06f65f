"""Building a packaged model's or a run's SavedModel export into the cache of
:mod:`lisa_tf.packages.export_cache`: once, under a file lock (two servers starting at once build it once),
written beside its target and renamed into place by :func:`export.saved_model.export_package` or
:func:`~export.saved_model.export_run` (a killed build leaves no half export)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
from typing import Callable, Iterator, Optional

from lisa_tf.packages.export_cache import ExportCacheError, export_base, hold_export, record_source, remove_earlier_exports
from lisa_tf.packages.finding import is_package


@contextlib.contextmanager
def locked(path: pathlib.Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created when missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_export(package: str | os.PathLike, report: Callable[[str], None] = print,
                 frames: Optional[str | os.PathLike] = None, labelling: bool = False) -> pathlib.Path:
    """The cached export's base path of a package or a run directory (its best weights, as ``export
    --run`` takes them), built first when it is missing (``report`` says so: it takes a while, once);
    ``frames``: the user's own frame index merged into it (``predict --frames``; None: none), another
    export than the one without; ``labelling``: the export the library labels through (``predict``; its
    token signatures only: :func:`export.saved_model.export_model`), another export than the server's.

    The export is held for this process (:func:`~lisa_tf.packages.export_cache.hold_export`). After a build,
    the earlier exports of the same source not in use are removed
    (:func:`~lisa_tf.packages.export_cache.remove_earlier_exports`; ``report`` names them).

    Raises:
        ExportCacheError: the cache directory cannot be created, locked or written.
        RunError: a run without trained weights (nothing to serve yet).
    """
    if not is_package(package):
        from lisa_tf.models.runs import require_run, weights_file

        weights_file(require_run(package, "--model_base_path"))  # trained weights, checked before the lock
    base = export_base(package, frames, labelling)
    built = False
    try:
        with locked(base.with_name(f".{base.name}.lock")):
            if not (base / "1" / "saved_model.pb").exists():
                report(f"building the SavedModel export of {package} into {base} (once; later starts reuse it)")
                # imported only to build: a start from a built export loads no Keras model code
                from export.saved_model import export_package, export_run

                if is_package(package):
                    export_package(package, base / "1", frames=frames, labelling=labelling)
                else:
                    export_run(package, base / "1", "best", frames=frames, labelling=labelling)
                record_source(base, package, frames)
                built = True
            hold_export(base)
        if built:
            for earlier in remove_earlier_exports(base, package, frames):
                report(f"removed the earlier export {earlier} of {package}")
    except OSError as error:
        raise ExportCacheError(base.parent, error) from None
    return base
