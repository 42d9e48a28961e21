"""TensorFlow op type -> the Ascend IR op type(s) the real graph engine turns it into.

Black/white/gray lists, modify_mixlist and customize_dtypes all speak Ascend IR names (MatMulV2, ReduceSumD,
SoftmaxV2), not TensorFlow names. The real TF parser plugins register one IR type per TF type
(REGISTER_CUSTOM_OP(ir).OriginOpType(tf), docs/BEHAVIOUR.md §3); older CANN then replaced an op whose "axis"
style input is a Const with a "...D" type that carries the value as an attribute (ReduceSumD, TransposeD,
ConcatV2D). Which of the two a graph gets depends on the library: a soc library that lacks the preferred one
has the other. So we give candidates in preference order and let the caller take the first one the library
knows:

    ir_candidates("Sum", const_axis=True)  -> ("ReduceSumD", "ReduceSum")
    ir_candidates("Sum")                   -> ("ReduceSum", "ReduceSumD")

Training-mode FusedBatchNorm* is split by the real engine into BNTrainingReduce + BNTrainingUpdate (and its
gradient into BNTrainingReduceGrad + BNTrainingUpdateGrad); with is_training=True those parts come first.
Unmapped TF types are their own IR type.
"""

from functools import lru_cache

# The matrix ("cube") ops of the fusion engine's fe.ini fp16.op_type list (docs/BEHAVIOUR.md §2).
CUBE_IR_TYPES = frozenset({
    "MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2",
    "Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropFilterD", "Conv2DBackpropInput", "Conv2DBackpropInputD",
    "Conv2DTranspose", "Conv2DTransposeD",
    "DepthwiseConv2D", "DepthwiseConv2DBackpropFilter", "DepthwiseConv2DBackpropFilterD",
    "DepthwiseConv2DBackpropInput", "DepthwiseConv2DBackpropInputD",
    "Conv2DCompress", "FullyConnection", "GEMM",
    "Conv3D", "Conv3DBackpropInput", "Conv3DBackpropInputD", "Conv3DTranspose", "Conv3DTransposeD",
    "Conv3DBackpropFilter", "Conv3DBackpropFilterD", "Deconvolution",
})

# TF type -> IR types, fixed order (the first is what the TF parser registers).
_RENAMED = {
    "MatMul": ("MatMulV2", "MatMul"),
    "BatchMatMulV3": ("BatchMatMulV3", "BatchMatMulV2"),
    "Softmax": ("SoftmaxV2",),
    "LogSoftmax": ("LogSoftmaxV2",),
    "AddV2": ("Add", "AddV2"),
    "BiasAddV1": ("BiasAdd",),
    "ReluGrad": ("ReluGrad", "ReluGradV2"),
    "DepthwiseConv2dNative": ("DepthwiseConv2D",),
    "ResizeBilinearGrad": ("ResizeBilinearV2Grad",),
    "TopKV2": ("TopKV2D", "TopKD"),
    "TopK": ("TopKD",),
    "InTopKV2": ("InTopKD",),
    "InTopK": ("InTopKD",),
    "Range": ("RangeD",),
    "MatrixDiag": ("MatrixDiagD",),
    "MatrixDiagPart": ("MatrixDiagPartD",),
    "MatrixSetDiag": ("MatrixSetDiagD",),
    "Diag": ("DiagD",),
    "DiagPart": ("DiagPartD",),
    "Cumsum": ("CumsumD",),
    "Cumprod": ("CumprodD",),
    "CumulativeLogsumexp": ("CumulativeLogsumexpD",),
    "LinSpace": ("LinSpaceD",),
    "Relu6": ("Relu6", "Relu6D"),
    "AvgPool3D": ("AvgPool3DD",),
    "MaxPool3DGradGrad": ("MaxPool3DGradGradD",),
    "HistogramFixedWidth": ("HistogramFixedWidthD",),
    "CropAndResize": ("CropAndResizeD",),
    "BlockLSTM": ("DynamicRNN",),           # what npu_dynamic_rnn.DynamicRNN builds for the NPU's DynamicRNN
    "RefEnter": ("Enter",),
    "RefNextIteration": ("NextIteration",),
}

# HCCL collectives as npu_bridge.distributed builds them from TensorFlow's collective ops -> the HCCL IR type
# (hccl_ops.reduce and reduce_scatter run as an all-reduce, send / receive as a two-rank broadcast).
HCCL_IR_TYPES = {
    "CollectiveReduceV2": "HcomAllReduce",
    "CollectiveGatherV2": "HcomAllGather",
    "CollectiveBcastSendV2": "HcomBroadcast",
    "CollectiveBcastRecvV2": "HcomBroadcast",
}

