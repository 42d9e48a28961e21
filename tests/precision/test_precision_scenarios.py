"""Scenarios modelled on those of TensorFlow's own AutoMixedPrecision tests (grappler's
auto_mixed_precision_test.cc and .py), adapted to the Ascend rules."""
import json
import re

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import function
from tensorflow.python.ops import control_flow_util, list_ops

from npu_bridge.core.errors import NpuConfigWarning, PrecisionPassError
from npu_bridge.core.precision import rewrite
from npu_bridge.estimator.npu.npu_scope import keep_dtype_scope
from precision_helpers import (
    FP16, FP32, added_casts, assert_idempotent, build, data_inputs, dtype_of, fetch_user_tensor, mode, nodes,
    npu_options, run,
)

RNG = np.random.default_rng(7)


def _const(shape, name):
    return tf.constant(RNG.uniform(-1, 1, shape).astype(np.float32), name=name)


def _x(shape=(4, 8), name="x"):
    return tf.compat.v1.placeholder(tf.float32, list(shape), name=name)


def _feed(shape=(4, 8)):
    return {"x:0": RNG.uniform(-1, 1, shape).astype(np.float32)}


def test_chain_white_gray_black():
    def fn():
        mm = tf.matmul(_x(), _const([8, 8], "w"), name="mm")
        relu = tf.nn.relu(tf.nn.bias_add(mm, _const([8], "b"), name="bias"), name="relu")
        tf.math.log(relu + 1.0, name="log")

    options = mode("mixed_float16")
    result = rewrite(build(fn), options)
    decisions = {r.name: r.decision for r in result.report.records}
    assert decisions["mm"] == decisions["bias"] == decisions["relu"] == decisions["add"] == "float16"
    assert decisions["log"] == "float32"
    assert data_inputs(result.graph_def, "log") == ["add-0-CastToFp32-NpuBridge"]
    assert_idempotent(result, options)
    value = fetch_user_tensor(result, "log:0", _feed())
    assert value.dtype == np.float32 and np.all(np.isfinite(value))


def test_fan_out_shares_one_cast_per_producer_output_and_dtype():
    def fn():
        mm = tf.matmul(_x(), _const([8, 8], "w"), name="mm")
        tf.math.log(tf.abs(mm, name="abs_fp16") + 1.0, name="log_via_gray")
        tf.math.log(mm, name="log")
        tf.math.exp(mm, name="exp_black")
        tf.matmul(mm, _const([8, 2], "w2"), name="mm2")

    result = rewrite(build(fn), mode("mixed_float16"))
    to_fp32 = "mm-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"
    assert data_inputs(result.graph_def, "log") == [to_fp32]
    assert data_inputs(result.graph_def, "mm2")[0] == to_fp32
    assert data_inputs(result.graph_def, "abs_fp16") == ["mm-0-CastToFp16-NpuBridge"]
    from_mm = [c.name for c in added_casts(result.graph_def) if c.input[0].startswith("mm-0-")]
    assert sorted(from_mm) == [to_fp32]
    assert all(c.device == nodes(result.graph_def)[c.input[0]].device for c in added_casts(result.graph_def))


def test_batch_norm_reduces_t_and_keeps_u_float32():
    def fn():
        x = tf.compat.v1.placeholder(tf.float32, [2, 4, 4, 3], name="x")
        conv = tf.nn.conv2d(x, _const([3, 3, 3, 4], "k"), [1, 1, 1, 1], "SAME", name="conv")
        tf.compat.v1.nn.fused_batch_norm(conv, tf.ones([4]), tf.zeros([4]), is_training=True, name="bn")

    options = mode("mixed_float16")
    graph_def = build(fn)
    result = rewrite(graph_def, options)
    assert dtype_of(result.graph_def, "bn") == FP16
    assert dtype_of(result.graph_def, "bn", "U") == FP32
    record = result.report.by_name("bn")
    assert record.decision == "float16" and "U: attribute U" in record.reason
    assert data_inputs(result.graph_def, "bn")[1:] == data_inputs(graph_def, "bn")[1:]
    feeds = {"x:0": RNG.uniform(-1, 1, (2, 4, 4, 3)).astype(np.float32)}
    got = fetch_user_tensor(result, "bn:0", feeds)
    want = run(graph_def, "bn:0", feeds)
    # Normalised outputs are O(1); float16 rounds conv output, normalisation and the result: a few ulps of 2^-11.
    np.testing.assert_allclose(got.astype(np.float32), want, atol=8e-3)
    np.testing.assert_array_equal(fetch_user_tensor(result, "bn:1", feeds).dtype, np.float32)


