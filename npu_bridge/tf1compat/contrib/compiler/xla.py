"""tf.contrib.compiler.xla: xla.compile and xla.estimator_model_fn on the CPU path, where the computation runs as
ordinary TF ops.

TF 1.15's xla.compile built the computation inside an XLA cluster (an XlaLaunch on GPU / TPU). An Ascend NPU
compiles its whole graph itself, and the CPU emulation needs ordinary ops for the precision pass to see, so here
the computation is built in the graph directly. What TF 1.15 did around it is kept, so code written against it
behaves the same: inputs pass through Identity ops named input_<i>, variables created inside are resource
variables, and the result comes back as TF 1.15 returned it (a flat result as a list, a lone tensor as a
one-element list, operations as control dependencies of Identity ops named output_<i>, only operations as one
grouped op named output_0, a nested structure packed back as it was).
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_v1 = tf.compat.v1


def _is_flat(outputs):
    """Whether `outputs` is None, one value, or a list / tuple of plain values (TF 1.15's xla.is_flat)."""
    if isinstance(outputs, (list, tuple)):
        return not any(isinstance(item, (list, tuple, dict)) or tf.nest.is_nested(item) for item in outputs)
    return not isinstance(outputs, dict) and not tf.nest.is_nested(outputs)


def _flat_outputs(outputs):
    """A flat result's tensors and trailing operations: None is nothing, a lone value a one-element list."""
    if outputs is None:
        outputs = ()
    elif not isinstance(outputs, (list, tuple)):
        outputs = (outputs,)
    values = [value if isinstance(value, tf.Operation) else tf.convert_to_tensor(value) for value in outputs]
    tensors = [value for value in values if not isinstance(value, tf.Operation)]
    operations = [value for value in values if isinstance(value, tf.Operation)]
    if values != tensors + operations:
        raise ValueError("xla.compile: the computation must return zero or more tensors followed by zero or more "
                         "operations (TF 1.15's rule)")
    return tensors, operations


def _nested_outputs(outputs):
    """A nested result's tensors; operations have no place in a structure (TF 1.15 refused them too)."""
    flat = tf.nest.flatten(outputs)
    if any(isinstance(value, tf.Operation) for value in flat):
        raise ValueError("xla.compile: an operation cannot be part of a nested result; return it in a flat list "
                         "after the tensors")
    return [tf.convert_to_tensor(value) for value in flat]


def compile(computation, inputs=None):  # noqa: A001  (TF 1.15's name)
    """Build computation(*inputs) as ordinary ops and return its result as TF 1.15's xla.compile did (see the
    module)."""
    inputs = [] if inputs is None else inputs
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"xla.compile: inputs must be a list or tuple, got {type(inputs).__name__}")
    flat_inputs = [tf.identity(tf.convert_to_tensor(value), name=f"input_{index}")
                   for index, value in enumerate(tf.nest.flatten(inputs))]
    scope = _v1.get_variable_scope()
    saved_use_resource = scope.use_resource
    scope.set_use_resource(True)
    try:
        outputs = computation(*tf.nest.pack_sequence_as(inputs, flat_inputs))
    finally:
        scope.set_use_resource(saved_use_resource)
    if not _is_flat(outputs):
        tensors = [tf.identity(tensor, name=f"output_{index}")
                   for index, tensor in enumerate(_nested_outputs(outputs))]
        return tf.nest.pack_sequence_as(outputs, tensors)
    tensors, operations = _flat_outputs(outputs)
    if not tensors:
        return tf.group(*operations, name="output_0")
    with tf.control_dependencies(operations):
        return [tf.identity(tensor, name=f"output_{index}") for index, tensor in enumerate(tensors)]


def estimator_model_fn(target_model_fn=None):
    """TF 1.15's decorator compiling an Estimator's model_fn with XLA: on the CPU path the model_fn itself, built
    as ordinary ops (see the module). Works as `@xla.estimator_model_fn()` and as `xla.estimator_model_fn(fn)`."""
    if target_model_fn is None:
        return lambda model_fn: model_fn
    return target_model_fn


__getattr__ = removed.module_getattr(__name__)
