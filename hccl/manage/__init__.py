"""Group management of the CANN hccl package (npu_bridge.hccl.rank)."""