def test_identity_n_per_element_and_add_n_repeated_attribute():
    def fn():
        mm = tf.matmul(_x(), _const([8, 8], "w"), name="mm")
        a, b, n = tf.identity_n([mm, _x(name="y"), tf.constant(3)], name="idn")
        tf.add_n([a, mm, a], name="addn")
        tf.add_n([a, b], name="addn_mixed")
        tf.math.log(tf.abs(b) + 1.0, name="log")

    options = mode("mixed_float16")
    result = rewrite(build(fn), options)
    # Element 0 follows the matmul; element 1 reads a placeholder (neutral) so it keeps float32; element 2 is int.
    assert dtype_of(result.graph_def, "idn") == [FP16, FP32, tf.int32.as_datatype_enum]
    assert dtype_of(result.graph_def, "addn") == FP16
    assert data_inputs(result.graph_def, "addn") == ["idn", "mm-0-CastToFp16-NpuBridge", "idn"]
    # One input is float16, the other comes from a float32 decision: the repeated attribute stays float32.
    assert dtype_of(result.graph_def, "addn_mixed") == FP32
    assert data_inputs(result.graph_def, "addn_mixed") == ["idn-0-CastToFp32-NpuBridge", "idn:1"]
    assert_idempotent(result, options)
    feeds = {**_feed(), "y:0": np.ones((4, 8), np.float32)}
    assert fetch_user_tensor(result, "addn:0", feeds).dtype == np.float16


def _loop(body_tail=None):
    def fn():
        x = _x((2, 4))
        start = tf.matmul(x, _const([4, 4], "w0"), name="start")

        def body(i, h):
            out = tf.math.tanh(tf.matmul(h, _const([4, 4], "w") * 0.5, name="body_mm"), name="body_tanh")
            return i + 1, body_tail(out) if body_tail else out

        _, out = tf.compat.v1.while_loop(lambda i, h: i < 3, body, [tf.constant(0), start], name="loop")
        tf.identity(out, name="y")
    return fn


def test_while_loop_with_910_lists_keeps_loop_variables_float32():
    options = mode("mixed_float16")
    graph_def = build(_loop())
    result = rewrite(graph_def, options)
    assert result.report.by_name("loop/Enter_1").list == "black"
    assert dtype_of(result.graph_def, "loop/Merge_1") == FP32
    assert result.report.by_name("loop/body_mm").decision == "float16"
    assert dtype_of(result.graph_def, "loop/body_tanh") == FP16
    assert_idempotent(result, options)
    feeds = {"x:0": RNG.uniform(-1, 1, (2, 4)).astype(np.float32)}
    np.testing.assert_allclose(fetch_user_tensor(result, "y:0", feeds), run(graph_def, "y:0", feeds),
                               rtol=1e-2, atol=1e-3)


def test_while_loop_carries_float16_when_the_mixlist_frees_enter_and_next_iteration(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"black-list": {"to-remove": ["Enter", "NextIteration"]}}))
    options = npu_options("mixed_float16", modify_mixlist=path)
    result = rewrite(build(_loop()), options)
    for name in ("loop/Enter_1", "loop/Merge_1", "loop/Switch_1", "loop/NextIteration_1", "loop/Exit_1"):
        assert dtype_of(result.graph_def, name) == FP16, name
    assert_idempotent(result, options)
    run(result.graph_def, "y:0", {"x:0": np.ones((2, 4), np.float32)})


def test_loop_back_edge_mismatch_pins_merge_and_next_iteration_to_float32(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"black-list": {"to-remove": ["Enter", "NextIteration"]}}))
    options = npu_options("mixed_float16", modify_mixlist=path)
    # Log is black: the value fed back is float32 while the Merge would otherwise follow the float16 Enter.
    result = rewrite(build(_loop(lambda out: tf.math.log(out + 1.0, name="body_log"))), options)
    merge = result.report.by_name("loop/Merge_1")
    assert merge.decision == "float32" and "loop back edge" in merge.reason
    assert dtype_of(result.graph_def, "loop/Merge_1") == FP32
    assert dtype_of(result.graph_def, "loop/NextIteration_1") == FP32
    assert_idempotent(result, options)
    run(result.graph_def, "y:0", {"x:0": np.ones((2, 4), np.float32)})


