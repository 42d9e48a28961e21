"""The pass is pure and fails safely: bad graphs raise PrecisionPassError and the caller's GraphDef is untouched."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.errors import PrecisionPassError
from npu_bridge.core.precision import rewrite
from precision_helpers import build, mode, npu_options


def _loop_graph():
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    w = tf.constant(np.eye(2, dtype=np.float32))
    _, out = tf.compat.v1.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, tf.matmul(h, w)),
                                     [tf.constant(0), x], name="loop")
    tf.identity(out, name="y")


def _assert_fails_untouched(graph_def, node, rule, match):
    before = graph_def.SerializeToString(deterministic=True)
    with pytest.raises(PrecisionPassError, match=match) as caught:
        rewrite(graph_def, mode("mixed_float16"))
    assert (caught.value.node, caught.value.rule) == (node, rule)
    assert graph_def.SerializeToString(deterministic=True) == before


def test_next_iteration_not_feeding_a_merge():
    graph_def = build(_loop_graph)
    graph_def.node.add(name="stray", op="Identity", input=["loop/NextIteration_1"]).attr["T"].type = \
        tf.float32.as_datatype_enum
    _assert_fails_untouched(graph_def, "loop/NextIteration_1", "graph structure",
                            "NextIteration feeds 'stray' \\(Identity\\); a v1 while loop back edge must feed a Merge")


def test_op_missing_from_the_registry():
    graph_def = build(_loop_graph)
    graph_def.node.add(name="mystery", op="NoSuchOpAnywhere", input=["x"])
    _assert_fails_untouched(graph_def, "mystery", "op registry", "'NoSuchOpAnywhere' is neither registered")


def test_input_naming_a_missing_node():
    graph_def = build(_loop_graph)
    graph_def.node.add(name="orphan", op="Identity", input=["nowhere:0"]).attr["T"].type = \
        tf.float32.as_datatype_enum
    _assert_fails_untouched(graph_def, "orphan", "graph structure", "input 'nowhere' names no node")


def test_two_nodes_with_one_name():
    graph_def = build(_loop_graph)
    graph_def.node.add(name="x", op="Relu", input=["y"]).attr["T"].type = tf.float32.as_datatype_enum
    _assert_fails_untouched(graph_def, "x", "graph structure", "two nodes have this name")


def test_cycle_that_is_not_a_loop():
    graph_def = build(_loop_graph)
    for name, source in (("a", "b"), ("b", "a")):
        graph_def.node.add(name=name, op="Identity", input=[source]).attr["T"].type = tf.float32.as_datatype_enum
    with pytest.raises(PrecisionPassError, match="cycle that is not a v1 while loop") as caught:
        rewrite(graph_def, mode("mixed_float16"))
    assert caught.value.node in ("a", "b")


def test_node_not_matching_its_op_definition():
    graph_def = build(_loop_graph)
    graph_def.node.add(name="bad_relu", op="Relu", input=["x", "x"]).attr["T"].type = tf.float32.as_datatype_enum
    _assert_fails_untouched(graph_def, "bad_relu", "op definition", "takes 1 data inputs, the node has 2")


def test_successful_rewrite_leaves_its_input_untouched():
    graph_def = build(_loop_graph)
    before = graph_def.SerializeToString(deterministic=True)
    result = rewrite(graph_def, mode("mixed_float16"))
    assert result.report.n_casts > 0
    assert graph_def.SerializeToString(deterministic=True) == before


def test_node_order_in_the_graphdef_does_not_matter():
    graph_def = build(_loop_graph)
    shuffled = type(graph_def)()
    shuffled.CopyFrom(graph_def)
    shuffled.ClearField("node")
    shuffled.node.extend(reversed(graph_def.node))
    ordered, reversed_ = rewrite(graph_def, mode("mixed_float16")), rewrite(shuffled, mode("mixed_float16"))
    assert {r.name: (r.decision, r.reason) for r in ordered.report.records} == \
        {r.name: (r.decision, r.reason) for r in reversed_.report.records}
    assert ordered.report.n_casts == reversed_.report.n_casts


def test_black_op_without_float32_kernel_is_the_real_engines_error(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text('{"black-list": {"to-add": ["MaxPool"]}}')

    def fn():
        tf.nn.max_pool2d(tf.compat.v1.placeholder(tf.float32, [1, 4, 4, 1], name="x"), 2, 2, "VALID", name="pool")

    graph_def = build(fn)
    before = graph_def.SerializeToString(deterministic=True)
    with pytest.raises(PrecisionPassError, match="Op MaxPool is in blacklist but doesn't support it's original dtype "
                                                 "float.*declares only float16") as caught:
        rewrite(graph_def, npu_options("mixed_float16", modify_mixlist=path))
    assert (caught.value.node, caught.value.rule) == ("pool", "black list")
    assert graph_def.SerializeToString(deterministic=True) == before
