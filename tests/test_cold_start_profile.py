"""benchmarks/cold_start_profile.py: its import-time sums and its table, on a real ``-X importtime`` log."""

import os
import subprocess
import sys

from benchmarks.cold_start_profile import COLUMNS, import_sums, table


def test_import_sums_add_each_modules_own_time_by_top_level_package():
    log = subprocess.run([sys.executable, "-X", "importtime", "-c", "import json.decoder, email.message"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"), check=True).stderr
    sums = import_sums(log)
    assert {"json", "email"} <= set(sums) and all(seconds >= 0 for seconds in sums.values())
    own = sum(int(line.split("|")[0].split(":")[1]) for line in log.splitlines()
              if line.startswith("import time:") and line.split("|")[2].strip().split(".")[0] == "email")
    assert abs(sums["email"] - own / 1e6) < 1e-3  # the self column, not the cumulative one
    assert list(sums.values()) == sorted(sums.values(), reverse=True)


def test_the_table_has_a_row_per_entry_point_and_says_whether_its_target_is_met():
    report = {"cli-srl-fast": {
        "import_tensorflow_s": 2.5, "target_on": "wall", "target_s": 5.5, "target_met": False,
        "phases_median_s": {"wall": 7.25, "import tensorflow": 2.5, "restore export": 2.0, "first call": 2.1},
        "load_average": [1.2, 1.4], "imports_s": {"tensorflow": 1.7, "keras": 0.1, "matplotlib": 0.4}}}
    lines = table(report).splitlines()
    header = lines[0].split(" | ")
    assert header[0] == "| entry point" and [c for c in COLUMNS if c in header] == COLUMNS
    row = lines[2].split(" | ")
    assert row[0] == "| cli-srl-fast" and row[header.index("wall")] == "7.25"
    assert "wall ≤ 5.50: NOT met" in lines[2] and "1.2–1.4" in lines[2]
    assert lines[-1].startswith("| cli-srl-fast | 1.70 |") and lines[-1].endswith("| 0.40 |")  # matplotlib: other
