"""Files and directories written whole or not at all (lisa_tf/util/atomic_files.py)."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap

import pytest

from lisa_tf.util import atomic_files
from tests.conftest import ROOT


def test_a_failed_write_leaves_the_old_file_and_no_scratch(tmp_path):
    target = tmp_path / "scores.json"
    atomic_files.write_text(target, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_files.partial_file(target) as partial:
            partial.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.json"]


def test_the_partial_file_keeps_the_targets_suffix(tmp_path):
    # Keras writes only to names ending in ".keras" / ".weights.h5"
    with atomic_files.partial_file(tmp_path / "model.weights.h5") as partial:
        assert partial.name.endswith(".model.weights.h5") and partial.name.startswith(atomic_files.PARTIAL)
        partial.write_bytes(b"x")
    assert (tmp_path / "model.weights.h5").read_bytes() == b"x"


def test_a_directory_is_replaced_whole(tmp_path):
    target = tmp_path / "srl"
    with atomic_files.partial_directory(target) as new:
        (new / "a").write_text("1")
    with atomic_files.partial_directory(target) as new:
        (new / "b").write_text("2")
    assert sorted(p.name for p in target.iterdir()) == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["srl"]
    with pytest.raises(RuntimeError):
        with atomic_files.partial_directory(target) as new:
            (new / "c").write_text("3")
            raise RuntimeError("killed")
    assert sorted(p.name for p in target.iterdir()) == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["srl"]


def test_scratch_of_a_killed_write_is_removed_by_the_next_write_only_for_its_target(tmp_path):
    (tmp_path / ".partial-abcd1234.1").mkdir()  # a killed write of "1"
    (tmp_path / ".partial-abcd1234.a.1").mkdir()  # a killed write of "a.1": not ours
    with atomic_files.partial_directory(tmp_path / "1") as new:
        (new / "saved_model.pb").write_bytes(b"")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".partial-abcd1234.a.1", "1"]


def test_a_directory_moved_aside_is_put_back(tmp_path):
    aside = tmp_path / ".srl.replaced"
    aside.mkdir()
    (aside / "model.keras").write_text("old")
    assert atomic_files.recover_directory(tmp_path / "srl")
    assert (tmp_path / "srl" / "model.keras").read_text() == "old"


def test_kill_during_a_write_leaves_the_old_content(tmp_path):
    target = tmp_path / "big.json"
    target.write_text("old")
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from lisa_tf.util import atomic_files
        with atomic_files.partial_file({str(target)!r}) as partial:
            with open(partial, "w") as out:
                out.write("x" * 4096)
                out.flush()
                print("writing", flush=True)
                os.kill(os.getpid(), {int(signal.SIGKILL)})
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == -signal.SIGKILL and "writing" in result.stdout
    assert target.read_text() == "old"
    atomic_files.write_text(target, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]