def test_fetched_reduced_tensors_are_mapped_to_their_reduced_value():
    def fn():
        mm = tf.matmul(_x(), _const([8, 8], "w"), name="mm")
        tf.nn.relu(mm, name="relu")
        tf.math.log(tf.abs(mm) + 1.0, name="log")

    graph_def = build(fn)
    result = rewrite(graph_def, mode("mixed_float16"))
    assert {k: (v.name, v.dtype) for k, v in result.tensor_map.items()} == {
        "mm:0": ("mm-0-CastToFp16-NpuBridge:0", "float16"),
        # Relu computes in float32 between casts (slow float16 CPU kernel): its value is the rounding Cast's.
        "relu:0": ("relu-0-CastToFp16-NpuBridge:0", "float16"),
        "Abs:0": ("Abs:0", "float16"),
        "add:0": ("add:0", "float16"),
    }
    feeds = _feed()
    mm32 = run(graph_def, "mm:0", feeds)
    mm16 = fetch_user_tensor(result, "mm:0", feeds)
    assert mm16.dtype == np.float16
    np.testing.assert_allclose(mm16.astype(np.float32), mm32, rtol=2 ** -9, atol=1e-3)


def test_existing_user_casts_are_reused():
    def fn():
        x = _x()
        half = tf.cast(x, tf.float16, name="user_cast")
        tf.nn.relu(half, name="half_relu")
        tf.matmul(x, _const([8, 8], "w"), name="mm")

    result = rewrite(build(fn), mode("mixed_float16"))
    assert data_inputs(result.graph_def, "mm")[0] == "user_cast-0-CastToFp32-NpuBridge"
    assert "x-0-CastToFp16-NpuBridge" not in nodes(result.graph_def)
    assert result.report.by_name("user_cast").reason.startswith("explicit Cast")


def _training_graph():
    x = _x((8, 4))
    labels = tf.compat.v1.placeholder(tf.int32, [8], name="labels")
    init = tf.compat.v1.glorot_uniform_initializer(seed=3)
    w = tf.compat.v1.get_variable("w", [4, 8], initializer=init)
    v = tf.compat.v1.get_variable("v", [8, 3], initializer=init, use_resource=True)
    noise = tf.compat.v1.random_uniform([8, 8], seed=1, name="noise")
    hidden = tf.nn.relu(tf.matmul(x, w)) * (0.9 + 0.1 * noise)
    logits = tf.matmul(hidden, v, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                          name="loss")
    step = tf.compat.v1.train.get_or_create_global_step()
    tf.compat.v1.train.AdamOptimizer(0.05).minimize(loss, global_step=step, name="train")
    tf.compat.v1.global_variables_initializer()


