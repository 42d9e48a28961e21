"""One rule at a time, for every precision mode (docs/BEHAVIOUR.md §2-§4)."""
import json

import numpy as np
import tensorflow as tf

from npu_bridge.core.precision import rewrite
from precision_helpers import (
    BF16, FP16, FP32, added_casts, build, data_inputs, dtype_of, fetch_user_tensor, mode, nodes, npu_options, run,
)


def _x(shape=(4, 4), dtype=tf.float32, name="x"):
    return tf.compat.v1.placeholder(dtype, list(shape), name=name)


def _w(name="w", shape=(4, 4)):
    return tf.constant(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape), name=name)


def _record(result, name):
    return result.report.by_name(name)


# ---- mixed_float16: white / black / gray ----------------------------------------------------------------

def test_white_matmul_is_reduced_and_computed_between_casts():
    result = rewrite(build(lambda: tf.matmul(_x(), _w(), name="mm")), mode("mixed_float16"))
    record = _record(result, "mm")
    assert (record.list, record.decision, record.emulated) == ("white", "float16", True)
    assert record.ir_type == "MatMulV2" and "white list" in record.reason and "cube op" in record.reason
    assert dtype_of(result.graph_def, "mm") == FP32
    assert data_inputs(result.graph_def, "mm") == ["x-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge",
                                                   "w-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"]
    assert result.tensor_map["mm:0"].name == "mm-0-CastToFp16-NpuBridge:0"
    assert set(record.casts) == {"mm-0-CastToFp16-NpuBridge", "x-0-CastToFp16-NpuBridge",
                                 "x-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge", "w-0-CastToFp16-NpuBridge",
                                 "w-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"}


def test_black_op_keeps_float32_and_reads_a_cast_back():
    def fn():
        tf.math.log(tf.matmul(_x(), _w(), name="mm"), name="log")

    result = rewrite(build(fn), mode("mixed_float16"))
    record = _record(result, "log")
    assert (record.list, record.decision) == ("black", "float32")
    assert record.reason.startswith("black list (built-in ascend910 precision_reduce=false)")
    assert data_inputs(result.graph_def, "log") == ["mm-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"]


def test_gray_follows_reduced_producer_and_is_retyped_in_place():
    def fn():
        tf.math.square(tf.matmul(_x(), _w(), name="mm"), name="square")

    result = rewrite(build(fn), mode("mixed_float16"))
    record = _record(result, "square")
    assert (record.list, record.decision, record.emulated) == ("gray", "float16", False)
    assert "follows its float16 producer 'mm'" in record.reason
    assert dtype_of(result.graph_def, "square") == FP16
    assert data_inputs(result.graph_def, "square") == ["mm-0-CastToFp16-NpuBridge"]
    assert result.tensor_map["square:0"].name == "square:0" and result.tensor_map["square:0"].dtype == "float16"


def test_gray_after_black_stays_float32():
    def fn():
        tf.nn.relu(tf.math.log(tf.matmul(_x(), _w()), name="log"), name="relu")

    record = _record(rewrite(build(fn), mode("mixed_float16")), "relu")
    assert record.decision == "float32" and "follows its float32 producer 'log'" in record.reason


def _log_then(op_fn):
    """A black log of a positive input (float32 values float16 cannot hold), then the op under test."""
    x = _x((1, 4, 4, 1))
    return op_fn(tf.math.log(x, name="log"))


def test_gray_op_without_float32_in_the_library_runs_reduced_after_a_float32_producer():
    # The 910 library declares MaxPool float16 only: the NPU cannot follow the float32 log, it casts to float16.
    result = rewrite(build(lambda: _log_then(lambda t: tf.nn.max_pool2d(t, 2, 2, "VALID", name="pool"))),
                     mode("mixed_float16"))
    record = _record(result, "pool")
    assert (record.ir_type, record.list, record.decision) == ("MaxPool", "gray", "float16")
    assert "producer 'log' is float32 but the op library declares no float32 for MaxPool: runs in float16" \
        in record.reason
    assert result.report.followed["pool"] == "log"
    cast = nodes(result.graph_def)["log-0-CastToFp16-NpuBridge"]
    assert cast.op == "Cast" and cast.attr["DstT"].type == FP16 and "log-0-CastToFp16-NpuBridge" in record.casts
    feed = {"x:0": np.random.RandomState(0).uniform(0.5, 3.0, (1, 4, 4, 1)).astype(np.float32)}
    pooled = fetch_user_tensor(result, "pool:0", feed)
    in_float32 = run(build(lambda: _log_then(lambda t: tf.nn.max_pool2d(t, 2, 2, "VALID", name="pool"))),
                     "pool:0", feed)
    assert pooled.dtype == np.float16
    np.testing.assert_array_equal(pooled, in_float32.astype(np.float16))
    assert not np.array_equal(pooled.astype(np.float32), in_float32), "the float16 rounding shows"


