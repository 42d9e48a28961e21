"""The Ascend custom ops the real adapter registers with TensorFlow, built here from ordinary TensorFlow ops.

On the NPU these are single fused kernels (AdamApplyOneAssign, LambApplyOptimizerAssign, DropOutGenMask,
DynamicGruV2, ...). Here each one is its documented rule written with TensorFlow's own ops, so the graph runs on a
CPU and the precision pass sees ordinary ops it already knows how to retype. `gen_npu_ops` gathers them under the
snake_case names of the adapter's generated op module (what `helper.get_gen_ops()` returns on the NPU); the public
faces (npu_ops, npu_aicore_ops, tbe.npu_vector_ops, npu_cpu.npu_cpu_ops) wrap them with the adapter's signatures.
"""
