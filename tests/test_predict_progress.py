"""The progress line of ``predict --input`` on a terminal: rate, share of the file read, time left."""

from __future__ import annotations

import io

from lisa_tf_cli.commands.predict import _progress, _read_share


def test_the_line_gives_the_rate_and_the_time_left_from_the_share_read():
    # 1,200 sentences in 14 s = 85.7/s; 40 % read in 14 s leaves 60 %: 21 s more at that pace
    assert _progress(1200, 14.0, 0.4) == "1200 sentences  85.7 sentences/s  40%  ETA 21s   "
    assert _progress(10, 0.0, None) == "10 sentences  0.0 sentences/s   "  # stdin: no size, no ETA


def test_the_share_read_follows_the_file_position():
    handle = io.BytesIO(b"x" * 100)
    handle.read(25)
    assert _read_share([handle], 100) == 0.25
    assert _read_share([], 100) is None and _read_share([handle], 0) is None
    handle.close()
    assert _read_share([handle], 100) == 1.0
