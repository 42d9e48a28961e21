"""TF 1.15 attributes of TensorFlow's own modules that TensorFlow 2.x moved or dropped, put back under npu-run.

Ported scripts, and the TF 1.15 library code they carry (GNMT's variable_mgr from tf_cnn_benchmarks, seq2seq
helpers, copies of metrics_impl), call functions through the TF 1.15 module that held them:
`control_flow_ops.cond`, `array_ops.stack`, `nest.is_sequence`, `ops.register_tensor_conversion_function`, ...
TensorFlow 2.x still has every one of them, in another module (cond.py, array_ops_stack.py,
tensor_conversion_registry.py, ...) or under another name. Each module of MOVED gets a module `__getattr__`
(PEP 562) answering only the TF 1.15 names it lost, with the function TensorFlow 2.x has (its public export
wherever there is one), looked up when a script first asks. Names TF 1.15 had and TensorFlow 2.x has nothing
equivalent for (REMOVED) raise an AttributeError naming the script's line and the public replacement.

A name the module really has is never touched, and nothing changes until tf1compat.install() runs (npu-run);
tests/tf1compat/test_python_internals.py resolves every target on each TensorFlow version.
"""
import importlib

from npu_bridge.tf1compat.removed import user_line

# TF 1.15 module -> {name it had: "module:attribute" TensorFlow 2.x keeps it as}
MOVED = {
    "tensorflow.python.ops.control_flow_ops": {
        "cond": "tensorflow.compat.v1:cond",                 # TF 2.13 moved them to cond.py, while_loop.py,
        "while_loop": "tensorflow.compat.v1:while_loop",     # control_flow_assert.py and control_flow_case.py:
        "Assert": "tensorflow.compat.v1:Assert",             # the same v1 functions. tf-slim's tfexample_decoder
        "case": "tensorflow.compat.v1:case",                 # (slim.tfexample_decoder.Image) calls case
    },
    "tensorflow.python.ops.array_ops": {                     # array_ops_stack.py since TF 2.13
        "stack": "tensorflow:stack",
        "unstack": "tensorflow:unstack",
    },
    "tensorflow.python.util.nest": {"is_sequence": "tensorflow.nest:is_nested"},     # renamed, same predicate
    "tensorflow.python.pywrap_tensorflow": {
        "NewCheckpointReader": "tensorflow.compat.v1.train:NewCheckpointReader",     # py_checkpoint_reader.py
    },
    "tensorflow.python.ops.variable_scope": {"variable": "tensorflow.compat.v1:Variable"},   # VariableV1's call
    "tensorflow.python.framework.ops": {
        "register_tensor_conversion_function": "tensorflow:register_tensor_conversion_function",
    },
    "tensorflow.python.util.tf_export": {"estimator_export": "npu_bridge.tf1compat.tf_export:estimator_export"},
    "tensorflow.python.ops.gradients_impl": {        # gradients_util's, now eager.backprop_util's public helper
        "_AggregateIndexedSlicesGradients": "tensorflow.python.eager.backprop_util:AggregateIndexedSlicesGradients",
    },
}

_KERAS_MIXED_PRECISION = (
    "tf.keras.mixed_precision.experimental (Policy, set_policy, global_policy, LossScaleOptimizer(optimizer, "
    "loss_scale)) was TF 1.15's experimental Keras mixed precision; TensorFlow 2.x replaced it with a different "
    "API: tf.keras.mixed_precision.Policy, set_global_policy, global_policy and LossScaleOptimizer(optimizer, "
    "dynamic=True, initial_scale=...). On an Ascend NPU, set precision_mode in the session config instead "
    "(npu-run emulates it)")

# TF 1.15 module -> {name it had: why it is gone and what to use}
REMOVED = {
    f"{keras}.api._{version}.keras.mixed_precision": {"experimental": _KERAS_MIXED_PRECISION}
    for keras in ("tf_keras", "keras") for version in ("v1", "v2")
}


class RemovedAttributeError(AttributeError):
    """A TF 1.15 attribute TensorFlow 2.x has nothing equivalent for (an AttributeError, so a script's
    `hasattr` / `except AttributeError` fallback still takes effect)."""


def _resolve(target):
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def give_tf115_names(module):
    """Let `module` answer the TF 1.15 names of MOVED / REMOVED it lacks (an AFTER_IMPORT fix-up; idempotent)."""
    moved = MOVED.get(module.__name__, {})
    removed = REMOVED.get(module.__name__, {})
    own = module.__dict__.get("__getattr__")
    if own is not None and own.__module__ == __name__:
        return

    def __getattr__(name):
        if name in moved:
            value = _resolve(moved[name])
            setattr(module, name, value)        # found once: later lookups are plain attribute reads
            return value
        if name in removed:
            raise RemovedAttributeError(f"{user_line()}: {module.__name__}.{name} is not in TensorFlow 2.x: "
                                        f"{removed[name]}", name=name, obj=module)
        if own is not None:
            return own(name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}", name=name, obj=module)

    module.__getattr__ = __getattr__


# The AFTER_IMPORT entries (tf1compat/__init__.py): every module named above gets give_tf115_names once loaded.
FIXUPS = {name: give_tf115_names for name in (*MOVED, *REMOVED)}
