"""Benchmarks of npu_bridge against plain TensorFlow and its auto_mixed_precision_cpu pass (see README.md)."""
