"""npu_bridge.helper: `helper.get_gen_ops()`, the adapter's generated op module."""
