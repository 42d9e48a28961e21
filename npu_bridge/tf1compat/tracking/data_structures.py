"""TF 1.15's `tensorflow.python.training.tracking.data_structures`: now `tensorflow.python.trackable`'s."""
from tensorflow.python.trackable.data_structures import (
    List,
    ListWrapper,
    Mapping,
    NoDependency,
    sticky_attribute_assignment,
    wrap_or_unwrap,
)

__all__ = ["List", "ListWrapper", "Mapping", "NoDependency", "sticky_attribute_assignment", "wrap_or_unwrap"]
