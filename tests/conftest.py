"""Shared test fixtures: where the real data lives.

``SHARED`` is ``../shared/data`` beside the checkout. Tests that need it skip with a reason on a
user's clone, where it does not exist; what the core suite needs ships in ``data/`` and
``tests/fixtures/``.
"""

from __future__ import annotations

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
DATA = ROOT / "data"
SHARED = pathlib.Path(os.environ.get("LISA_TF_SHARED_DATA", ROOT.parent / "shared" / "data"))

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def shared_path(*parts: str) -> pathlib.Path:
    """Path under ../shared/data, skipping the calling test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the project's shared data folder beside the checkout); not present here")
    return path
