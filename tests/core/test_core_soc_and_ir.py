"""Soc name resolution/capabilities and the TF -> Ascend IR mapping."""
import pytest

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.oplib import load_op_library
from npu_bridge.core.soc import KNOWN_SOCS, resolve_soc, selected_soc, soc_info
from npu_bridge.core.tf_to_ir import CUBE_IR_TYPES, ir_candidates, is_cube, renamed_tf_types, tf_types_for_ir


@pytest.mark.parametrize("spelling, folder", [
    ("Ascend910A", "ascend910"), ("Ascend910ProA", "ascend910"), ("Ascend910ProB", "ascend910"),
    ("Ascend910PremiumA", "ascend910"), ("ascend910", "ascend910"), ("ASCEND910", "ascend910"),
    ("Ascend910B1", "ascend910b"), ("Ascend910B2C", "ascend910b"), ("Ascend910B3", "ascend910b"),
    ("Ascend910B4", "ascend910b"), ("ascend910b", "ascend910b"), ("Ascend910B", "ascend910b"),
    ("Ascend910_9391", "ascend910_93"), ("Ascend910_9372", "ascend910_93"), ("ascend910_93", "ascend910_93"),
    ("Ascend310P3", "ascend310p"), ("Ascend310P1", "ascend310p"), ("ascend310p", "ascend310p"),
    ("Ascend310", "ascend310"), ("Ascend310B1", "ascend310b"), (b"Ascend910A", "ascend910"),
    (" Ascend910B3 ", "ascend910b"),
])
def test_resolve_soc_accepts_cann_versions_and_folder_names(spelling, folder):
    assert resolve_soc(spelling) == folder


def test_unknown_soc_lists_the_known_ones():
    with pytest.raises(NpuConfigError) as info:
        resolve_soc("Ascend920")
    for name in KNOWN_SOCS:
        assert name in str(info.value)
    assert "Ascend920" in str(info.value)


def test_capabilities_per_generation():
    assert soc_info("Ascend910A") == soc_info("ascend910")
    first_gen, a2, a3, inference = (soc_info(n) for n in ("ascend910", "ascend910b", "ascend910_93", "ascend310p"))
    assert (first_gen.supports_bf16, first_gen.saturation_mode) == (False, True)
    assert (a2.supports_bf16, a2.saturation_mode) == (True, False)
    assert (a3.supports_bf16, a3.saturation_mode) == (True, False)
    assert inference.supports_bf16 is False
    assert a2.name == "ascend910b"


def test_selected_soc_order():
    """soc_config, else the default the settings carry ($NPU_BRIDGE_SOC, read at the edge), else ascend910."""
    assert selected_soc(None) == "ascend910"
    assert selected_soc(None, "Ascend910B2") == "ascend910b"
    assert selected_soc("Ascend910ProA", "Ascend910B2") == "ascend910"
    with pytest.raises(NpuConfigError, match="NPU_BRIDGE_SOC"):
        selected_soc(None, "nonsense")


def test_cube_types_are_exactly_the_fe_list():
    assert len(CUBE_IR_TYPES) == 27
    for name in ("MatMulV2", "BatchMatMulV2", "Conv2DBackpropInputD", "DepthwiseConv2DBackpropFilterD",
                 "Conv3DBackpropFilter", "Deconvolution", "GEMM", "FullyConnection", "Conv2DCompress"):
        assert is_cube(name)
    for name in ("MatMulV3", "BatchMatMulV3", "Add", "ReduceSumD", "SoftmaxV2", "matmulv2"):
        assert not is_cube(name)


