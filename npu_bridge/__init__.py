"""npu_bridge on CPU: the Ascend TensorFlow adapter's Python API, with the NPU's precision behaviour emulated."""
