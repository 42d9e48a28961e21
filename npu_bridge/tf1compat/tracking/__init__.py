"""TF 1.15's `tensorflow.python.training.tracking`, which TensorFlow 2.11 moved to `tensorflow.python.trackable`.

Ported RNN cells test `isinstance(cell, base.Trackable)` and model code subclasses `tracking.AutoTrackable`; these
are the same classes under TF 1.15's module names.
"""
