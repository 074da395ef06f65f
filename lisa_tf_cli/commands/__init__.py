"""One module per ``python -m lisa_tf`` command.

A command module named ``srl_eval.py`` is the command ``srl-eval``. It defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; heavy imports (TensorFlow) go inside ``run`` so
``--help`` and the data commands start fast. A command may define ``check(args)``, run before TensorFlow
is imported: it checks what can be checked without it (paths, model names, formats) and raises
:class:`~data_pipeline.errors.UserError`, so a mistake is reported in a fraction of a second. A command that never imports TensorFlow says so with
``TENSORFLOW = False``; for the others the command line imports it first, without its start-up noise
(:mod:`lisa_tf.util.native_logs`).
"""
