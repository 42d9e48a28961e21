"""tf.contrib.quantize: a clear error, not a rewrite.

TF 1.15's create_training_graph / create_eval_graph rewrote the graph in place: they matched conv / matmul +
batch-norm patterns, folded the batch norm into the weights and inserted FakeQuantWithMinMaxVars ops with moving
min/max variables under `<layer>/weights_quant/` and `<layer>/act_quant/`. The fake-quant ops exist in TF 2, but
the pattern matcher and folding do not, and a partial rewrite would give checkpoints and accuracy that silently
differ from TF 1.15's. So the module imports (scripts that only call it behind a --quantize flag run) and each
rewrite raises ContribRemovedError naming tensorflow_model_optimization's quantization-aware training.
python.graph_matcher, the pattern matcher itself, is provided: the object-detection exporter imports it to find
and replace ops on its own.
"""
from npu_bridge.tf1compat.contrib import removed


def _rewrite(name):
    def rewrite(*args, **kwargs):
        raise removed.error(f"contrib.quantize.{name}")

    rewrite.__name__ = name
    rewrite.__doc__ = f"TF 1.15's quantize.{name} graph rewrite: raises ContribRemovedError (see the module)."
    return rewrite


create_training_graph = _rewrite("create_training_graph")
create_eval_graph = _rewrite("create_eval_graph")
experimental_create_training_graph = _rewrite("experimental_create_training_graph")
experimental_create_eval_graph = _rewrite("experimental_create_eval_graph")

__getattr__ = removed.module_getattr(__name__)
