"""Deployment: SavedModel export and a TensorFlow-Serving-compatible REST server.

- :mod:`export.saved_model` writes a trained model as a SavedModel with serving signatures;
- :mod:`export.rest_server` serves any SavedModel directory laid out as TensorFlow Serving expects
  (``MODEL_BASE_PATH/<numeric version>/saved_model.pb`` + ``variables/``) over TensorFlow Serving's
  REST API, so clients written against ``tensorflow_model_server`` work unchanged.

Importing this package does not import TensorFlow; the submodules do so when they load a model.
"""