def test_state_is_never_retyped_and_training_runs():
    options = mode("mixed_float16")
    graph_def = build(_training_graph)
    result = rewrite(graph_def, options)
    before, after = nodes(graph_def), nodes(result.graph_def)
    state_ops = ("VariableV2", "VarHandleOp", "ReadVariableOp", "Assign", "AssignVariableOp", "ApplyAdam",
                 "ResourceApplyAdam", "RandomUniform", "AssignAdd")
    stateful = [name for name, node in before.items() if node.op in state_ops]
    assert len(stateful) >= 10
    for name in stateful:
        assert after[name].attr == before[name].attr, name
        record = result.report.by_name(name)
        assert record.list == "-" and record.decision == "unchanged"
    assert result.report.by_name("logits").decision == "float16"
    assert_idempotent(result, options)
    feeds = {"x:0": RNG.uniform(-1, 1, (8, 4)).astype(np.float32), "labels:0": np.arange(8) % 3}
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(result.graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run("init")
            losses = [sess.run(["loss:0", "train"], feeds)[0] for _ in range(6)]
            assert sess.run("global_step:0") == 6
    assert losses[-1] < losses[0]


def _tensor_list_graph():
    """A reduced MatMul output stored in tensor lists, read back by item and as a stack."""
    x = _x()
    product = tf.matmul(x, _const((8, 8), "w"), name="mm")
    handle = list_ops.tensor_list_reserve(element_shape=[4, 8], num_elements=2, element_dtype=tf.float32)
    handle = list_ops.tensor_list_set_item(handle, 0, product, name="set_item")
    handle = list_ops.tensor_list_set_item(handle, 1, x, name="set_item_x")
    item = list_ops.tensor_list_get_item(handle, 0, element_dtype=tf.float32, element_shape=[4, 8], name="get_item")
    tf.identity(item + 1.0, name="out")
    tf.identity(list_ops.tensor_list_stack(handle, element_dtype=tf.float32), name="stacked")
    rows = list_ops.tensor_list_from_tensor(product, element_shape=[8], name="from_tensor")
    tf.identity(list_ops.tensor_list_stack(rows, element_dtype=tf.float32, name="rows_stack"), name="rows")


@pytest.mark.parametrize("v2,v1,soc", [("mixed_float16", None, None), ("fp16", None, None),
                                       ("mixed_bfloat16", None, "Ascend910B3"), (None, "allow_fp32_to_bf16", "Ascend910B3")])
def test_tensor_list_ops_keep_the_element_dtype_of_their_list(v2, v1, soc):
    """Retyping one list op alone leaves its list holding one dtype and its readers expecting another."""
    options = mode(v2, v1, soc)
    graph_def = build(_tensor_list_graph)
    result = rewrite(graph_def, options)
    before, after = nodes(graph_def), nodes(result.graph_def)
    for name in ("set_item", "set_item_x", "get_item", "from_tensor", "rows_stack"):
        assert after[name].attr["element_dtype"] == before[name].attr["element_dtype"], name
        record = result.report.by_name(name)
        assert record.decision == "unchanged" and "variant handle" in record.reason, name
    assert result.report.by_name("mm").decision != "float32"
    assert_idempotent(result, options)
    feeds = _feed()
    want = run(graph_def, ["out:0", "stacked:0", "rows:0"], feeds)
    got = run(result.graph_def, ["out:0", "stacked:0", "rows:0"], feeds)
    for expected, actual in zip(want, got):
        np.testing.assert_allclose(actual, expected, rtol=0.02, atol=0.05)   # bf16: 8 significant bits


def test_map_fn_and_tensor_array_under_control_flow_v2_run_after_the_rewrite():
    """tf.map_fn and TensorArray build TensorList ops around While functions when control flow v2 is on (TF 2.x's
    default, even in graph mode); the gradients read the lists back outside the loop bodies."""
    def fn():
        x = _x((5, 8))
        hidden = tf.matmul(x, _const((8, 8), "w"), name="mm")
        mapped = tf.map_fn(tf.tanh, hidden)
        array = tf.TensorArray(tf.float32, size=5).unstack(hidden)
        total = tf.reduce_sum(mapped) + tf.reduce_sum(array.stack())
        tf.identity(total, name="total")
        tf.identity(tf.gradients(total, x)[0], name="grad")

    enabled = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf.compat.v1.enable_control_flow_v2()
    try:
        graph_def = build(fn)
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = enabled
    assert any(n.op.startswith("TensorList") for n in graph_def.node)
    feeds = _feed((5, 8))
    want = run(graph_def, ["total:0", "grad:0"], feeds)
    for v2 in ("mixed_float16", "fp16"):
        got = run(rewrite(graph_def, mode(v2)).graph_def, ["total:0", "grad:0"], feeds)
        np.testing.assert_allclose(got[0], want[0], rtol=0.01)
        np.testing.assert_allclose(got[1], want[1], rtol=0.01, atol=0.01)


def test_keep_dtype_scope_keeps_original_dtype():
    def fn():
        with keep_dtype_scope():
            tf.matmul(_x(), _const([8, 8], "w"), name="kept")

    result = rewrite(build(fn), mode("mixed_float16"))
    assert result.report.by_name("kept").decision == "float32" and not added_casts(result.graph_def)


def test_customize_dtypes_by_type_and_by_name(tmp_path):
    path = tmp_path / "dtypes.cfg"
    path.write_text("OpType::MatMulV2:InputDtype:float16,float16,float32,OutputDtype:float32\n"
                    "mm_named::InputDtype:float32,float32,OutputDtype:float32\n"
                    "square::InputDtype:float16,OutputDtype:float16\n")

    def fn():
        mm = tf.matmul(_x(), _const([8, 8], "w"), name="mm")
        tf.matmul(mm, _const([8, 8], "w2"), name="mm_named")
        tf.math.square(_x(name="y"), name="square")

    options = npu_options(v1="allow_fp32_to_fp16", customize_dtypes=path)
    result = rewrite(build(fn), options)
    mm = result.report.by_name("mm")
    assert mm.decision == "float16" and mm.emulated and "customize_dtypes line 1 (by type)" in mm.reason
    assert data_inputs(result.graph_def, "mm") == ["x-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge",
                                                   "w-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"]
    assert "mm:0" not in result.tensor_map          # float32 output, as the rule asks
    named = result.report.by_name("mm_named")
    assert named.decision == "float32" and "line 2 (by name)" in named.reason
    assert data_inputs(result.graph_def, "mm_named") == ["mm", "w2"]
    assert dtype_of(result.graph_def, "square") == FP16
    assert_idempotent(result, options)

    origin = rewrite(build(fn), npu_options("origin", customize_dtypes=path))
    assert origin.report.n_casts == 0


def test_nodes_computed_from_constants_are_folded_sources():
    """The graph engine constant-folds before the Fusion Engine decides dtypes (GE Prepare): a zeros Fill of a
    static shape reaches the lists as a Const, neutral for gray ops. So the Select of a leaky-relu gradient follows
    the float16 gradient it selects from, not a float32 Fill (DCGAN's discriminator)."""
    def fn():
        grad = tf.matmul(_x(), _const([8, 8], "w"), name="grad")                     # white: float16
        zeros = tf.fill([4, 8], 0.0, name="zeros")                                     # Fill(Const, Const)
        tf.compat.v1.where_v2(tf.compat.v1.placeholder(tf.bool, [4, 8], name="cond"), grad, zeros, name="select")
        tf.add(tf.shape(_x(name="y"))[0], 1, name="int_arithmetic")

    result = rewrite(build(fn), mode("mixed_float16"))
    zeros = result.report.by_name("zeros")
    assert zeros.decision == "unchanged" and "constant" in zeros.reason
    select = result.report.by_name("select")
    assert select.decision == "float16" and "follows its float16 producer 'grad'" in select.reason
    assert_idempotent(result, mode("mixed_float16"))


def test_customize_dtypes_wins_over_keep_dtype(tmp_path):
    """The engine filters kernel dtypes by customize_dtypes before any precision rule: a keep_dtype_scope op that
    a line names takes the line's dtypes (the ATC docs say the same of --customize_dtypes and --keep_dtype)."""
    path = tmp_path / "dtypes.cfg"
    path.write_text("OpType::MatMulV2:InputDtype:float16,float16,float32,OutputDtype:float32\n")

    def fn():
        with keep_dtype_scope():
            tf.matmul(_x(), _const([8, 8], "w"), name="kept")

    record = rewrite(build(fn), npu_options(v1="allow_mix_precision", customize_dtypes=path)).report.by_name("kept")
    assert record.decision == "float16" and "customize_dtypes line 1 (by type)" in record.reason


@pytest.mark.parametrize("line, asked", [("exp::InputDtype:bfloat16,OutputDtype:bfloat16", "bfloat16"),
                                         ("OpType::Exp:InputDtype:int8,OutputDtype:int8", "int8")])
def test_a_customize_dtype_the_kernel_lacks_fails_like_compilation_on_the_npu(tmp_path, line, asked):
    path = tmp_path / "dtypes.cfg"
    path.write_text(line + "\n")
    graph_def = build(lambda: tf.exp(_x(), name="exp"))
    with pytest.raises(PrecisionPassError, match=re.escape(
            f"After filtering dtypes by custom dtypes, the supported dtypes for op [exp] are empty: customize_dtypes "
            f"line 1 asks for {asked}, but Exp on ascend910 takes float16, float32")) as caught:
        rewrite(graph_def, npu_options(v1="allow_mix_precision", customize_dtypes=path))
    assert caught.value.node == "exp"


def test_without_npu_compile_ops_stay_on_the_host_in_mixed_compile_mode():
    """The adapter leaves ops tagged by without_npu_compile_scope out of the NPU graph when mix_compile_mode is on
    (they run in TensorFlow, in float32); their outputs reach the NPU graph as inputs. Without the mode the tag
    is ignored."""
    from npu_bridge.estimator.npu.npu_scope import without_npu_compile_scope

    def fn():
        with without_npu_compile_scope():
            host = tf.multiply(_x(), 70000.0, name="host")
        tf.add(host, 1.0, name="npu")

    mixed = rewrite(build(fn), npu_options(v1="force_fp16", mix_compile_mode=True))
    assert mixed.report.by_name("host").decision == "unchanged"
    assert "runs in TensorFlow on the host" in mixed.report.by_name("host").reason
    assert mixed.report.by_name("npu").decision == "float16"
    plain = rewrite(build(fn), npu_options(v1="force_fp16"))
    assert plain.report.by_name("host").decision == "float16"


def test_customize_dtypes_tensorflow_op_names_pin_nothing_and_warn(tmp_path):
    """On hardware TF MatMul runs as MatMulV2, so a line for OpType::MatMul pins nothing there, nor here."""
    path = tmp_path / "dtypes.cfg"
    path.write_text("OpType::MatMul:InputDtype:float16,float16,OutputDtype:float16\n"
                    "OpType::MatMu1V2:InputDtype:float16,float16,OutputDtype:float16\n")

    def fn():
        tf.matmul(_x(), _const([8, 8], "w"), name="mm")

    with pytest.warns(NpuConfigWarning) as caught:
        result = rewrite(build(fn), npu_options(v1="force_fp32", customize_dtypes=path))
    messages = [str(w.message) for w in caught]
    assert any("line 1: 'MatMul' is a TensorFlow op type" in m and "MatMulV2" in m for m in messages)
    assert any("line 2: op type 'MatMu1V2' is not in the ascend910 operator library" in m and
               "Did you mean 'MatMulV2'?" in m for m in messages)
    assert "customize_dtypes" not in result.report.by_name("mm").reason


def test_mixlist_changes_the_lists(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"black-list": {"to-add": ["MatMulV2"]}, "white-list": {"to-add": ["Relu"]}}))

    def fn():
        tf.matmul(_x(), _const([8, 8], "w"), name="mm")
        tf.nn.relu(_x(name="y"), name="relu")

    result = rewrite(build(fn), npu_options("mixed_float16", modify_mixlist=path))
    mm, relu = result.report.by_name("mm"), result.report.by_name("relu")
    assert (mm.list, mm.decision) == ("black", "float32") and "black-list.to-add" in mm.reason
    assert (relu.list, relu.decision) == ("white", "float16") and "white-list.to-add" in relu.reason