def test_gray_op_with_float32_in_the_library_follows_its_float32_producer():
    result = rewrite(build(lambda: _log_then(lambda t: tf.math.square(t, name="square"))), mode("mixed_float16"))
    record = _record(result, "square")
    assert record.decision == "float32" and "follows its float32 producer 'log'" in record.reason
    assert data_inputs(result.graph_def, "square") == ["log"]


def test_gray_with_only_neutral_producers_falls_back_to_allow_fp32_to_fp16():
    def fn():
        x = _x((1, 4, 4, 1))
        tf.nn.relu(x, name="relu")
        tf.nn.max_pool2d(x, 2, 2, "VALID", name="pool")

    result = rewrite(build(fn), mode("mixed_float16"))
    relu, pool = _record(result, "relu"), _record(result, "pool")
    assert relu.decision == "float32" and "no float producer" in relu.reason and "supports float32" in relu.reason
    # The 910 library declares MaxPool float16-only, so the fallback rule reduces it.
    assert pool.decision == "float16" and "no float32 in the op library" in pool.reason


def test_mixed_producers_rule():
    def fn():
        mm = tf.matmul(_x(), _w(), name="mm")
        tf.add(mm, _x(name="y"), name="reduced_and_neutral")
        tf.add(mm, tf.math.log(_x(name="z"), name="log"), name="reduced_and_black")

    result = rewrite(build(fn), mode("mixed_float16"))
    assert _record(result, "reduced_and_neutral").decision == "float16"
    record = _record(result, "reduced_and_black")
    assert record.decision == "float32" and "'log'" in record.reason


def test_gray_ops_sharing_a_decision_each_name_their_own_producer():
    # Gray ops with the same op, dtypes and producer classes share one decision inside the pass; the report must
    # still name each op's own producer, and an op whose attributes follow different producers names them all.
    def fn():
        first = tf.matmul(_x(), _w(), name="mm1")
        second = tf.matmul(_x(name="y"), _w(name="w2"), name="mm2")
        tf.math.square(first, name="sq1")
        tf.math.square(second, name="sq2")
        tf.raw_ops.IdentityN(input=[first, second], name="both")

    result = rewrite(build(fn), mode("mixed_float16"))
    assert "follows its float16 producer 'mm1'" in _record(result, "sq1").reason
    assert "follows its float16 producer 'mm2'" in _record(result, "sq2").reason
    both = _record(result, "both")
    assert both.decision == "float16"
    assert "T[0]: " in both.reason and "producer 'mm1'" in both.reason and "producer 'mm2'" in both.reason
    assert result.report.followed == {"sq1": "mm1", "sq2": "mm2", "both": "mm1"}
    assert "{followed}" not in result.report.to_json()


def test_gray_looks_through_identity_and_non_black_cast():
    def fn():
        half = tf.nn.relu(_x(dtype=tf.float16, name="h"), name="half_relu")
        widened = tf.cast(tf.identity(half, name="ident"), tf.float32, name="widen")
        tf.math.square(widened, name="sq")

    result = rewrite(build(fn), mode("mixed_float16"))
    record = _record(result, "sq")
    assert record.decision == "float16" and "'half_relu'" in record.reason
    # No Cast pair: the square reads the half tensor the user's widening Cast started from.
    assert data_inputs(result.graph_def, "sq") == ["ident"]
    assert added_casts(result.graph_def) == []


