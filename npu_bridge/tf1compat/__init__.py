"""TF 1.15 compatibility: the modules TF 1.15 scripts import that TensorFlow 2.x removed or moved.

Ported Ascend scripts are TF 1.15 code: `tf.contrib`, `tensorflow.contrib.slim`, Keras 2 module paths, and more.
This room makes those names importable again, each resolved to TF 1.15's API built from what TensorFlow 2.x still
has (or written here where it has nothing). It knows nothing of precision: what it builds are ordinary TF ops, which
the precision pass treats like any others.

The launcher (npu-run) calls install(); tests and other launchers may call it too. It adds one import finder that
answers only for the aliased module names, and imports nothing until a script asks for one of them, so it costs
nothing when unused.

This module holds the tables each area adds its entries to (ALIASES, ALIASES_WHERE_MISSING, USER_CODE_ALIASES,
FALLBACKS, AFTER_IMPORT, MISSING_MODULES) and install(); the import machinery is in `finders` and `loaders`, and what the launcher's
import hook binds for a rerouted `import a.b.c` in `overlay`.
"""
import importlib
import importlib.util
import sys

from npu_bridge.tf1compat import estimator_paths, python_internals
from npu_bridge.tf1compat.finders import AliasFinder, FallbackFinder

# The module name a TF 1.15 script imports -> the module that provides it here. A key covers its submodules too:
# `tensorflow.contrib.layers` resolves to `npu_bridge.tf1compat.contrib.layers`; the longest matching key wins.
ALIASES = {
    "tensorflow.contrib": "npu_bridge.tf1compat.contrib",
    # contrib's deep TF 1.15 paths, each to the module that provides it whole (tf-slim's are TF 1.15's files)
    "tensorflow.contrib.layers.python.layers": "tf_slim.layers",
    "tensorflow.contrib.slim.python.slim": "tf_slim",
    "tensorflow.contrib.slim.nets": "tf_slim.nets",
    "tensorflow.contrib.training.python.training.evaluation": "tf_slim.training.evaluation",
    "tensorflow.contrib.training.python.training.training": "tf_slim.training.training",
    "tensorflow.contrib.training.python.training.hparam": "npu_bridge.tf1compat.contrib.training.hparam",
    "tensorflow.contrib.tpu.python.ops.tpu_ops": "tensorflow.python.tpu.ops.tpu_ops",
    "tensorflow.contrib.image.python.ops": "npu_bridge.tf1compat.contrib.image",
    **{f"tensorflow.contrib.mixed_precision.python.{name}": "npu_bridge.tf1compat.contrib.mixed_precision"
       for name in ("loss_scale_manager", "loss_scale_optimizer")},
    "tensorflow.contrib.saved_model.python": "npu_bridge.tf1compat.contrib.saved_model",
    "tensorflow.contrib.saved_model.python.saved_model": "npu_bridge.tf1compat.contrib.saved_model",
    # contrib's deep paths to modules TensorFlow 2 still has under its own name
    "tensorflow.contrib.framework.python.framework.checkpoint_utils": "tensorflow.python.training.checkpoint_utils",
    "tensorflow.contrib.learn.python.learn.datasets.mnist": "npu_bridge.tf1compat.examples.tutorials.mnist.input_data",
    "tensorflow.contrib.image.ops": "tensorflow.python.ops",       # its gen_image_ops: the kernels TF 2 still has
    "tensorflow.contrib.tpu.proto": "tensorflow.core.protobuf.tpu",
    **{f"tensorflow.contrib.tpu.python.tpu.{name}": f"tensorflow.python.tpu.{name}"      # the last four: 2.15 only
       for name in ("datasets", "tensor_tracer", "tpu", "tpu_feed", "tpu_optimizer", "training_loop",
                    "error_handling", "session_support", "tpu_context", "util")},
    # Huawei's older contrib paths for npu_bridge (its TF 1.15 fork shipped the adapter inside tensorflow.contrib)
    "tensorflow.contrib.hccl": "npu_bridge.hccl",
    "tensorflow.contrib.hccl.python": "npu_bridge.hccl",        # `...hccl.python.ops.hccl_ops` is hccl_ops too
    "tensorflow.contrib.hccl.python.ops": "npu_bridge.hccl",
    "tensorflow.contrib.offline_train": "npu_bridge",
    "tensorflow.contrib.offline_train.python": "npu_bridge.estimator",
    # tf-slim's layers import TF's legacy layers from here; tf_keras ships them one level down
    "tf_keras.legacy_tf_layers": "tf_keras.src.legacy_tf_layers",
    # other module paths TF 1.15 had and TensorFlow 2.x dropped
    "tensorflow_core": "tensorflow",        # where TF 1.15's pip package kept its modules; some scripts import them so
    "tensorflow.examples": "npu_bridge.tf1compat.examples",
    "tensorflow.tools.graph_transforms": "npu_bridge.tf1compat.graph_transforms",
    "tensorflow.google": "npu_bridge.tf1compat.google",
    "tensorflow.python.graph_util": "npu_bridge.tf1compat.graph_util",
    "tensorflow.python.data.experimental.ops.threadpool": "npu_bridge.tf1compat.threadpool",
    "tensorflow.python.distribute.distribution_strategy_context": "npu_bridge.tf1compat.distribution_strategy_context",
    "tensorflow.python.training.distribution_strategy_context": "npu_bridge.tf1compat.distribution_strategy_context",
    "tensorflow.python.training.tracking": "npu_bridge.tf1compat.tracking",
}

