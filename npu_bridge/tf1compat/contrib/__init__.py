"""`tensorflow.contrib` / `tf.contrib` as TF 1.15 had it, for the symbols ported scripts use.

Each submodule mirrors the tf.contrib module of the same name, built on tf-slim (Google's extraction of
contrib.slim, contrib.layers and contrib.framework), on the functions TensorFlow 2 kept under new names
(tf.data.experimental, tf.compat.v1.nn.rnn_cell, ...) and on code of our own where TF 2 has nothing (HParams, the
TPU names on a CPU-only path). Submodules are imported when first named (`tf.contrib.layers`), so a script that
uses no contrib pays nothing. A name this package does not provide raises removed.ContribRemovedError naming the
symbol and its TF 2 replacement.
"""
import importlib
import sys

from npu_bridge.tf1compat.contrib import moved_names, removed

SUBMODULES = (
    "all_reduce", "cloud", "cluster_resolver", "compiler", "crf", "ctc", "cudnn_rnn", "data", "distribute",
    "distributions", "eager", "estimator", "framework", "graph_editor", "image", "keras", "layers", "learn", "legacy_seq2seq", "lookup",
    "losses", "metrics", "mixed_precision", "nn", "opt", "quantize", "recurrent", "rnn", "seq2seq", "signal", "slim",
    "sparsemax", "staging", "stateless", "summary", "tensorrt", "tfprof", "tpu", "training", "util",
)

# contrib names that are other packages' modules under Huawei's older paths (tf1compat.ALIASES maps them)
ALIASED_SUBMODULES = ("hccl", "offline_train")

_missing = removed.module_getattr(__name__)
moved_names.restore()
removed.keep_module_paths(__name__, ALIASED_SUBMODULES)


def __getattr__(name):
    if name in SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ALIASED_SUBMODULES:      # npu_bridge's modules, reached by attribute along Huawei's older names
        return removed.ModulePath(f"tensorflow.contrib.{name}")
    return _missing(name)


def __dir__():
    return sorted(set(globals()) | set(SUBMODULES))


def attach(tensorflow):
    """Make `tf.compat.v1.contrib` this package, as TF 1.15's `tf.contrib` was: on tf.compat.v1 and on every
    other compat.v1 view TensorFlow has loaded (`tf.compat.v1.compat.v1`, ...), so the launcher's TF1 `tf`, which
    reads its names from tf.compat.v1, resolves `tf.contrib` and `tf.compat.v1.contrib` alike. Cheap: submodules
    load when named."""
    package = importlib.import_module(__name__)
    views = [module for name, module in list(sys.modules.items())
             if name.startswith("tensorflow") and name.endswith("compat.v1")]
    for view in (tensorflow.compat.v1, *views):
        view.contrib = package
