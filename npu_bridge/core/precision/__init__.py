"""The precision pass: Ascend mixed-precision rules applied to a TensorFlow GraphDef.

    result = rewrite(graph_def, options)        # options: npu_bridge.core.options.NpuOptions
    result.graph_def                            # the graph to run (the caller's GraphDef is never modified)
    result.report.summary()                     # "NpuOptimizer mixed_float16: 12/40 ops reduced to float16, 9 casts"
    result.tensor_map["dense/MatMul:0"]         # TensorRef: where that tensor's (rounded) value lives now

Modules, in the order the pass runs them:
    typeattrs.py  which type attribute (or fixed type) sets each port, from the OpDef registry; CPU kernels
    rules.py      the modes of docs/BEHAVIOUR.md §2-§3 for one attribute; why_between_casts()
    decide.py     topological walk, gray ops following producers, v1 loop back-edge consistency
    casts.py      attribute changes, shared Casts, the tensor map
    report.py     OpRecord per op; Report.summary/table/explain/to_json
    rewrite.py    rewrite(): private copy, error wrapping, logging
    incremental.py  rewrite_increment(): the nodes added to a rewritten graph, with the full rewrite's records

Reading a report when accuracy drops: `report.reduced()` lists every op computing in the reduced dtype;
`report.explain(name)` walks from one of them back through the producers gray ops followed to the op whose
list (white, fallback rule, keep_dtype, customize_dtypes) decided the chain - the entry to change in a
modify_mixlist or customize_dtypes file. Ops marked "float32 between casts" (OpRecord.emulated) run a
float32 kernel on rounded inputs and round their outputs, which is what the NPU computes.
"""
from npu_bridge.core.precision.report import OpRecord, Report, RewriteResult, TensorRef
from npu_bridge.core.precision.rewrite import rewrite

__all__ = ["rewrite", "RewriteResult", "Report", "OpRecord", "TensorRef"]