# Aliases for modules only some TensorFlow 2.x versions dropped: added by install() where the real one is missing.
ALIASES_WHERE_MISSING = {
    "tensorflow.python.training.training_ops": "tensorflow.python.ops.gen_training_ops",     # gone in 2.16
    "tensorflow.python.tpu.tpu_config": "npu_bridge.tf1compat.contrib.tpu",     # RunConfig, TPUConfig: gone in 2.16
    "tensorflow.python.eager.profiler": "npu_bridge.tf1compat.eager_profiler",     # gone in 2.16
}

# Modules TensorFlow 2.x still has under TF 1.15's name but without TF 1.15's contents. TensorFlow itself imports
# them, so they cannot be aliased for everyone: npu-run's import hook gives the user's code these instead.
USER_CODE_ALIASES = {
    "tensorflow.python.framework.graph_util": "npu_bridge.tf1compat.graph_util",
}

# Stand-ins for modules of the Ascend cloud the ported scripts import, used only when the real module is not
# importable (FallbackFinder).
FALLBACKS = {
    "moxing": "npu_bridge.tf1compat.moxing",
}


def _patch_model_layers(training_module):
    from npu_bridge.tf1compat.removed import patch_model_layers

    patch_model_layers(training_module)


def _accept_tf115_moments(batch_normalization_module):
    from npu_bridge.tf1compat.keras_fixups import accept_tf115_moments

    accept_tf115_moments(batch_normalization_module)


def _name_missing_slim_nets(nets):
    from npu_bridge.tf1compat.contrib import removed

    nets.__getattr__ = removed.module_getattr(nets.__name__, symbol_prefix="contrib.slim.nets")


def _give_keras_version(keras_v1_api):
    from npu_bridge.tf1compat.keras_fixups import give_version

    give_version(keras_v1_api)


# Modules of other libraries that get a TF 1.15 fix-up once they are imported (never imported for it): Keras'
# Model gets a `_layers` that names the script's line (tf1compat.removed); BatchNormalization subclasses with
# TF 1.15's `_moments` keep working and the v1 Keras API has TF 1.15's `keras.__version__` (tf1compat.keras_fixups);
# tf-slim's nets, which are tf.contrib.slim.nets, name a net they lack (cyclegan) with the contrib error.
AFTER_IMPORT = {
    "tf_slim.nets": _name_missing_slim_nets,
    "tf_keras.src.engine.training": _patch_model_layers,
    "keras.src.engine.training": _patch_model_layers,
    "tf_keras.src.layers.normalization.batch_normalization": _accept_tf115_moments,
    "keras.src.layers.normalization.batch_normalization": _accept_tf115_moments,
    "tf_keras.api._v1.keras": _give_keras_version,
    "keras.api._v1.keras": _give_keras_version,
    **python_internals.FIXUPS,      # TF 1.15 attributes of tensorflow.python modules (tf1compat.python_internals)
}


def _contrib_missing(fullname):
    from npu_bridge.tf1compat.contrib import removed

    return removed.missing_module(fullname)


# What an aliased name nothing provides raises instead of Python's bare "No module named ...", by the prefix of the
# name the script imports: the symbol and what to use instead.
MISSING_MODULES = {
    "tensorflow.contrib.": _contrib_missing,
}

_FINDER = AliasFinder(ALIASES, AFTER_IMPORT, MISSING_MODULES)
_FALLBACK_FINDER = FallbackFinder(FALLBACKS)


def install():
    """Make TF 1.15's module names, and the cloud stand-ins, importable in this process (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
        for name, patch in AFTER_IMPORT.items():      # imported before install(): fix it up now
            if name in sys.modules:
                patch(sys.modules[name])
    if _FALLBACK_FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FALLBACK_FINDER)
    estimator_paths.install(ALIASES, MISSING_MODULES)
    for name, target in ALIASES_WHERE_MISSING.items():
        if name not in ALIASES and _is_missing(name):
            ALIASES[name] = target
    if "tensorflow" in sys.modules:     # the launcher imports TensorFlow first; then tf.compat.v1.contrib resolves
        importlib.import_module("npu_bridge.tf1compat.contrib").attach(sys.modules["tensorflow"])


def _is_missing(name):
    """Whether this TensorFlow lacks module `name` (looked up without importing it; asked before its alias exists)."""
    try:
        return importlib.util.find_spec(name) is None
    except ModuleNotFoundError:
        return True

