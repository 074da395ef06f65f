"""Small shared utilities every layer of the library may use; they import nothing of it.

- :mod:`~lisa_tf.util.atomic_files`: files and directories written whole or not at all.
- :mod:`~lisa_tf.util.native_logs`: TensorFlow imported without the native log lines a user cannot act on.
"""