@pytest.mark.parametrize("tf_type, const_axis, expected", [
    ("MatMul", False, ("MatMulV2", "MatMul")),
    ("BatchMatMul", False, ("BatchMatMul",)),
    ("BatchMatMulV2", False, ("BatchMatMulV2",)),
    ("BatchMatMulV3", False, ("BatchMatMulV3", "BatchMatMulV2")),
    ("Softmax", False, ("SoftmaxV2",)),
    ("LogSoftmax", False, ("LogSoftmaxV2",)),
    ("Sum", True, ("ReduceSumD", "ReduceSum")),
    ("Sum", False, ("ReduceSum", "ReduceSumD")),
    ("Mean", True, ("ReduceMeanD", "ReduceMean")),
    ("Prod", True, ("ReduceProdD", "ReduceProd")),
    ("Max", True, ("ReduceMaxD", "ReduceMax")),
    ("Min", False, ("ReduceMin", "ReduceMinD")),
    ("All", True, ("ReduceAllD", "ReduceAll")),
    ("Any", True, ("ReduceAnyD", "ReduceAny")),
    ("ArgMax", True, ("ArgMaxD", "ArgMaxV2")),
    ("StridedSlice", True, ("StridedSliceD", "StridedSlice")),
    ("GatherV2", True, ("GatherV2D", "GatherV2")),
    ("ConcatV2", True, ("ConcatV2D", "ConcatV2")),
    ("Split", True, ("SplitD", "Split")),
    ("SplitV", True, ("SplitVD", "SplitV")),
    ("Transpose", True, ("TransposeD", "Transpose")),
    ("Pad", True, ("PadD", "Pad")),
    ("Tile", True, ("TileD", "Tile")),
    ("OneHot", True, ("OneHotD", "OneHot")),
    ("Conv2DBackpropInput", True, ("Conv2DBackpropInputD", "Conv2DBackpropInput")),
    ("Conv2DBackpropFilter", True, ("Conv2DBackpropFilterD", "Conv2DBackpropFilter")),
    ("DepthwiseConv2dNative", False, ("DepthwiseConv2D",)),
    ("DepthwiseConv2dNativeBackpropInput", True, ("DepthwiseConv2DBackpropInputD", "DepthwiseConv2DBackpropInput")),
    ("DepthwiseConv2dNativeBackpropFilter", True,
     ("DepthwiseConv2DBackpropFilterD", "DepthwiseConv2DBackpropFilter")),
    ("ApplyAdam", False, ("ApplyAdamD", "ApplyAdam")),
    ("ResourceApplyAdam", False, ("ApplyAdamD", "ApplyAdam")),
    ("ApplyMomentum", False, ("ApplyMomentumD", "ApplyMomentum")),
    ("ResourceApplyMomentum", False, ("ApplyMomentumD", "ApplyMomentum")),
    ("ResourceApplyGradientDescent", False, ("ApplyGradientDescent",)),
    ("AddV2", False, ("Add", "AddV2")),
    ("BiasAddV1", False, ("BiasAdd",)),
    ("ReluGrad", False, ("ReluGrad", "ReluGradV2")),
    ("ResizeBilinear", True, ("ResizeBilinearV2D", "ResizeBilinearV2")),
    ("ResizeNearestNeighbor", False, ("ResizeNearestNeighborV2", "ResizeNearestNeighborV2D")),
    ("ResizeNearestNeighborGrad", True, ("ResizeNearestNeighborV2GradD", "ResizeNearestNeighborV2Grad")),
    ("Relu6", False, ("Relu6", "Relu6D")),
    ("Conv3DBackpropInputV2", True, ("Conv3DBackpropInputD", "Conv3DBackpropInput")),
    ("Conv3DBackpropFilterV2", False, ("Conv3DBackpropFilter", "Conv3DBackpropFilterD")),
    ("ScatterNd", True, ("ScatterNdD", "ScatterNd")),
    ("ResourceStridedSliceAssign", True, ("StridedSliceAssignD", "StridedSliceAssign")),
    ("Cumsum", True, ("CumsumD",)),
    ("UnsortedSegmentSum", True, ("UnsortedSegmentSumD", "UnsortedSegmentSum")),
    ("BiasAdd", False, ("BiasAdd",)),
    ("Cast", False, ("Cast",)),
    ("SomeCustomOp", False, ("SomeCustomOp",)),
])
def test_ir_candidates(tf_type, const_axis, expected):
    assert ir_candidates(tf_type, const_axis) == expected


def test_batch_norm_splits_in_training():
    for tf_type in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
        assert ir_candidates(tf_type) == ("BatchNorm",)
        assert set(ir_candidates(tf_type, is_training=True)) == {"BNTrainingReduce", "BNTrainingUpdate", "BatchNorm"}
    grad = ir_candidates("FusedBatchNormGradV3", is_training=True)
    assert grad[:2] == ("BNTrainingUpdateGrad", "BNTrainingReduceGrad")
    assert ir_candidates("FusedBatchNormGradV3") == ("BatchNormGrad",)


