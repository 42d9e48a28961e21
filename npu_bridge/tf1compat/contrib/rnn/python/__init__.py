"""TF 1.15's deep module path of contrib.rnn, which ported seq2seq and NAS scripts import directly."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
