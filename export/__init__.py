"""Deployment: SavedModel export and a TensorFlow-Serving-compatible REST server.

- :mod:`export.saved_model` writes a trained model as a SavedModel with serving signatures;
- :mod:`export.rest_server` serves any SavedModel directory laid out as TensorFlow Serving expects
  (``MODEL_BASE_PATH/<numeric version>/saved_model.pb`` + ``variables/``) over TensorFlow Serving's
  REST API, so clients written against ``tensorflow_model_server`` work unchanged;
- :mod:`export.demo` is the demo page the REST server answers at ``/``: it labels sentences through
  that server's REST API and draws each predicate's arguments and the parse;
- :mod:`export.serving_codec` converts TensorFlow Serving's request JSON to input arrays and outputs
  back to JSON; :mod:`export.model_versions` finds and loads the version directories.

Importing this package does not import TensorFlow; the submodules do so when they load a model.
"""
