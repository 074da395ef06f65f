"""The demo page the REST server answers at ``/`` and ``/index.html`` (:mod:`export.rest_server`).

``index.html`` is one self-contained file (inline CSS and JavaScript, no external assets), so it works
offline. It labels sentences through the REST API of the server that sent it: the ``text`` signature
for the model's own parse, ``with_parse`` for a pasted CoNLL-U parse. The served model's name is
written into the page here (its ``<meta name="model-name">``), and the page is sent with a
Content-Security-Policy that allows only its own inline script and style (by hash) and requests to
the same server.
"""

from __future__ import annotations

import base64
import hashlib
import html
import importlib.resources
import re
from typing import Sequence

#: The paths answered with the page (``GET``/``HEAD``).
PAGE_PATHS = ("/", "/index.html")
_MODEL_NAME = "{{MODEL_NAME}}"


def _hashes(tag: str, page: str) -> str:
    """The CSP source list of the sha256 hashes of every inline ``<tag>`` element's content."""
    blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.DOTALL)
    return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(b.encode('utf-8')).digest()).decode()}'" for b in blocks)


def demo_page(model_name: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The page for ``model_name``: its UTF-8 body and its response headers (content type, CSP)."""
    template = importlib.resources.files(__name__).joinpath("index.html").read_text(encoding="utf-8")
    page = template.replace(_MODEL_NAME, html.escape(model_name, quote=True))
    policy = (f"default-src 'none'; script-src {_hashes('script', page)}; style-src {_hashes('style', page)}; "
              "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-security-policy", policy.encode("ascii")),
               (b"x-content-type-options", b"nosniff"), (b"cache-control", b"no-cache")]
    return page.encode("utf-8"), headers


__all__: Sequence[str] = ["PAGE_PATHS", "demo_page"]
