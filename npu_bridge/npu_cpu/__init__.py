"""npu_bridge.npu_cpu: the adapter's AI CPU ops."""
