"""npu_bridge.estimator.npu: RunConfig, Estimator, optimizers, loss scaling, scopes and helpers of the real adapter."""
