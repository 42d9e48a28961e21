"""core.graph: the small Graph/Node/Tensor model the precision pass edits."""
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, graph_pb2

from npu_bridge.core.graph import Graph, Tensor, encode_attrs
from precision_helpers import build, run


def _split_graph():
    x = tf.compat.v1.placeholder(tf.float32, [4], name="x")
    a, b = tf.split(x, 2, name="split")
    with tf.control_dependencies([x]):
        tf.add(a, b, name="sum")
    tf.identity(b, name="copy")


def test_input_spellings():
    graph_def = graph_pb2.GraphDef()
    graph_def.node.add(name="n", op="NoOp", input=["x", "split:1", "loop/next:12", "^init"])
    node = Graph(graph_def)["n"]
    assert node.inputs == [Tensor("x", 0), Tensor("split", 1), Tensor("loop/next", 12)]
    assert node.control_inputs == ["init"]
    assert Tensor("split", 1).name == "split:1"
    assert Tensor("x", 0).as_input() == "x" and Tensor("x", 3).as_input() == "x:3"


def test_nodes_inputs_and_consumers():
    graph = Graph(build(_split_graph))
    assert graph.order[0].name == "x" and len(graph) == 5 and "copy" in graph
    total = graph["sum"]
    assert total.inputs == [Tensor("split", 0), Tensor("split", 1)]
    assert total.control_inputs == ["x"]
    readers = {(node.name, index) for node, index in graph.consumers(Tensor("split", 1))}
    assert readers == {("sum", 1), ("copy", 0)}
    assert graph.consumers(Tensor("sum", 0)) == ()


def test_add_node_and_rewire_update_nodedef_and_consumers():
    graph_def = build(_split_graph)
    graph = Graph(graph_def)
    graph.consumers(Tensor("split", 1))
    name = graph.unique_name("split")
    assert name == "split_1"
    neg = graph.add_node(name, "Neg", [Tensor("split", 1)], {"T": attr_value_pb2.AttrValue(type=tf.float32.as_datatype_enum)},
                         device="/device:CPU:0")
    graph.set_input(graph["copy"], 0, Tensor(neg.name, 0))
    assert list(graph["copy"].node_def.input) == ["split_1"]
    assert {n.name for n, _ in graph.consumers(Tensor("split", 1))} == {"sum", "split_1"}
    assert [n.name for n, _ in graph.consumers(Tensor("split_1", 0))] == ["copy"]
    assert graph_def.node[-1].name == "split_1" and graph_def.node[-1].device == "/device:CPU:0"
    value = run(graph_def, "copy:0", {"x:0": np.array([1, 2, 3, 4], np.float32)})
    np.testing.assert_array_equal(value, [-3, -4])


def test_control_inputs_survive_rewiring():
    graph_def = build(_split_graph)
    graph = Graph(graph_def)
    graph.set_input(graph["sum"], 1, Tensor("split", 0))
    assert list(graph["sum"].node_def.input) == ["split", "split", "^x"]


def test_control_inputs_are_found_past_many_data_inputs_and_read_on_demand():
    graph_def = graph_pb2.GraphDef()
    data = [f"d{i}" for i in range(11)]
    controls = [f"^c{i}" for i in range(1000)]
    graph_def.node.add(name="group", op="NoOp", input=data + controls)
    graph_def.node.add(name="only_controls", op="NoOp", input=controls[:3])
    graph_def.node.add(name="only_data", op="AddN", input=data[:3])
    graph = Graph(graph_def)
    group = graph["group"]
    assert [t.node for t in group.inputs] == data
    assert group.has_control_inputs and group.control_inputs == [c[1:] for c in controls]
    assert graph["only_controls"].inputs == [] and graph["only_controls"].control_inputs == ["c0", "c1", "c2"]
    assert not graph["only_data"].has_control_inputs and graph["only_data"].control_inputs == []


def test_reserved_names_are_skipped_until_add_nodes_appends_them():
    graph_def = build(_split_graph)
    graph = Graph(graph_def)
    first = graph.reserve_name("copy")
    second = graph.reserve_name("copy")
    assert (first, second) == ("copy_1", "copy_2")
    attrs = encode_attrs({"T": attr_value_pb2.AttrValue(type=tf.float32.as_datatype_enum)})
    added = graph.add_nodes([(first, "Neg", [Tensor("split", 0)], "", attrs),
                             (second, "Neg", [Tensor(first, 0)], "/device:CPU:0", attrs)])
    assert [n.name for n in added] == ["copy_1", "copy_2"] and graph["copy_2"].inputs == [Tensor("copy_1", 0)]
    assert graph.unique_name("copy") == "copy_3"
    assert graph_def.node[-1].device == "/device:CPU:0" and graph_def.node[-1].attr["T"].type == tf.float32
    value = run(graph_def, "copy_2:0", {"x:0": np.array([1, 2, 3, 4], np.float32)})
    np.testing.assert_array_equal(value, [1, 2])


def test_added_nodes_with_long_names_and_inputs_round_trip():
    # Lengths of 128 bytes and more take a multi-byte varint in the wire format add_nodes writes.
    graph_def = graph_pb2.GraphDef()
    long_source = "scope/" * 40 + "x"
    graph_def.node.add(name=long_source, op="Placeholder").attr["dtype"].type = tf.float32.as_datatype_enum
    graph = Graph(graph_def)
    name = "deep/" * 60 + "neg"
    attrs = encode_attrs({"T": attr_value_pb2.AttrValue(type=tf.float32.as_datatype_enum)})
    graph.add_nodes([(name, "Neg", [Tensor(long_source, 0)], "/job:localhost/replica:0/task:0/device:CPU:0", attrs)])
    added = graph_def.node[-1]
    assert (added.name, added.op, list(added.input)) == (name, "Neg", [long_source])
    assert added.device == "/job:localhost/replica:0/task:0/device:CPU:0" and added.attr["T"].type == tf.float32
    value = run(graph_def, name + ":0", {long_source + ":0": np.array([1.5], np.float32)})
    np.testing.assert_array_equal(value, [-1.5])
