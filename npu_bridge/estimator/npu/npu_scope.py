"""Scopes that tag the ops created inside them with attributes the NPU compiler reads.

The tags go on the NodeDefs through Graph._attr_scope, exactly as in the real adapter, so the precision pass
sees them in the GraphDef the session runs.
"""
import contextlib

import tensorflow.compat.v1 as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge import tf_private
from npu_bridge.estimator.npu.npu_config import NpuExecutePlacement


@contextlib.contextmanager
def _attr_scope(attrs):
    with tf_private.attr_scope(tf.get_default_graph(), attrs):
        yield


def keep_dtype_scope():
    """Ops created inside keep their original dtype under precision modes that would reduce them (_keep_dtype=1)."""
    return _attr_scope({"_keep_dtype": attr_value_pb2.AttrValue(i=1)})


def without_npu_compile_scope():
    """Ops created inside stay on the host in mixed-compile mode (_without_npu_compile=True): with
    mix_compile_mode on they run in TensorFlow in their own dtypes, outside the NPU's precision rules; without it
    the tag is ignored, as on the NPU."""
    return _attr_scope({"_without_npu_compile": attr_value_pb2.AttrValue(b=True)})


def npu_variable_scope(placement=NpuExecutePlacement.ALL):
    """Ops created inside carry _variable_placement=<placement> (host: variables kept in host memory); a CPU has
    one memory, so the tag changes nothing here but is there for the graph's readers, as on the NPU."""
    if not isinstance(placement, NpuExecutePlacement):
        raise ValueError(f"npu_variable_scope: placement must be an NpuExecutePlacement member, got {placement!r}")
    return _attr_scope({"_variable_placement": attr_value_pb2.AttrValue(s=placement.value.encode())})
