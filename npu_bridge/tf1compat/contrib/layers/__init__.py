"""tf.contrib.layers: TF 1.15's layers, initializers, regularizers, summaries and optimize_loss, from tf-slim.

tf-slim's layers are TF 1.15's contrib/layers/python/layers files, extracted: the same variable names
(`weights`, `biases`, `BatchNorm/moving_mean`, `LayerNorm/beta`), collections and defaults, built from the same
ordinary TF ops (FusedBatchNormV3, Mean/SquaredDifference/Rsqrt for layer_norm), so TF 1.15 checkpoints restore
and the precision pass sees the graphs TF 1.15 built.
"""
from tf_slim.layers import *
from tf_slim.layers import (  # noqa: F401  (the submodules TF 1.15 scripts reach through tf.contrib.layers)
    initializers,
    layers,
    normalization,
    optimizers,
    regularizers,
    summaries,
    utils,
)
from tf_slim.layers.optimizers import OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES  # noqa: F401

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.layers import python  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
