"""TF 1.15 internals no drop-in can keep: a clear error naming the script's line and the public replacement.

A ported script that reaches into TF 1.15's private state (Keras' `Model._layers` list, the C++ graph rewriter
`tensorflow.tools.graph_transforms`) cannot be served by TensorFlow 2.x: the state is gone or kept in another
form. Instead of an AttributeError deep inside Keras or "No module named ...", the script stops with one message
that says which line, what is gone and what to use instead.
"""
import sys

MODEL_LAYERS = ("Model._layers is TF 1.15 Keras' private, editable list of a model's layers; tf_keras keeps them "
                "in private trackable lists that no drop-in can let a script edit. Read model.layers instead, and to "
                "change a model's layers build a new model (tf.keras.Sequential(layers) or tf.keras.Model(inputs, "
                "outputs))")
GRAPH_TRANSFORMS = ("tensorflow.tools.graph_transforms (TransformGraph) was TF 1.x's C++ graph rewriter and is not "
                    "in TensorFlow 2.x: strip a frozen graph with tf.compat.v1.graph_util.extract_sub_graph and "
                    "remove_training_nodes, fold constants with tf.compat.v1.graph_util.convert_variables_to_"
                    "constants, or let Grappler optimize it (tf.compat.v1.ConfigProto's graph_options)")


def user_line():
    """'file:line' of the innermost frame outside the import machinery and npu_bridge: the script's line."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib") or
                                 "/importlib/" in frame.f_code.co_filename.replace("\\", "/") or
                                 "/npu_bridge/" in frame.f_code.co_filename.replace("\\", "/")):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


_STORED = "_tf1compat_layers"       # where a model subclass' own `self._layers = ...` is kept


def _get_layers(model):
    if _STORED in model.__dict__:
        return model.__dict__[_STORED]
    raise AttributeError(f"{user_line()}: {MODEL_LAYERS}")


def _set_layers(model, value):
    model.__dict__[_STORED] = value


def patch_model_layers(training_module):
    """Give Keras' Model (in `training_module`, tf_keras.src.engine.training) a `_layers` attribute that names the
    script's line and the replacement; a subclass that sets its own `self._layers` keeps what it set."""
    if hasattr(training_module, "Model"):
        training_module.Model._layers = property(_get_layers, _set_layers, doc=MODEL_LAYERS)
