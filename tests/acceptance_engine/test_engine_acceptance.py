"""Acceptance of the precision engine (issue 2): the cases a reviewer checks by hand, each against the rule of
docs/BEHAVIOUR.md it proves, with a contrasting graph or configuration wherever the assertion could otherwise
pass with the feature broken."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.options import PrecisionMode, options_from_parameter_map
from npu_bridge.core.precision import rewrite

FP16, FP32 = tf.float16.as_datatype_enum, tf.float32.as_datatype_enum
ADDED = attr_value_pb2.AttrValue(s=b"cast")      # marker of a Cast the pass added
BUILTIN = Path(__file__).resolve().parents[2] / "npu_bridge" / "core" / "opp"
CONFIG = Path("built-in/op_impl/ai_core/tbe/config")


def options(v2=None, v1=None, **keys):
    """NpuOptions from a parameter_map filled as a ported script fills it (ints through .i, the rest .s)."""
    custom = config_pb2.ConfigProto().graph_options.rewrite_options.custom_optimizers.add()
    custom.name = "NpuOptimizer"
    custom.parameter_map["use_off_line"].b = True
    if v2:
        custom.parameter_map["precision_mode_v2"].s = v2.encode()
    if v1:
        custom.parameter_map["precision_mode"].s = v1.encode()
    for key, value in keys.items():
        if isinstance(value, int):
            custom.parameter_map[key].i = value
        else:
            custom.parameter_map[key].s = str(value).encode()
    return options_from_parameter_map(custom.parameter_map)


def build(fn):
    graph = tf.Graph()
    with graph.as_default():
        fn()
    return graph.as_graph_def()


def x(shape=(4, 4), dtype=tf.float32, name="x"):
    return tf.compat.v1.placeholder(dtype, list(shape), name=name)


def w(shape=(4, 4), name="w"):
    return tf.constant(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape), name=name)


def node(graph_def, name):
    return next(n for n in graph_def.node if n.name == name)


def inputs(graph_def, name):
    return [i for i in node(graph_def, name).input if not i.startswith("^")]


def fetch(result, name, feeds):
    """What a session returns for user tensor `name` (its internal location, as the runtime fetches it)."""
    ref = result.tensor_map.get(name)
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(result.graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as sess:
            return np.asarray(sess.run(ref.name if ref else name, feeds))


def decision(result, name):
    return result.report.by_name(name).decision


def added_casts(graph_def):
    return [n for n in graph_def.node if n.op == "Cast" and n.attr.get("_npu_bridge") == ADDED]


def write_json(path, data):
    path.write_text(json.dumps(data))
    return path


# ---- gray ops: what they follow (BEHAVIOUR.md §3) ---------------------------------------------------------------

def _through_user_casts(first):
    def fn():
        producer = first(tf.matmul(x(), w(), name="mm"))
        wide = tf.cast(tf.cast(producer, tf.float16, name="to16"), tf.float32, name="to32")
        tf.nn.relu(wide, name="relu")
    return fn


def test_gray_op_after_a_black_op_through_non_black_casts_stays_float32():
    black = rewrite(build(_through_user_casts(lambda t: tf.math.log(t, name="prod"))), options("mixed_float16"))
    assert black.report.by_name("prod").list == "black"
    assert decision(black, "relu") == "float32" and "float32 producer 'prod'" in black.report.by_name("relu").reason
    assert node(black.graph_def, "relu").attr["T"].type == FP32
    # Contrast: the same casts after a white op let relu follow it, so the look-through is what decided above.
    white = rewrite(build(_through_user_casts(lambda t: t)), options("mixed_float16"))
    assert decision(white, "relu") == "float16" and "float16 producer 'mm'" in white.report.by_name("relu").reason


def test_gray_op_whose_producer_is_a_cast_black_listed_by_the_mixlist(tmp_path):
    fn = _through_user_casts(lambda t: t)
    mixlist = write_json(tmp_path / "mixlist.json", {"black-list": {"to-add": ["Cast"]}})
    result = rewrite(build(fn), options("mixed_float16", modify_mixlist=mixlist))
    to32 = result.report.by_name("to32")
    assert to32.list == "black" and to32.origin == f"modify_mixlist {mixlist}: black-list.to-add"
    relu = result.report.by_name("relu")
    assert relu.decision == "float32" and "float32 producer 'to32'" in relu.reason
    assert result.report.explain("relu").splitlines()[-1].startswith("to32 [Cast -> Cast, black]")
    assert decision(rewrite(build(fn), options("mixed_float16")), "relu") == "float16"


# ---- allow_fp32_to_fp16 / force_fp16 / force_fp32 against the library's dtypes (BEHAVIOUR.md §2) ----------------

def test_allow_fp32_to_fp16_runs_a_vector_op_without_float32_in_the_library_in_float16():
    def fn():
        image = x((1, 4, 4, 1), name="image")
        tf.nn.avg_pool2d(image, 2, 2, "VALID", name="pool")       # AvgPool: the 910 library declares float16 only
        tf.nn.relu(image, name="relu")                            # Relu: float16 and float32 -> keeps float32

    result = rewrite(build(fn), options(v1="allow_fp32_to_fp16"))
    pool = result.report.by_name("pool")
    assert (pool.decision, pool.list) == ("float16", "gray") and "has no float32 in the op library" in pool.reason
    assert decision(result, "relu") == "float32" and node(result.graph_def, "relu").attr["T"].type == FP32
    image = np.random.default_rng(0).normal(size=(1, 4, 4, 1)).astype(np.float32) * 3
    value = fetch(result, "pool:0", {"image:0": image})
    assert value.dtype == np.float16
    rounded = image.astype(np.float16).astype(np.float32)
    expected = rounded.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(4, 4).mean(axis=1).astype(np.float16)
    np.testing.assert_array_equal(value.reshape(4), expected)


def test_force_fp16_leaves_an_op_the_library_gives_no_float16_in_float32():
    def fn():
        image = x((1, 4, 4, 1), name="image")
        filters = tf.constant(np.zeros((2, 2, 1), np.float32), name="filters")
        grads = x((1, 3, 3, 1), name="grads")
        tf.raw_ops.Dilation2DBackpropInput(input=image, filter=filters, out_backprop=grads, strides=[1, 1, 1, 1],
                                           rates=[1, 1, 1, 1], padding="VALID", name="dil")
        tf.nn.relu(image, name="relu")

    result = rewrite(build(fn), options("fp16"))
    dil = result.report.by_name("dil")
    assert dil.decision == "float32" and "declares no float16 for Dilation2DBackpropInput" in dil.reason
    assert node(result.graph_def, "dil").attr["T"].type == FP32 and not dil.casts
    assert decision(result, "relu") == "float16"


def test_force_fp32_raises_an_fp16_graphs_vector_ops_and_keeps_its_float32_ops():
    def fn():
        half = x(dtype=tf.float16, name="h")
        tf.math.exp(tf.nn.relu(half, name="relu16"), name="exp16")
        tf.nn.relu(x(name="f"), name="relu32")

    result = rewrite(build(fn), options(v1="force_fp32"))
    assert [node(result.graph_def, n).attr["T"].type for n in ("relu16", "exp16", "relu32")] == [FP32] * 3
    assert inputs(result.graph_def, "relu16") == ["h-0-CastToFp32-NpuBridge"]
    assert inputs(result.graph_def, "exp16") == ["relu16"]          # no cast pair between two raised ops
    assert result.tensor_map["exp16:0"].dtype == "float32" and "relu32:0" not in result.tensor_map
    assert fetch(result, "exp16:0", {"h:0": np.full((4, 4), 1e-3, np.float16)}).dtype == np.float32


# ---- soc, bf16 modes and defaults (BEHAVIOUR.md §2) -------------------------------------------------------------

def _mlp():
    hidden = tf.nn.relu(tf.matmul(x(), w(), name="mm"), name="relu")
    tf.math.log(tf.abs(hidden) + 1.0, name="log")


def test_mixed_bfloat16_on_910b_and_the_real_error_on_910():
    result = rewrite(build(_mlp), options("mixed_bfloat16", soc_config="Ascend910B2"))
    assert result.report.summary().startswith("NpuOptimizer mixed_bfloat16: 4/")
    assert [decision(result, n) for n in ("mm", "relu", "Abs", "add", "log")] == ["bfloat16"] * 4 + ["float32"]
    assert result.tensor_map["relu:0"].dtype == "bfloat16"
    for key, value in (("precision_mode_v2", "mixed_bfloat16"), ("precision_mode", "allow_mix_precision_bf16")):
        with pytest.raises(NpuConfigError, match="The AI core doesn't support mixed_bfloat16, "
                                                 "allow_mix_precision_bf16 or allow_fp32_to_bf16."):
            options(**{key: value, "soc_config": "Ascend910A"})


@pytest.mark.parametrize("soc, run_mode, expected, mm, relu", [
    ("Ascend910A", 1, PrecisionMode.ALLOW_FP32_TO_FP16, "float16", "float32"),
    ("Ascend910A", 0, PrecisionMode.FORCE_FP16, "float16", "float16"),
    ("Ascend910B1", 1, PrecisionMode.KEEP_ORIGIN, "unchanged", "unchanged"),
    ("Ascend910B4", 0, PrecisionMode.FORCE_FP16, "float16", "float16"),
])
def test_defaults_per_graph_run_mode_and_soc_drive_the_pass(soc, run_mode, expected, mm, relu):
    chosen = options(soc_config=soc, graph_run_mode=run_mode)
    assert chosen.mode is expected and "(default" in chosen.mode_name
    result = rewrite(build(_mlp), chosen)
    assert (decision(result, "mm"), decision(result, "relu")) == (mm, relu)


# ---- per-op controls (BEHAVIOUR.md §4) --------------------------------------------------------------------------

def test_keep_dtype_keeps_a_white_op_float32_and_its_gray_consumer_follows():
    def fn(keep):
        mm = tf.matmul(x(), w(), name="mm")
        if keep:
            mm.op._set_attr("_keep_dtype", tf.compat.v1.AttrValue(i=1))
        tf.nn.relu(mm, name="relu")

    kept = rewrite(build(lambda: fn(True)), options("mixed_float16"))
    assert [decision(kept, n) for n in ("mm", "relu")] == ["float32", "float32"] and kept.report.n_casts == 0
    assert "_keep_dtype" in kept.report.by_name("mm").reason
    plain = rewrite(build(lambda: fn(False)), options("mixed_float16"))
    assert [decision(plain, n) for n in ("mm", "relu")] == ["float16", "float16"]


def test_customize_dtypes_modelzoo_file_and_name_beats_type_written_after_it(tmp_path):
    path = tmp_path / "customize.cfg"
    path.write_text("mm_named::InputDtype:float32,float32,OutputDtype:float32\n"
                    "OpType::MatMulV2:InputDtype:float16,float16,float32,OutputDtype:float32\n"
                    "OpType::BatchMatMulV2:InputDtype:float16,float16,OutputDtype:float32\n")

    def fn():
        tf.nn.relu(tf.matmul(x(), w(), name="mm"), name="relu")
        tf.matmul(x(name="y"), w(name="w2"), name="mm_named")
        tf.matmul(x((2, 4, 4), name="b"), w((2, 4, 4), name="wb"), name="bmm")

    result = rewrite(build(fn), options("mixed_float16", customize_dtypes=path))
    mm = result.report.by_name("mm")
    assert mm.decision == "float16" and mm.emulated and "line 2 (by type)" in mm.reason
    assert inputs(result.graph_def, "mm") == ["x-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge",
                                              "w-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge"]
    assert "mm:0" not in result.tensor_map and decision(result, "relu") == "float32"   # float32 output, as asked
    named = result.report.by_name("mm_named")
    assert named.decision == "float32" and "line 1 (by name)" in named.reason and not named.casts
    bmm = result.report.by_name("bmm")
    assert bmm.tf_type.startswith("BatchMatMul") and "line 3 (by type)" in bmm.reason and bmm.decision == "float16"


# ---- the library and the TF -> IR map (BEHAVIOUR.md §3) ---------------------------------------------------------

def test_ascend_opp_path_library_with_an_edited_precision_reduce_drives_the_pass(tmp_path, monkeypatch):
    root = tmp_path / "opp"
    shutil.copytree(BUILTIN / CONFIG / "ascend910", root / CONFIG / "ascend910")
    library_file = root / CONFIG / "ascend910" / "aic-ascend910-ops-info.json"
    data = json.loads(library_file.read_text())
    data["Relu"]["precision_reduce"] = {"flag": "false"}            # the seed's method: edit the flag in a copy
    library_file.write_text(json.dumps(data))
    monkeypatch.setenv("ASCEND_OPP_PATH", str(root))
    result = rewrite(build(_mlp), options("mixed_float16"))
    relu = result.report.by_name("relu")
    assert (relu.list, relu.decision) == ("black", "float32")
    assert str(root / CONFIG / "ascend910") in relu.origin and relu.origin.endswith("precision_reduce=false")
    monkeypatch.delenv("ASCEND_OPP_PATH")
    assert decision(rewrite(build(_mlp), options("mixed_float16")), "relu") == "float16"


def _reductions():
    mm = tf.matmul(x(), w(), name="mm")
    tf.reduce_sum(mm, axis=1, name="sum")
    tf.nn.softmax(mm, name="softmax")


@pytest.mark.parametrize("sum_type", ["ReduceSumD", "ReduceSum"])
def test_real_mixlist_ir_names_act_on_tf_sum_and_softmax(tmp_path, sum_type):
    """A mixlist names Ascend IR types; older CANN files say ReduceSumD, newer ones ReduceSum: both reach TF Sum."""
    mixlist = write_json(tmp_path / "mixlist.json", {"black-list": {"to-remove": [sum_type], "to-add": ["SoftmaxV2"]}})
    edited = rewrite(build(_reductions), options("mixed_float16", modify_mixlist=mixlist))
    total, softmax = edited.report.by_name("sum"), edited.report.by_name("softmax")
    assert (total.ir_type, total.list, total.decision) == (sum_type, "gray", "float16")
    assert (softmax.ir_type, softmax.list, softmax.decision) == ("SoftmaxV2", "black", "float32")
    builtin = rewrite(build(_reductions), options("mixed_float16"))
    assert [(builtin.report.by_name(n).list, decision(builtin, n)) for n in ("sum", "softmax")] == \
        [("black", "float32"), ("gray", "float16")]


def test_a_mixlist_naming_the_tf_type_matmul_does_nothing_as_on_the_real_engine(tmp_path):
    mixlist = write_json(tmp_path / "mixlist.json", {"black-list": {"to-add": ["MatMul"]}})
    with pytest.warns(UserWarning, match="'MatMul' is a TensorFlow op type"):
        result = rewrite(build(_mlp), options("mixed_float16", modify_mixlist=mixlist))
    mm = result.report.by_name("mm")
    assert (mm.ir_type, mm.list, mm.decision) == ("MatMulV2", "white", "float16")


# ---- casts, report, safety ----------------------------------------------------------------------------------

def test_one_cast_per_output_and_dtype_for_every_consumer_and_user_casts_reused():
    def fn():
        mm = tf.matmul(x(), w(), name="mm")
        tf.cast(mm, tf.float16, name="user16")          # the user's own rounding of mm
        for i in range(3):
            tf.math.log(mm, name=f"log{i}")             # black: read mm in float32
            tf.math.square(mm, name=f"square{i}")       # gray: follow mm in float16

    result = rewrite(build(fn), options("mixed_float16"))
    casts = added_casts(result.graph_def)
    keys = [(n.input[0], n.attr["DstT"].type) for n in casts]
    assert len(keys) == len(set(keys))
    assert {inputs(result.graph_def, f"square{i}")[0] for i in range(3)} == {"user16"}
    assert {inputs(result.graph_def, f"log{i}")[0] for i in range(3)} == {"user16-0-CastToFp32-NpuBridge"}
    assert result.tensor_map["mm:0"].name == "user16:0"


def test_report_json_is_self_contained_and_the_summary_counts_match():
    result = rewrite(build(_mlp), options("mixed_float16"), log=False)
    data = json.loads(result.report.to_json())
    records = {r["name"]: r for r in data["records"]}
    assert records["log"]["origin"] == "built-in ascend910 precision_reduce=false"
    assert records["relu"]["origin"] == "built-in ascend910: no precision_reduce (gray)"
    assert records["x"]["list"] == "-" and records["x"]["origin"] == ""
    assert data["n_casts"] == sum(len(r["casts"]) for r in data["records"]) == result.report.n_casts
    assert data["n_reduced"] == sum(r["decision"] == "float16" for r in data["records"])
    assert result.report.summary() == (f"NpuOptimizer mixed_float16: {data['n_reduced']}/{len(result.report.records)}"
                                       f" ops reduced to float16, {data['n_casts']} casts, INF/NaN mode")


def test_fetched_reduced_tensors_round_like_the_npu():
    result = rewrite(build(_mlp), options("mixed_float16"))
    feed = {"x:0": np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)}
    relu = fetch(result, "relu:0", feed)
    assert result.tensor_map["relu:0"].dtype == "float16" and relu.dtype == np.float16
    expected = np.maximum(feed["x:0"].astype(np.float16).astype(np.float32) @
                          np.linspace(-1, 1, 16, dtype=np.float32).astype(np.float16).astype(np.float32).reshape(4, 4),
                          0).astype(np.float16)
    np.testing.assert_array_equal(relu, expected)


def test_training_graph_bf16_modes_idempotent_and_runnable():
    def fn():
        weights = tf.compat.v1.get_variable("wt", initializer=np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4))
        loss = tf.reduce_mean(tf.square(tf.nn.relu(tf.matmul(x(), weights))), name="loss")
        tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss, name="train")
        tf.compat.v1.global_variables_initializer()

    graph_def = build(fn)
    for chosen in (options("mixed_bfloat16", soc_config="Ascend910B3"),
                   options(v1="allow_fp32_to_bf16", soc_config="Ascend910B3")):
        result = rewrite(graph_def, chosen)
        assert result.report.by_name("MatMul").decision == "bfloat16"
        again = rewrite(result.graph_def, chosen)
        assert again.report.n_casts == 0 and again.graph_def == result.graph_def
        graph = tf.Graph()
        with graph.as_default():
            tf.import_graph_def(result.graph_def, name="")
            with tf.compat.v1.Session(graph=graph) as sess:
                sess.run("init")
                before = sess.run("loss:0", {"x:0": np.ones((4, 4), np.float32)})
                sess.run("train", {"x:0": np.ones((4, 4), np.float32)})
                after = sess.run("loss:0", {"x:0": np.ones((4, 4), np.float32)})
        assert np.isfinite(before) and after < before


def test_a_user_cast_to_the_dtype_its_input_now_holds_needs_no_cast_pair():
    """force_fp16 retypes the Add; the user's own Cast to float16 then reads it as is, not through fp16->fp32."""
    def fn():
        total = tf.add(x(), w(), name="total")
        tf.nn.relu(tf.cast(total, tf.float16, name="user16"), name="relu")

    chosen = options("fp16")
    result = rewrite(build(fn), chosen)
    assert node(result.graph_def, "total").attr["T"].type == FP16
    user16 = node(result.graph_def, "user16")
    assert inputs(result.graph_def, "user16") == ["total"] and user16.attr["SrcT"].type == FP16
    assert "already holds float16" in result.report.by_name("user16").reason
    assert sorted(n.name for n in added_casts(result.graph_def)) == ["w-0-CastToFp16-NpuBridge",
                                                                     "x-0-CastToFp16-NpuBridge"]
    feed = {"x:0": np.full((4, 4), 1 / 3, np.float32)}
    expected = np.maximum((feed["x:0"].astype(np.float16) + np.linspace(-1, 1, 16).astype(np.float16)
                           .reshape(4, 4)), 0)
    np.testing.assert_array_equal(fetch(result, "relu:0", feed), expected)
    again = rewrite(result.graph_def, chosen)
    assert again.graph_def == result.graph_def and again.report.n_casts == 0
