"""The precision pass: Ascend mixed-precision rules applied to a TensorFlow GraphDef.

    result = rewrite(graph_def, options)        # options: npu_bridge.core.options.NpuOptions
    result.graph_def                            # the graph to run (caller's GraphDef untouched)
    result.report.summary()                     # "NpuOptimizer mixed_float16: 12/40 ops reduced to float16, 9 casts"
    result.tensor_map["dense/MatMul:0"]         # TensorRef: where that tensor's (rounded) value lives now
"""
from npu_bridge.core.precision.report import OpRecord, Report, RewriteResult, TensorRef
from npu_bridge.core.precision.rewrite import rewrite

__all__ = ["rewrite", "RewriteResult", "Report", "OpRecord", "TensorRef"]