def test_function_calls_are_boundaries_and_the_library_is_untouched():
    @function.Defun(tf.float32)
    def double(v):
        return tf.matmul(v, v) * 2.0

    def fn():
        mm = tf.matmul(_x((4, 4)), _const([4, 4], "w"), name="mm")
        out = double(mm, name="call")
        tf.nn.relu(out, name="relu")

    graph_def = build(fn)
    result = rewrite(graph_def, mode("mixed_float16"))
    assert result.graph_def.library == graph_def.library
    assert data_inputs(result.graph_def, "call") == ["mm-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"]
    call = result.report.by_name("call")
    assert call.decision == "unchanged" and "function call" in call.reason
    relu = result.report.by_name("relu")
    assert relu.decision == "float32" and "no float producer" in relu.reason
    run(result.graph_def, "relu:0", {"x:0": np.ones((4, 4), np.float32)})


@pytest.mark.parametrize("v2", ["mixed_float16", "fp16", "cube_fp16in_fp32out", "origin"])
def test_every_mode_keeps_the_training_graph_runnable_and_idempotent(v2):
    options = mode(v2)
    result = rewrite(build(_training_graph), options)
    assert_idempotent(result, options)
    feeds = {"x:0": np.ones((8, 4), np.float32), "labels:0": np.arange(8) % 3}
    loss, _ = run(result.graph_def, ["loss:0", "train"], feeds, init="init")
    assert np.isfinite(loss)