def test_every_candidate_of_a_renamed_op_that_910_has_is_found():
    """Each mapping reaches an op type the real 910 library has (otherwise the mapping is a typo)."""
    library = load_op_library("ascend910")
    missing = [t for t in renamed_tf_types()
               if not any(ir in library.types for ir in ir_candidates(t) + ir_candidates(t, True)
                          + ir_candidates(t, is_training=True))]
    assert missing == []


def test_reverse_map():
    assert tf_types_for_ir("ReduceSumD") == ("Sum",)
    assert "ResourceApplyAdam" in tf_types_for_ir("ApplyAdamD")
    assert "MatMul" in tf_types_for_ir("MatMulV2")
    assert tf_types_for_ir("Relu") == ()


# Ops of a TF training graph that are not AI Core kernels of the 910 TBE library: graph structure, host-side
# shape ops, random ops (AI CPU) and SparseSoftmaxCrossEntropyWithLogits (AI CPU / fused away on the NPU).
NOT_IN_TBE_LIBRARY = {"Const", "NoOp", "Placeholder", "VariableV2", "ExpandDims", "ShapeN", "Shape",
                      "RandomUniform", "SparseSoftmaxCrossEntropyWithLogits"}


def training_graph():
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        images = tf.compat.v1.placeholder(tf.float32, [2, 8, 8, 3])
        labels = tf.compat.v1.placeholder(tf.int32, [2])
        net = tf.nn.conv2d(images, tf.compat.v1.get_variable("w", [3, 3, 3, 4]), strides=1, padding="SAME")
        net, _, _ = tf.compat.v1.nn.fused_batch_norm(net, tf.compat.v1.get_variable("scale", [4]),
                                                     tf.compat.v1.get_variable("offset", [4]), is_training=True)
        net = tf.nn.max_pool2d(tf.nn.relu(net), 2, 2, "VALID")
        net = tf.nn.depthwise_conv2d(net, tf.compat.v1.get_variable("dw", [3, 3, 4, 1]), [1, 1, 1, 1], "SAME")
        net = tf.nn.relu6(tf.reshape(net, [2, -1]))
        dense = tf.compat.v1.get_variable("dense", [64, 5])
        logits = tf.nn.bias_add(tf.matmul(net, dense), tf.compat.v1.get_variable("bias", [5]))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        loss += tf.reduce_sum(tf.nn.log_softmax(logits)) * 0.0 + tf.nn.l2_loss(dense) * 1e-4
        tf.compat.v1.train.AdamOptimizer().minimize(loss)
        tf.compat.v1.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    return graph


def test_every_compute_op_of_a_training_graph_reaches_the_910_library():
    library = load_op_library("ascend910")
    reached = {}
    for node in training_graph().as_graph_def().node:
        is_training = "is_training" in node.attr and node.attr["is_training"].b
        found = [ir for ir in ir_candidates(node.op, True, is_training=is_training) if ir in library.types]
        reached[node.op] = found[0] if found else None
    assert {op for op, ir in reached.items() if ir is None} <= NOT_IN_TBE_LIBRARY
    assert reached["MatMul"] == "MatMulV2" and reached["Mean"] == "ReduceMeanD" and reached["Sum"] == "ReduceSumD"
    assert reached["ApplyAdam"] == "ApplyAdamD" and reached["ApplyMomentum"] == "ApplyMomentumD"
    assert reached["Conv2DBackpropInput"] == "Conv2DBackpropInputD"
    assert reached["DepthwiseConv2dNativeBackpropFilter"] == "DepthwiseConv2DBackpropFilterD"
    assert reached["FusedBatchNormV3"] == "BNTrainingUpdate"
    assert reached["FusedBatchNormGradV3"] == "BNTrainingUpdateGrad"
    assert reached["LogSoftmax"] == "LogSoftmaxV2" and reached["AddV2"] == "Add" and reached["Tile"] == "TileD"
