"""Shared test fixtures: where the real data lives.

``SHARED`` is ``../shared/data`` beside the checkout. Tests that need it skip with a reason on a
user's clone, where it does not exist; what the core suite needs ships in ``data/`` and
``tests/fixtures/``.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import shutil
from typing import Callable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
DATA = ROOT / "data"
SHARED = pathlib.Path(os.environ.get("LISA_TF_SHARED_DATA", ROOT.parent / "shared" / "data"))

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The exports the tests build of the shipped models (lisa_tf.packages.export_cache) go to the checkout's test
# cache, not the user's: keyed by the model files' hash, they are built once and reused by later runs.
os.environ.setdefault("LISA_TF_CACHE", str(ROOT / ".pytest_cache" / "lisa_tf"))


def shared_path(*parts: str) -> pathlib.Path:
    """Path under ../shared/data, skipping the calling test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the project's shared data folder beside the checkout); not present here")
    return path


def shipped_export(name: str) -> pathlib.Path:
    """The SavedModel export base path of the shipped model ``models/NAME``, built on first use."""
    from export.cache_build import build_export
    from lisa_tf.packages.finding import SHIPPED

    return build_export(SHIPPED / name, report=lambda line: None)


def built_once(tmp_path_factory, name: str, build: Callable[[pathlib.Path], None]) -> pathlib.Path:
    """The directory ``NAME`` made by ``build(path)`` once per test session, whichever test asks first.

    Under pytest-xdist the workers share it: it lives beside their temporary directories, the first
    worker to ask builds it while the others wait on a lock, and a ``NAME.done`` file marks it whole (a
    build that failed is removed and tried again by the next test that asks). The tests read it; one
    that changes a run copies it first. Run alone, it is built in the session's temporary directory."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    target, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            build(target)
            done.touch()
    return target


@pytest.fixture(scope="session")
def deepatt_run(tmp_path_factory):
    """A tiny DeepAtt run trained with the bf16 policy on 20 real EWT sentences (shared by export
    and serving tests)."""
    from lisa_tf.config import load_config
    from lisa_tf.training.loop import train
    from tests.models.conftest import tiny_overrides

    def build(run):
        config = load_config(None, tiny_overrides(**{
            "model.kind": "deepatt", "model.decode": "viterbi", "train.max_steps": 300, "train.eval_every": 300,
            "train.mixed_precision": "mixed_bfloat16",
        }))
        try:
            train(config, run, verbose=0)
        finally:
            import keras

            keras.mixed_precision.set_global_policy("float32")

    return built_once(tmp_path_factory, "deepatt_run", build)


@pytest.fixture(scope="session")
def lisa_run(tmp_path_factory):
    """A tiny LISA run (2 layers, syntax head in layer 1) trained on 20 real EWT sentences (shared
    by the export, predictor and command-line tests)."""
    from lisa_tf.config import load_config
    from lisa_tf.training.loop import train
    from tests.models.conftest import tiny_overrides
    from tests.models.test_lisa import TINY_LISA

    config = load_config(None, tiny_overrides(**TINY_LISA, **{"train.max_steps": 200, "train.eval_every": 200}))
    return built_once(tmp_path_factory, "lisa_run", lambda run: train(config, run, verbose=0))


@pytest.fixture(scope="session")
def lisa_export(lisa_run, tmp_path_factory):
    """The tiny LISA run and its SavedModel export (``…/srl/1``)."""
    from export.saved_model import export_run

    base = built_once(tmp_path_factory, "lisa_export", lambda base: export_run(lisa_run, base / "srl" / "1"))
    return lisa_run, base / "srl" / "1"


@pytest.fixture(scope="session")
def deepatt_pair(tmp_path_factory):
    """Two tiny argmax-decoding DeepAtt runs on the same 20 real EWT sentences that differ only in
    their seed; each evaluated three times, keeping the weights of the last two evaluations."""
    from lisa_tf.config import load_config
    from lisa_tf.training.loop import train
    from tests.models.conftest import tiny_overrides

    def build(base):
        for seed in (1, 2):
            config = load_config(None, tiny_overrides(**{
                "model.kind": "deepatt", "model.decode": "argmax", "train.max_steps": 90, "train.eval_every": 30,
                "train.keep_weights": 2, "train.seed": seed,
            }))
            train(config, base / f"seed{seed}", verbose=0)

    base = built_once(tmp_path_factory, "deepatt_pair", build)
    return [base / "seed1", base / "seed2"]


def pytest_collection_modifyitems(config, items):
    """The files of the longest tests first, longest first: ``@pytest.mark.slow(minutes=…)`` (measured
    on an idle 2-core machine), summed per file. run_tests.sh hands whole files to its two workers in
    this order (``--dist loadfile --no-loadscope-reorder``; the default order, by number of tests, started
    the 9-minute experiments file last, and one worker ran it alone at the end)."""
    minutes: dict = {}
    for item in items:
        marker = item.get_closest_marker("slow")
        minutes[item.path] = minutes.get(item.path, 0.0) + (float(marker.kwargs.get("minutes", 1.0)) if marker else 0.0)
    items.sort(key=lambda item: -minutes[item.path])  # stable: each file's tests, and the other files, keep their order