def test_graph_without_white_ops_is_unchanged():
    def fn():
        x = _x()
        tf.math.sqrt(tf.nn.relu(tf.math.exp(x, name="exp"), name="relu"), name="sqrt")

    graph_def = build(fn)
    result = rewrite(graph_def, mode("mixed_float16"))
    assert result.graph_def == graph_def and result.tensor_map == {}
    assert {r.decision for r in result.report.records if r.list != "-"} == {"float32"}


def test_already_half_ops_are_untouched_and_a_gray_op_after_their_cast_follows_them():
    def fn():
        half = tf.cast(_x(), tf.float16, name="to_half")
        relu = tf.nn.relu(tf.matmul(half, tf.cast(_const([8, 8], "w"), tf.float16), name="mm16"), name="relu16")
        tf.math.square(tf.cast(relu, tf.float32, name="to_float"), name="square32")

    graph_def = build(fn)
    result = rewrite(graph_def, mode("mixed_float16"))
    for name in ("mm16", "relu16"):
        assert result.report.by_name(name).decision == "float16"
        assert dtype_of(result.graph_def, name) == FP16
        assert data_inputs(result.graph_def, name) == data_inputs(graph_def, name)
    # Gray follows its producer through the non-black Cast (docs/BEHAVIOUR.md §3), so it reads the half tensor.
    assert dtype_of(result.graph_def, "square32") == FP16
    assert data_inputs(result.graph_def, "square32") == ["relu16"]
    assert added_casts(result.graph_def) == []


