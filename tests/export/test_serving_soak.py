"""A bounded soak of the served tiny model (``benchmarks/serving_soak.py``): 32 clients, mixed good, bad
and oversize requests; zero 5xx and the server's memory levels off.

The normal run sends 4,000 requests (a few seconds); ``LISA_TF_SOAK_REQUESTS=10000`` runs the issue's full
soak.
"""

from __future__ import annotations

import os




def test_soak_mixed_requests_from_32_clients(tiny_model_base):
    from benchmarks.serving_soak import soak

    requests = int(os.environ.get("LISA_TF_SOAK_REQUESTS", "4000"))
    result = soak(tiny_model_base, requests=requests, clients=32, start_timeout=120)
    assert result["server_errors"] == 0, result["counts"]
    assert result["unexpected"] == 0, result["first_unexpected"]
    kinds = {key.split(" -> ")[0]: n for key, n in result["counts"].items()}
    assert sum(kinds.values()) == requests
    assert kinds["good"] > requests / 2 and kinds["bad"] > requests / 10
    assert kinds["oversize sentence"] > 0 and kinds["oversize body"] > 0
    rss = result["rss_mb_start_and_after_each_quarter"]
    assert len(rss) == 5
    # after the first quarter the allocator has its working set; the last three quarters add little
    assert rss[4] - rss[1] < 32, rss
