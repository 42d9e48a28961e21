"""Shared helpers for the precision pass tests: options as a script sets them, graphs run in real sessions."""
from functools import lru_cache

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.options import options_from_parameter_map
from npu_bridge.core.precision import rewrite

FP16 = tf.float16.as_datatype_enum
BF16 = tf.bfloat16.as_datatype_enum
FP32 = tf.float32.as_datatype_enum
ADDED = attr_value_pb2.AttrValue(s=b"cast")      # marker of a Cast the pass added


def npu_options(v2=None, v1=None, soc=None, **paths):
    """NpuOptions from a parameter_map filled the way a ported script fills it."""
    config = config_pb2.ConfigProto()
    custom = config.graph_options.rewrite_options.custom_optimizers.add()
    custom.name = "NpuOptimizer"
    custom.parameter_map["use_off_line"].b = True
    if v2:
        custom.parameter_map["precision_mode_v2"].s = v2.encode()
    if v1:
        custom.parameter_map["precision_mode"].s = v1.encode()
    if soc:
        custom.parameter_map["soc_config"].s = soc.encode()
    for key, value in paths.items():
        if isinstance(value, bool):
            custom.parameter_map[key].b = value
        else:
            custom.parameter_map[key].s = str(value).encode()
    return options_from_parameter_map(custom.parameter_map)


@lru_cache(maxsize=None)
def mode(v2=None, v1=None, soc=None):
    """Cached npu_options for a mode without files."""
    return npu_options(v2, v1, soc)


def build(fn):
    """GraphDef of the tf.compat.v1 graph `fn()` builds."""
    graph = tf.Graph()
    with graph.as_default():
        fn()
    return graph.as_graph_def()


def nodes(graph_def):
    return {n.name: n for n in graph_def.node}


def dtype_of(graph_def, name, attr="T"):
    node = nodes(graph_def)[name]
    value = node.attr[attr]
    return list(value.list.type) if value.HasField("list") else value.type


def added_casts(graph_def):
    return [n for n in graph_def.node if n.op == "Cast" and n.attr.get("_npu_bridge") == ADDED]


def data_inputs(graph_def, name):
    return [i for i in nodes(graph_def)[name].input if not i.startswith("^")]


def run(graph_def, fetches, feeds=None, init=None):
    """Import `graph_def` into a fresh graph and run `fetches` (tensor names) in a plain session."""
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as sess:
            if init:
                sess.run(init)
            return sess.run(fetches, feeds or {})


def fetch_user_tensor(result, name, feeds=None):
    """What the runtime returns for user tensor `name`: its internal location cast back to the user's dtype."""
    ref = result.tensor_map.get(name)
    value = run(result.graph_def, ref.name if ref else name, feeds)
    return np.asarray(value)


def assert_idempotent(result, options, lists=None):
    again = rewrite(result.graph_def, options, lists=lists)
    assert again.graph_def.SerializeToString(deterministic=True) == \
        result.graph_def.SerializeToString(deterministic=True)
    assert again.report.n_casts == 0
