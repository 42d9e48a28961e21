"""Property test over small random graphs: the rewrite always imports and runs, adds only needed Casts, and is
idempotent."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_bridge.core.precision import casts, rewrite
from precision_helpers import mode, run

MODES = [("mixed_float16", None, None), ("fp16", None, None), (None, "allow_fp32_to_fp16", None),
         ("cube_fp16in_fp32out", None, None), ("origin", None, None), ("mixed_bfloat16", None, "Ascend910B3")]
OPS = ("matmul", "add", "relu", "sum", "softmax", "log", "cast", "mean", "half_island", "add_n", "identity_n",
       "erfinv", "maxpool")
SIZE = 3


def _apply(op, a, b, index):
    name = f"n{index}"
    if op == "matmul":
        return tf.matmul(a, b, name=name)
    if op == "add":
        return tf.add(a, b, name=name)
    if op == "relu":
        return tf.nn.relu(a, name=name)
    if op == "sum":
        return tf.add(tf.reduce_sum(a, axis=1, keepdims=True), b, name=name)
    if op == "softmax":
        return tf.nn.softmax(a, name=name)
    if op == "log":
        return tf.math.log(tf.abs(a) + 1.0, name=name)
    if op == "cast":
        return tf.cast(tf.cast(a, tf.float16), tf.float32, name=name)
    if op == "add_n":
        return tf.add_n([a, b, a], name=name)
    if op == "identity_n":
        first, second = tf.identity_n([a, b], name=name)
        return tf.nn.relu(first) + second
    if op == "erfinv":
        return tf.math.erfinv(tf.tanh(a), name=name)
    if op == "maxpool":       # computes in float32 between casts; exact on rounded inputs (rules.EXACT_ON_ROUNDED)
        pooled = tf.nn.max_pool2d(tf.reshape(a, [1, SIZE, SIZE, 1]), 2, 1, "SAME")
        return tf.reshape(pooled, [SIZE, SIZE], name=name)
    if op == "mean":
        return tf.add(tf.reduce_mean(a, axis=0, keepdims=True), b, name=name)
    return tf.cast(tf.nn.relu(tf.cast(a, tf.float16)) * tf.cast(b, tf.float16), tf.float32, name=name)


def _added(op):
    """A Cast the pass added (the user's own Casts it rewired carry "retyped")."""
    attrs = op.node_def.attr
    return "_npu_bridge" in attrs and attrs["_npu_bridge"].s == b"cast"


@st.composite
def graphs(draw):
    steps = draw(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)),
                          min_size=1, max_size=8))
    graph = tf.Graph()
    with graph.as_default():
        tensors = [tf.compat.v1.placeholder(tf.float32, [SIZE, SIZE], name="x"),
                   tf.constant(np.linspace(-1, 1, SIZE * SIZE, dtype=np.float32).reshape(SIZE, SIZE), name="w")]
        for index, (op, i, j) in enumerate(steps):
            tensors.append(_apply(op, tensors[i % len(tensors)], tensors[j % len(tensors)], index))
    fetches = [t.name for t in tensors[2:]]
    return graph.as_graph_def(), fetches, draw(st.sampled_from(MODES))


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graphs(case):
    graph_def, fetches, (v2, v1, soc) = case
    options = mode(v2, v1, soc)
    result = rewrite(graph_def, options)

    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(result.graph_def, name="")
    targets = {ref.name.split(":")[0] for ref in result.tensor_map.values()}
    added = [op for op in graph.get_operations() if op.type == "Cast" and _added(op)]
    assert len(added) == result.report.n_casts
    # One Cast per tensor and dtype: an added Cast never repeats another Cast (added or the user's own).
    every = [(op.inputs[0].name, op.outputs[0].dtype, op.name) for op in graph.get_operations()
             if op.type == "Cast" and not op.control_inputs and not op.get_attr("Truncate")]
    for cast in added:
        twins = [name for tensor, dtype, name in every
                 if (tensor, dtype) == (cast.inputs[0].name, cast.outputs[0].dtype) and name != cast.name]
        assert not twins, (cast.name, twins)
    for cast in added:
        source, target = cast.inputs[0].dtype.base_dtype, cast.outputs[0].dtype
        assert source != target, cast.name
        assert cast.outputs[0].consumers() or cast.name in targets, cast.name
    # Never a redundant pair: narrowing the output of a widening Cast back to its source dtype reads the
    # source instead (float32 -> float16 -> float32 is a rounding, not a redundancy, and is allowed). This holds
    # for the user's own Casts too when the pass put the widening Cast in front of them.
    for cast in graph.get_operations():
        producer = cast.inputs[0].op if cast.type == "Cast" else None
        if producer is None or producer.type != "Cast" or cast.outputs[0].dtype not in (tf.float16, tf.bfloat16):
            continue
        if cast in added or _added(producer):
            assert producer.inputs[0].dtype != cast.outputs[0].dtype, cast.name

    values = _fetch(result, fetches)
    for name, value in zip(fetches, values):
        if name in result.tensor_map:
            assert value.dtype == np.dtype(result.tensor_map[name].dtype)
    # Reading exact ops' raw float32 outputs changes no bit against rounding at every boundary.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(casts, "EXACT_ON_ROUNDED", frozenset())
        everywhere = rewrite(graph_def, options)
    for name, value, want in zip(fetches, values, _fetch(everywhere, fetches)):
        assert value.tobytes() == want.tobytes(), name

    again = rewrite(result.graph_def, options)
    assert again.graph_def.SerializeToString(deterministic=True) == \
        result.graph_def.SerializeToString(deterministic=True)


def _fetch(result, fetches):
    internal = [result.tensor_map[name].name if name in result.tensor_map else name for name in fetches]
    return run(result.graph_def, internal, {"x:0": np.full((SIZE, SIZE), 0.5, np.float32)})