def test_black_cast_from_mixlist_stops_the_look_through(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"black-list": {"to-add": ["Cast"]}}))

    def fn():
        half = tf.nn.relu(_x(dtype=tf.float16, name="h"), name="half_relu")
        tf.math.square(tf.cast(half, tf.float32, name="widen"), name="sq")

    result = rewrite(build(fn), npu_options("mixed_float16", modify_mixlist=path))
    record = _record(result, "sq")
    assert record.decision == "float32" and "'widen'" in record.reason


def test_white_op_without_reduced_dtype_in_library_stays_float32(tmp_path):
    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"white-list": {"to-add": ["ResizeBilinearV2Grad"]}}))

    def fn():
        image = _x((1, 4, 4, 1), name="image")
        grads = _x((1, 8, 8, 1), name="grads")
        tf.raw_ops.ResizeBilinearGrad(grads=grads, original_image=image, name="rbg")

    record = _record(rewrite(build(fn), npu_options("mixed_float16", modify_mixlist=path)), "rbg")
    assert (record.list, record.decision) == ("white", "float32")
    assert "modify_mixlist" in record.reason and "declares no float16" in record.reason


def test_no_cpu_kernel_in_reduced_dtype_means_float32_between_casts():
    def fn():
        tf.raw_ops.Erfinv(x=tf.matmul(_x(), _w(), name="mm") * 0.1, name="erfinv")

    result = rewrite(build(fn), mode("mixed_float16"))
    record = _record(result, "erfinv")
    assert (record.decision, record.emulated) == ("float16", True)
    assert "no CPU kernel for Erfinv in float16" in record.reason
    assert dtype_of(result.graph_def, "erfinv") == FP32
    assert result.tensor_map["erfinv:0"].name == "erfinv-0-CastToFp16-NpuBridge:0"


def test_a_size_input_read_from_shape_picks_the_const_attribute_form():
    """tf.nn.conv3d's filter gradient reads its filter size from ShapeN. The graph engine folds the shape of a
    static tensor to a constant, then turns the constant input into an attribute: Conv3DBackpropFilterD, on
    the 910 white list (the plain Conv3DBackpropFilter is gray)."""
    def fn():
        x = _x((1, 4, 4, 4, 2))
        w = tf.constant(np.ones((2, 2, 2, 2, 3), np.float32), name="w")
        y = tf.nn.conv3d(x, w, strides=[1] * 5, padding="SAME", name="conv")
        tf.gradients(tf.reduce_sum(y), [w], name="grad")

    result = rewrite(build(fn), mode("mixed_float16"))
    record, = [r for r in result.report.records if r.tf_type == "Conv3DBackpropFilterV2"]
    assert (record.ir_type, record.list, record.decision) == ("Conv3DBackpropFilterD", "white", "float16")


def test_a_resize_to_a_constant_size_is_the_d_form():
    def fn():
        tf.compat.v1.image.resize_bilinear(_x((1, 4, 4, 2)), [8, 8], name="up")

    record, = [r for r in rewrite(build(fn), mode("mixed_float16")).report.records if r.tf_type == "ResizeBilinear"]
    assert record.ir_type == "ResizeBilinearV2D"


def _relu_grad_record(result):
    record, = [r for r in result.report.records if r.tf_type == "ReluGrad"]
    return record


def test_relu_gradient_is_the_fused_white_relu_grad_v2(tmp_path):
    """DreluFusionPass pairs a Relu with the ReluGrad reading its output (ReluV2 + ReluGradV2, white on the 910);
    real mixlists black-list ReluGradV2 to keep that gradient in float32, and the edit acts here too."""
    def fn():
        y = tf.nn.relu(tf.matmul(_x(), _w(), name="mm"), name="relu")
        tf.gradients(tf.reduce_sum(y), [y.op.inputs[0]], name="grad")

    result = rewrite(build(fn), mode("mixed_float16"))
    record = _relu_grad_record(result)
    assert (record.ir_type, record.list, record.decision) == ("ReluGradV2", "white", "float16")
    assert (result.report.by_name("relu").ir_type, result.report.by_name("relu").list) == ("ReluV2", "gray")
    path = tmp_path / "ops_info.json"
    path.write_text(json.dumps({"black-list": {"to-add": ["ReluV2", "ReluGradV2"]}}))
    result = rewrite(build(fn), npu_options("mixed_float16", modify_mixlist=path))
    record = _relu_grad_record(result)
    assert (record.ir_type, record.list, record.decision) == ("ReluGradV2", "black", "float32")
    assert (result.report.by_name("relu").list, result.report.by_name("relu").decision) == ("black", "float32")