# TF type -> IR base name whose "...D" variant exists for a constant axis/shape/paddings input.
_CONST_INPUT_VARIANTS = {
    "Sum": "ReduceSum", "Mean": "ReduceMean", "Prod": "ReduceProd", "Max": "ReduceMax", "Min": "ReduceMin",
    "All": "ReduceAll", "Any": "ReduceAny", "EuclideanNorm": "EuclideanNorm",
    "ArgMax": "ArgMaxV2", "ArgMin": "ArgMin",
    "StridedSlice": "StridedSlice", "StridedSliceGrad": "StridedSliceGrad", "Slice": "Slice",
    "GatherV2": "GatherV2", "ConcatV2": "ConcatV2", "Concat": "Concat",
    "Split": "Split", "SplitV": "SplitV",
    "Transpose": "Transpose", "Pad": "Pad", "PadV2": "PadV2", "Tile": "Tile", "OneHot": "OneHot",
    "Fill": "Fill", "BroadcastTo": "BroadcastTo", "ReverseV2": "ReverseV2",
    "Conv2DBackpropInput": "Conv2DBackpropInput", "Conv2DBackpropFilter": "Conv2DBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput": "DepthwiseConv2DBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter": "DepthwiseConv2DBackpropFilter",
    "Conv3DBackpropInputV2": "Conv3DBackpropInput", "Conv3DBackpropFilterV2": "Conv3DBackpropFilter",
    "AvgPoolGrad": "AvgPoolGrad", "AvgPool3DGrad": "AvgPool3DGrad", "ScatterNd": "ScatterNd",
    "StridedSliceAssign": "StridedSliceAssign", "ResourceStridedSliceAssign": "StridedSliceAssign",
    "InplaceUpdate": "InplaceUpdate", "InplaceAdd": "InplaceAdd", "InplaceSub": "InplaceSub",
    "BatchToSpaceND": "BatchToSpaceND", "SpaceToBatchND": "SpaceToBatchND",
    "BatchToSpace": "BatchToSpace", "SpaceToBatch": "SpaceToBatch",
    "UnsortedSegmentSum": "UnsortedSegmentSum", "UnsortedSegmentProd": "UnsortedSegmentProd",
    "UnsortedSegmentMax": "UnsortedSegmentMax", "UnsortedSegmentMin": "UnsortedSegmentMin",
    "ResizeBilinear": "ResizeBilinearV2", "ResizeNearestNeighbor": "ResizeNearestNeighborV2",
    "ResizeNearestNeighborGrad": "ResizeNearestNeighborV2Grad",
}

# ArgMax's D form is not "ArgMaxV2D".
_D_NAME = {"ArgMaxV2": "ArgMaxD"}

# Optimizer updates: the 910 library only has the "...D" form (all slots as outputs); newer ones have both.
_APPLY_D = {
    "ApplyAdam": "ApplyAdamD", "ApplyMomentum": "ApplyMomentumD", "ApplyKerasMomentum": "ApplyKerasMomentumD",
    "ApplyAdagrad": "ApplyAdagradD", "ApplyAdagradV2": "ApplyAdagradV2D", "ApplyAdagradDA": "ApplyAdagradDAD",
    "ApplyAdadelta": "ApplyAdadeltaD", "ApplyAdaMax": "ApplyAdaMaxD",
    "ApplyAdamWithAmsgrad": "ApplyAdamWithAmsgradD", "ApplyAddSign": "ApplyAddSignD",
    "ApplyCenteredRMSProp": "ApplyCenteredRMSPropD", "ApplyFtrl": "ApplyFtrlD", "ApplyFtrlV2": "ApplyFtrlV2D",
    "ApplyPowerSign": "ApplyPowerSignD", "ApplyProximalAdagrad": "ApplyProximalAdagradD",
    "ApplyRMSProp": "ApplyRMSPropD",
    "SparseApplyAdadelta": "SparseApplyAdadeltaD", "SparseApplyAdagrad": "SparseApplyAdagradD",
    "SparseApplyAdagradV2": "SparseApplyAdagradV2D", "SparseApplyFtrl": "SparseApplyFtrlD",
    "SparseApplyFtrlV2": "SparseApplyFtrlV2D", "SparseApplyProximalAdagrad": "SparseApplyProximalAdagradD",
    "SparseApplyRMSProp": "SparseApplyRMSPropD",
}
# Updates whose IR type keeps the TF name (no D form): only the resource spelling differs.
_APPLY_SAME = ("ApplyGradientDescent", "ApplyProximalGradientDescent")

