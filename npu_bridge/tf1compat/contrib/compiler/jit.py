"""tf.contrib.compiler.jit: experimental_jit_scope as a scope that marks nothing.

TF 1.15's scope set the `_XlaCompile` attributes that ask the XLA JIT to cluster the ops built inside it. An
Ascend NPU compiles its whole graph and has no XLA clusters, so a ported script's scope asks for nothing there,
and on the CPU emulation the ops must stay ordinary TF ops for the precision pass: the scope builds them as they
are, with no attributes added.
"""
import contextlib

from npu_bridge.tf1compat.contrib import removed


@contextlib.contextmanager
def experimental_jit_scope(compile_ops=True, separate_compiled_gradients=False):
    """TF 1.15's signature; the ops built inside are left unmarked (see the module)."""
    yield


__getattr__ = removed.module_getattr(__name__)
