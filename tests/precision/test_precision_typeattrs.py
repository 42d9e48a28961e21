"""Per-port type attributes from the OpDef registry, and CPU kernel lookups."""
import pytest
import tensorflow as tf
from tensorflow.python.framework import function

from npu_bridge.core.graph import Graph
from npu_bridge.core.precision.typeattrs import (
    DT_BFLOAT16, DT_FLOAT, DT_HALF, MalformedNodeError, OpTable, Slot, UnknownOpError, has_cpu_kernel,
)
from precision_helpers import build


def _graph():
    x = tf.compat.v1.placeholder(tf.float32, [2, 2, 2, 3], name="x")
    tf.matmul(tf.reshape(x, [4, 6]), tf.ones([6, 2]), name="mm")
    tf.compat.v1.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]), is_training=True, name="bn")
    tf.add_n([x, x, x], name="addn")
    tf.identity_n([x, tf.constant(1)], name="idn")
    var = tf.compat.v1.Variable(tf.zeros([3]), name="var")
    tf.compat.v1.assign(var, tf.ones([3]), name="assign")
    tf.compat.v1.random_uniform([3], name="rnd")


def _signature(name, graph_def=None):
    graph_def = graph_def or build(_graph)
    graph = Graph(graph_def)
    return OpTable(graph_def).signature(graph[name])


def test_matmul_one_slot_covers_inputs_and_output():
    sig = _signature("mm")
    assert [p.slot for p in sig.inputs] == [Slot("T"), Slot("T")]
    assert [p.slot for p in sig.outputs] == [Slot("T")]
    assert sig.slots == {Slot("T"): DT_FLOAT}
    assert not sig.has_state and not sig.is_call


def test_fused_batch_norm_separates_t_and_u():
    sig = _signature("bn")
    assert [p.slot.attr for p in sig.inputs] == ["T", "U", "U", "U", "U"]
    assert [p.slot.attr for p in sig.outputs] == ["T", "U", "U", "U", "U", "U"]


def test_number_attr_repeats_one_slot_and_list_attr_gives_one_slot_per_element():
    addn = _signature("addn")
    assert [p.slot for p in addn.inputs] == [Slot("T")] * 3
    idn = _signature("idn")
    assert [p.slot for p in idn.inputs] == [Slot("T", 0), Slot("T", 1)]
    assert [p.dtype for p in idn.outputs] == [DT_FLOAT, tf.int32.as_datatype_enum]


def test_state_detected_from_refs_and_statefulness():
    assert _signature("var").has_state
    assert _signature("assign").has_state
    assert _signature("rnd/RandomUniform").has_state


def test_function_call_ports_are_fixed():
    @function.Defun(tf.float32)
    def double(v):
        return v * 2.0

    def fn():
        double(tf.compat.v1.placeholder(tf.float32, [2], name="x"), name="call")

    sig = _signature("call", build(fn))
    assert sig.is_call and sig.slots == {}
    assert [p.slot for p in sig.inputs + sig.outputs] == [None, None]


def test_unknown_op_and_wrong_input_count_are_errors():
    graph_def = build(_graph)
    node = graph_def.node.add(name="mystery", op="NoSuchOpAnywhere")
    with pytest.raises(UnknownOpError):
        OpTable(graph_def).signature(Graph(graph_def)["mystery"])
    graph_def.node.remove(node)
    mm = next(n for n in graph_def.node if n.name == "mm")
    mm.input.append("x")
    with pytest.raises(MalformedNodeError, match="takes 2 data inputs, the node has 3"):
        OpTable(graph_def).signature(Graph(graph_def)["mm"])


def test_missing_attribute_falls_back_to_opdef_default():
    graph_def = build(_graph)
    bn = next(n for n in graph_def.node if n.name == "bn")
    del bn.attr["U"]
    with pytest.raises(MalformedNodeError, match="'U'"):
        OpTable(graph_def).signature(Graph(graph_def)["bn"])
    addn = next(n for n in graph_def.node if n.name == "mm")
    del addn.attr["transpose_a"]
    assert OpTable(graph_def).signature(Graph(graph_def)["mm"]).slots == {Slot("T"): DT_FLOAT}


def test_cpu_kernel_lookup():
    assert has_cpu_kernel("Relu", (("T", DT_HALF),))
    assert has_cpu_kernel("IdentityN", (("T", (DT_HALF, DT_FLOAT)),))
    assert has_cpu_kernel("FusedBatchNormV3", (("T", DT_HALF), ("U", DT_FLOAT)))
    assert not has_cpu_kernel("FusedBatchNormV3", (("T", DT_HALF), ("U", DT_HALF)))
    assert not has_cpu_kernel("Erfinv", (("T", DT_HALF),))
    assert not has_cpu_kernel("Lgamma", (("T", DT_BFLOAT16),))
