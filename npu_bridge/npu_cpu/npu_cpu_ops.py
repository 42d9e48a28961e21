"""`from npu_bridge.npu_cpu import npu_cpu_ops`: the adapter's AI CPU ops that have meaning off the device.

randomchoicewithmask (CTPN's anchor sampling) is emulated (npu_bridge.emulated_ops.host_ops). The host-memory
embedding ops (embeddingrankid, embedding_local_index) compute addresses into memory that
npu_plugin.malloc_shared_memory reserved on the NPU's host; there is no such memory here, so they raise an error
that says so rather than return addresses nothing can read.
"""
from npu_bridge.emulated_ops import gen_npu_ops


def randomchoicewithmask(x, count, seed=0, seed2=0):
    """(y, mask): `count` random coordinates of x's True elements, and which rows are real."""
    return gen_npu_ops.random_choice_with_mask(x, count, seed, seed2)


def _host_embedding_unavailable(op_name):
    raise NotImplementedError(
        f"npu_cpu_ops.{op_name}: the host-memory embedding ops address memory reserved by "
        "npu_plugin.malloc_shared_memory on the NPU's host, which the CPU emulation does not have; look the "
        "embeddings up with tf.nn.embedding_lookup on a variable instead")


def embeddingrankid(addr_tensor, index, row_memory=320, mode="mod"):
    """Not available off the device (see the module docstring)."""
    _host_embedding_unavailable("embeddingrankid")


def embedding_local_index(addr_tensor, index, row_memory=320, mode="mod"):
    """Not available off the device (see the module docstring)."""
    _host_embedding_unavailable("embedding_local_index")
