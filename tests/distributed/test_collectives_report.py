"""Collectives in the precision pass: HCCL IR types in the per-op report, dtypes as the graph gives them."""
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.options import options_from_parameter_map
from npu_bridge.core.precision import rewrite
from npu_bridge.hccl import hccl_ops


def mixed_float16():
    parameters = config_pb2.ConfigProto().graph_options.rewrite_options.custom_optimizers.add().parameter_map
    parameters["use_off_line"].b = True
    parameters["precision_mode_v2"].s = b"mixed_float16"
    return options_from_parameter_map(parameters)


def dtype_of(graph_def, name):
    return next(tf.as_dtype(n.attr["T"].type) for n in graph_def.node if n.name == name)


def test_collectives_keep_their_dtype_and_are_reported_with_hccl_ir_types(job_env):
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [4, 3], name="x")
        w = tf.constant([[1.0], [2.0], [3.0]])
        product = tf.matmul(x, w, name="product")                       # white: float16 under mixed_float16
        total = hccl_ops.allreduce(product, "sum")
        hccl_ops.allgather(tf.cast(x, tf.float16), 4)
        hccl_ops.broadcast([x], 0)
        tf.nn.relu(total, name="after")
    result = rewrite(graph.as_graph_def(), mixed_float16(), log=False)
    report = result.report
    allreduce = report.by_name(total.op.name)
    assert (allreduce.ir_type, allreduce.decision) == ("HcomAllReduce", "unchanged")
    assert "HCCL collective" in allreduce.reason
    assert report.by_name("HcomAllGather").ir_type == "HcomAllGather"
    assert report.by_name("HcomBroadcast").ir_type == "HcomBroadcast"
    graph_def = result.graph_def
    assert report.by_name("product").decision == "float16"
    assert dtype_of(graph_def, total.op.name) == tf.float32                  # the all-reduce stays float32 ...
    reader, = [n for n in graph_def.node if n.name == total.op.name]
    assert reader.input[0].startswith("product-") and reader.input[0].endswith("CastToFp32-NpuBridge")  # a Cast
    assert dtype_of(graph_def, "HcomAllGather") == tf.float16
