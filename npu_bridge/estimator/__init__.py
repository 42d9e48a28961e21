"""npu_bridge.estimator: the Ascend adapter's estimator-side API (ops, config, optimizers, loss scaling)."""
