"""TF 1.15's `tensorflow.python.training.tracking.base`: now `tensorflow.python.trackable.base`."""
from tensorflow.python.trackable.base import (
    CheckpointInitialValue,
    NoRestoreSaveable,
    Trackable,
    TrackableReference,
    no_automatic_dependency_tracking,
)

__all__ = ["CheckpointInitialValue", "NoRestoreSaveable", "Trackable", "TrackableReference",
           "no_automatic_dependency_tracking"]
