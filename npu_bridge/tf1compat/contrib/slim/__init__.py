"""tf.contrib.slim / `from tensorflow.contrib import slim`: tf-slim, Google's extraction of TF 1.15's contrib.slim.

Everything TF 1.15's slim exported (layers, arg_scope, variables, losses, metrics, learning, evaluation, the data
providers) is tf-slim's; `slim.nets` (alexnet, inception, overfeat, resnet_v1/v2, vgg) loads when first named.
"""
import importlib

from tf_slim import *

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.slim import python  # noqa: F401

_missing = removed.module_getattr(__name__)


def __getattr__(name):
    if name == "nets":
        return importlib.import_module("tf_slim.nets")
    return _missing(name)
