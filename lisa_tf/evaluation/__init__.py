"""Scoring: CoNLL-2005 SRL (``srl_eval``), parsing / POS / predicate metrics (``parse_eval``) and the
Markdown result tables of the papers (``tables``).

Submodules are imported on use (``from lisa_tf.evaluation import srl_eval``); this package only defines
the error raised when gold and predicted inputs do not correspond.
"""

from __future__ import annotations

from data_pipeline.errors import DataFormatError


class EvaluationInputError(DataFormatError):
    """Gold and predicted inputs cannot be compared (different sentence counts or lengths, missing layers).

    A :class:`~data_pipeline.errors.DataFormatError`, so the command line reports it as one line naming
    the file (or ``<input>`` for in-memory sentences) and line.
    """
