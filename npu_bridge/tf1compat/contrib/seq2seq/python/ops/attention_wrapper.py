"""tensorflow.contrib.seq2seq.python.ops.attention_wrapper: TF 1.15's module path (NMT_ID0512's beam search
decoder imports it). The module imports; its names (AttentionWrapper, AttentionWrapperState, BahdanauAttention,
LuongAttention, ...) are not provided and raise the contrib error naming tensorflow_addons.seq2seq."""
from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
