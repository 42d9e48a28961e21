"""tf.estimator.export: what a serving_input_receiver_fn returns, the export outputs (TensorFlow's own classes, which
TensorFlow core still has), and the two standard receiver builders."""
import collections

import tensorflow.compat.v1 as tf
from tensorflow.python.saved_model.model_utils.export_output import (
    ClassificationOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
)

__all__ = ["ClassificationOutput", "ExportOutput", "PredictOutput", "RegressionOutput", "ServingInputReceiver",
           "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn",
           "build_raw_serving_input_receiver_fn"]


def _as_dict(tensors, default_key, what):
    if tensors is None:
        return None
    if not isinstance(tensors, dict):
        tensors = {default_key: tensors}
    for key, tensor in tensors.items():
        if not isinstance(key, str) or not isinstance(tensor, (tf.Tensor, tf.SparseTensor)):
            raise ValueError(f"{what}: expected a tensor or a dict of str to tensors, got {key!r}: {tensor!r}")
    return tensors


class ServingInputReceiver(collections.namedtuple("ServingInputReceiver", (
        "features", "receiver_tensors", "receiver_tensors_alternatives"))):
    """The features the model_fn gets at serving time and the placeholders (receiver_tensors) that feed them; a
    single tensor is keyed 'feature' / 'input'."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _as_dict(features, "feature", "ServingInputReceiver features")
        receiver_tensors = _as_dict(receiver_tensors, "input", "ServingInputReceiver receiver_tensors")
        if features is None or receiver_tensors is None:
            raise ValueError("ServingInputReceiver: features and receiver_tensors are required")
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple("TensorServingInputReceiver", (
        "features", "receiver_tensors", "receiver_tensors_alternatives"))):
    """A ServingInputReceiver whose features are one tensor, passed to the model_fn as that tensor."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if not isinstance(features, (tf.Tensor, tf.SparseTensor)):
            raise ValueError(f"TensorServingInputReceiver: features must be a tensor, got {features!r}")
        receiver_tensors = _as_dict(receiver_tensors, "input", "TensorServingInputReceiver receiver_tensors")
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving_input_receiver_fn feeding placeholders shaped like `features` (a dict of tensors, or one tensor)
    with batch dimension default_batch_size."""
    def serving_input_receiver_fn():
        single = not isinstance(features, dict)
        named = {"feature": features} if single else features
        placeholders = {}
        for name, tensor in named.items():
            shape = [default_batch_size, *tensor.shape.as_list()[1:]] if tensor.shape.rank else None
            placeholders[name] = tf.placeholder(tensor.dtype, shape, name=name)
        if single:
            return TensorServingInputReceiver(placeholders["feature"], placeholders)
        return ServingInputReceiver(placeholders, placeholders)
    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A serving_input_receiver_fn taking serialized tf.Example strings and parsing them with `feature_spec`."""
    def serving_input_receiver_fn():
        examples = tf.placeholder(tf.string, [default_batch_size], name="input_example_tensor")
        return ServingInputReceiver(tf.parse_example(examples, feature_spec), {"examples": examples})
    return serving_input_receiver_fn