def test_a_relu_gradient_without_its_relu_keeps_the_plain_relu_grad():
    def fn():
        tf.raw_ops.ReluGrad(gradients=_x(name="g"), features=_x(name="f"), name="relu_grad")
        tf.nn.relu(_x(name="y"), name="lone_relu")

    result = rewrite(build(fn), mode("mixed_float16"))
    assert (_relu_grad_record(result).ir_type, _relu_grad_record(result).list) == ("ReluGrad", "gray")
    assert result.report.by_name("lone_relu").ir_type == "Relu"


# ---- allow_fp32_to_fp16 ------------------------------------------------------------------------------------

def test_allow_fp32_to_fp16_reduces_cube_ops_and_keeps_vector_ops():
    def fn():
        x = _x((1, 4, 4, 4))
        relu = tf.nn.relu(tf.reshape(tf.matmul(tf.reshape(x, [16, 4]), _w(), name="mm"), [1, 4, 4, 4]),
                          name="relu")
        tf.nn.max_pool2d(relu, 2, 2, "VALID", name="pool")

    result = rewrite(build(fn), mode(v1="allow_fp32_to_fp16"))
    assert _record(result, "mm").decision == "float16" and _record(result, "mm").emulated
    relu = _record(result, "relu")
    assert relu.decision == "float32" and relu.reason.startswith("allow_fp32_to_fp16: vector op Relu supports float32")
    pool = _record(result, "pool")
    assert pool.decision == "float16"
    # MaxPool's float16 CPU kernel is slow: it computes in float32 between casts (input rounded through float16:
    # Cast pair; output rounded: one Cast), two casts more than a float16 kernel would need.
    assert pool.emulated and "float32 kernel for MaxPool is far faster" in pool.reason
    assert result.report.summary() == "NpuOptimizer allow_fp32_to_fp16: 2/9 ops reduced to float16, 9 casts, INF/NaN mode"


def test_keep_dtype_attribute_keeps_the_op():
    def fn():
        graph = tf.compat.v1.get_default_graph()
        from tensorflow.core.framework import attr_value_pb2
        with graph._attr_scope({"_keep_dtype": attr_value_pb2.AttrValue(i=1)}):
            tf.matmul(_x(), _w(), name="kept")
        tf.matmul(_x(name="y"), _w("v"), name="free")

    for options in (mode(v1="allow_fp32_to_fp16"), mode("mixed_float16"), mode("fp16")):
        result = rewrite(build(fn), options)
        kept = _record(result, "kept")
        assert kept.decision == "float32" and "_keep_dtype" in kept.reason
        assert data_inputs(result.graph_def, "kept") == ["x", "w"]
        assert _record(result, "free").decision == "float16"


# ---- force_fp16 --------------------------------------------------------------------------------------------

def test_force_fp16_runs_every_supporting_op_in_float16_even_black_ones():
    def fn():
        log = tf.math.log(tf.math.square(_x(), name="square"), name="log")
        tf.reduce_mean(log, name="mean")

    result = rewrite(build(fn), mode("fp16"))
    for name in ("square", "log", "mean"):
        assert _record(result, name).decision == "float16", name
        assert dtype_of(result.graph_def, name) == FP16
    assert _record(result, "log").list == "black"
    assert [c.name for c in added_casts(result.graph_def)] == ["x-0-CastToFp16-NpuBridge"]


def test_force_fp16_lowers_bfloat16_ops():
    result = rewrite(build(lambda: tf.math.square(_x(dtype=tf.bfloat16), name="square")), mode("fp16"))
    assert dtype_of(result.graph_def, "square") == FP16
    assert result.tensor_map["square:0"].dtype == "float16"


# ---- force_fp32 / cube_fp16in_fp32out ----------------------------------------------------------------------