_BATCH_NORM = ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
_BATCH_NORM_GRAD = ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3")


def _resource_free(op_type):
    """ResourceApplyAdam -> ApplyAdam: resource-variable updates become the same IR op as ref-variable ones."""
    if op_type.startswith("Resource") and op_type[len("Resource"):] in _APPLY_D.keys() | set(_APPLY_SAME):
        return op_type[len("Resource"):]
    return op_type


# Fusion passes of the graph engine that rename ops before their precision is judged. DreluFusionPass turns a
# Relu and the ReluGrad reading the Relu's output into ReluV2 + ReluGradV2 (the mask form): real mixlists
# black-list ReluV2 and ReluGradV2 for that reason, and ReluGradV2 is white on the 910 while ReluGrad is gray.
RELU_PAIR = {"Relu": ("ReluV2", "Relu"), "ReluGrad": ("ReluGradV2", "ReluGrad")}


def ir_candidates(op_type, const_axis=False, *, is_training=False, relu_pair=False):
    """Ascend IR types for a TF op type, most likely first.

    const_axis: the op's axis/shape-like input is a Const, so the "...D" form is preferred.
    is_training: for FusedBatchNorm* / FusedBatchNormGrad*, the training split comes first.
    relu_pair: a Relu whose output a ReluGrad reads as its features, or that ReluGrad (ReluV2 / ReluGradV2).
    """
    op_type = _resource_free(op_type)
    if relu_pair and op_type in RELU_PAIR:
        return RELU_PAIR[op_type]
    if op_type in _BATCH_NORM:
        return ("BNTrainingUpdate", "BNTrainingReduce", "BatchNorm") if is_training else ("BatchNorm",)
    if op_type in _BATCH_NORM_GRAD:
        if is_training:
            return ("BNTrainingUpdateGrad", "BNTrainingReduceGrad", "BatchNormGrad")
        return ("BatchNormGrad",)
    if op_type in _APPLY_D:
        return (_APPLY_D[op_type], op_type)
    if op_type in _CONST_INPUT_VARIANTS:
        base = _CONST_INPUT_VARIANTS[op_type]
        with_d = _D_NAME.get(base, base + "D")
        return (with_d, base) if const_axis else (base, with_d)
    if op_type in HCCL_IR_TYPES:
        return (HCCL_IR_TYPES[op_type],)
    return _RENAMED.get(op_type, (op_type,))


def is_cube(ir_type):
    return ir_type in CUBE_IR_TYPES


def _reverse_map():
    reverse = {}
    tf_types = [*_RENAMED, *_CONST_INPUT_VARIANTS, *_APPLY_D, *_BATCH_NORM, *_BATCH_NORM_GRAD]
    tf_types += ["Resource" + name for name in (*_APPLY_D, *_APPLY_SAME)]
    for tf_type in tf_types:
        for ir in {*ir_candidates(tf_type), *ir_candidates(tf_type, True), *ir_candidates(tf_type, is_training=True)}:
            if ir != tf_type:
                reverse.setdefault(ir, set()).add(tf_type)
    return {ir: tuple(sorted(names)) for ir, names in reverse.items()}


_TF_TYPES_FOR_IR = _reverse_map()


def tf_types_for_ir(ir_type):
    """TF op types (other than ir_type itself) that become this IR type, e.g. "ReduceSumD" -> ("Sum",)."""
    return _TF_TYPES_FOR_IR.get(ir_type, ())


@lru_cache(maxsize=None)
def reachable_ir_types():
    """Every IR type that some registered TensorFlow op becomes here. A list entry naming another library type
    (LayerNorm, made on the NPU by a fusion pass from several TF ops) acts on no op of an emulated graph."""
    import tensorflow as tf

    found = set()
    for op_type in dir(tf.raw_ops):
        if not op_type.startswith("_"):
            for flags in ({}, {"const_axis": True}, {"is_training": True}, {"relu_pair": True}):
                found.update(ir_candidates(op_type, **flags))
    return frozenset(found)


def renamed_tf_types():
    """Every TF op type whose preferred IR type is not its own name (for "you named a TF op" warnings)."""
    return frozenset(t for t in (*_RENAMED, *_CONST_INPUT_VARIANTS, *_APPLY_D, *_BATCH_NORM, *_BATCH_NORM_GRAD)
                     if ir_candidates(t)[0] != t)
