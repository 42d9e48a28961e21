"""tf.contrib.compiler: XLA's graph markers (xla.compile, xla.estimator_model_fn, jit.experimental_jit_scope) on
the CPU path, where they build ordinary ops; see each module for why."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.compiler import jit, xla  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