def test_force_fp32_cube_takes_fp16_inputs_and_gives_fp32_output():
    result = rewrite(build(lambda: tf.matmul(_x(), _w(), name="mm")), mode("cube_fp16in_fp32out"))
    record = _record(result, "mm")
    assert record.decision == "float16" and record.emulated and "produces float32" in record.reason
    assert data_inputs(result.graph_def, "mm") == ["x-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge",
                                                   "w-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"]
    assert "mm:0" not in result.tensor_map


def test_force_fp32_raises_half_vector_ops_and_the_half_cube_output():
    def fn():
        x = _x(dtype=tf.float16)
        relu = tf.nn.relu(x, name="relu")
        tf.matmul(relu, tf.cast(_w(), tf.float16, name="w16"), name="mm")

    result = rewrite(build(fn), npu_options(v1="force_fp32"))
    relu = _record(result, "relu")
    assert relu.decision == "float32" and "raised to float32" in relu.reason
    assert dtype_of(result.graph_def, "relu") == FP32 and dtype_of(result.graph_def, "mm") == FP32
    assert result.tensor_map["relu:0"].dtype == "float32" and result.tensor_map["mm:0"].dtype == "float32"
    # The cube op reads its operands rounded to float16: relu's float32 output is cast down, then up.
    assert data_inputs(result.graph_def, "mm") == ["relu-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge",
                                                   "w16-0-CastToFp32-NpuBridge"]
    value = run(result.graph_def, "mm:0", {"x:0": np.eye(4, dtype=np.float16)})
    assert value.dtype == np.float32


# ---- must_keep_origin_dtype --------------------------------------------------------------------------------

def test_keep_origin_changes_nothing():
    def fn():
        tf.nn.relu(tf.matmul(_x(), _w(), name="mm"), name="relu")

    graph_def = build(fn)
    result = rewrite(graph_def, mode("origin"))
    assert result.graph_def == graph_def and result.tensor_map == {}
    assert "every dtype stays as written" in _record(result, "mm").reason
    assert result.report.summary() == "NpuOptimizer origin: 0/4 ops reduced to float16, 0 casts, INF/NaN mode"


# ---- bfloat16 modes (910B) ---------------------------------------------------------------------------------

def test_mixed_bfloat16_on_910b():
    def fn():
        mm = tf.matmul(_x(), _w(), name="mm")
        tf.math.lgamma(tf.math.square(mm, name="square") + 1.0, name="lgamma")

    result = rewrite(build(fn), mode("mixed_bfloat16", soc="Ascend910B3"))
    assert result.report.summary().startswith("NpuOptimizer mixed_bfloat16: 4/")
    assert _record(result, "mm").decision == "bfloat16"
    assert dtype_of(result.graph_def, "square") == BF16
    lgamma = _record(result, "lgamma")
    assert lgamma.decision == "bfloat16" and lgamma.emulated  # TF has no bfloat16 Lgamma kernel on CPU
    assert result.tensor_map["mm:0"].name == "mm-0-CastToBf16-NpuBridge:0"


def test_allow_fp32_to_bf16_on_910b():
    def fn():
        tf.nn.relu(tf.matmul(_x(), _w(), name="mm"), name="relu")

    result = rewrite(build(fn), mode(v1="allow_fp32_to_bf16", soc="Ascend910B3"))
    assert _record(result, "mm").decision == "bfloat16"
    assert _record(result, "relu").decision == "float32"


def test_lists_argument_replaces_the_options_lists(tmp_path):
    from npu_bridge.core.mixlist import PrecisionLists, load_mixlist
    from npu_bridge.core.oplib import load_op_library

    path = tmp_path / "mixlist.json"
    path.write_text(json.dumps({"white-list": {"to-remove": ["MatMulV2"]}}))
    library = load_op_library("ascend910")
    lists = PrecisionLists(library, load_mixlist(str(path), library), str(path))
    result = rewrite(build(lambda: tf.matmul(_x(), _w(), name="mm")), mode("mixed_float16"), lists=lists)
    record = _record(result, "mm")
    # Gray now, with only graph sources as producers: the allow_fp32_to_fp16 fallback still reduces a cube op.
    assert (record.list, record.decision) == ("gray", "float16")
    assert "white-list.to-remove" in record.reason and "falls back to allow_fp32_to_fp16: cube op" in record.reason
