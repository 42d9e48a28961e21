"""npu_bridge.tbe: the adapter's TBE vector and cube op wrappers."""
