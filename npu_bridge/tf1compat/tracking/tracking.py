"""TF 1.15's `tensorflow.python.training.tracking.tracking`: now split over `tensorflow.python.trackable`'s
autotrackable, resource and asset modules."""
from tensorflow.python.trackable.asset import Asset
from tensorflow.python.trackable.autotrackable import AutoTrackable
from tensorflow.python.trackable.resource import CapturableResource, TrackableResource

__all__ = ["Asset", "AutoTrackable", "CapturableResource", "TrackableResource"]