def test_gray_looks_through_float_casts_but_not_through_integer_ones():
    """FE looks through non-black Casts between float dtypes (docs/BEHAVIOUR.md §3; the maintainers' acceptance test
    test_gray_op_after_a_black_op_through_non_black_casts_stays_float32 takes a float32 -> float16 -> float32 pair
    too). Values cast to an integer and back no longer carry the precision of the op before them: that Cast is
    the producer a gray op follows."""
    def fn():
        x = _x()
        product = tf.matmul(x, _const((8, 8), "w"), name="mm")                       # white: float16
        as_int = tf.cast(tf.cast(product, tf.int32, name="to_int"), tf.float32, name="from_int")
        tf.math.add(as_int, 1.0, name="after_int")
        mean = tf.reduce_mean(x, axis=1, keepdims=True, name="mean")               # black: float32
        narrowed = tf.cast(tf.cast(mean, tf.float16, name="to16"), tf.float32, name="to32")
        tf.math.add(narrowed, 1.0, name="after_narrowing")

    result = rewrite(build(fn), mode("mixed_float16"))
    report = result.report
    assert report.by_name("mm").decision == "float16" and report.by_name("mean").decision == "float32"
    assert report.by_name("after_int").decision == "float32"
    assert report.followed["after_int"] == "from_int"
    assert report.by_name("after_narrowing").decision == "float32"
    assert report.followed["after_narrowing"] == "mean"
    assert_idempotent(result, mode("mixed_float16"))


def test_ref_and_resource_variable_reads_are_both_untouched_sources():
    """`w/read` of a ref variable is the variable's float32 master, like a resource variable's ReadVariableOp: under
    force_fp16 neither is rounded, so Adam's beta powers reach ApplyAdam unrounded and both kinds of variable
    train identically."""
    x_value = RNG.uniform(-1, 1, (4, 3)).astype(np.float32)       # one input for both kinds of variable

    def model(resource):
        x = tf.constant(x_value)
        w = tf.compat.v1.get_variable("w", initializer=np.full((3, 2), 0.5, np.float32), use_resource=resource)
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
        tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss, name="train")
        tf.compat.v1.global_variables_initializer()

    weights = []
    for resource in (False, True):
        graph_def = build(lambda: model(resource))
        result = rewrite(graph_def, mode("fp16"))
        if not resource:
            for name in ("w/read", "beta1_power/read"):
                assert result.report.by_name(name).decision == "unchanged", name
                assert "graph source" in result.report.by_name(name).reason
        graph = tf.Graph()
        with graph.as_default():
            tf.import_graph_def(result.graph_def, name="")
            with tf.compat.v1.Session(graph=graph) as sess:
                sess.run("init")
                sess.run("train")
                weights.append(sess.run("w:0" if not resource else "w/Read/ReadVariableOp:0"))
    np.testing.assert_array_equal(weights[0], weights[1])
