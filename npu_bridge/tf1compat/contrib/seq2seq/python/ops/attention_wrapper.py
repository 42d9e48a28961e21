"""tensorflow.contrib.seq2seq.python.ops.attention_wrapper: TF 1.15's module path (NMT_ID0512's beam search
decoder imports it): AttentionWrapper, AttentionWrapperState, BahdanauAttention, LuongAttention and hardmax; the
monotonic attention names raise the contrib error naming tensorflow_addons.seq2seq."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.seq2seq import hardmax  # noqa: F401
from npu_bridge.tf1compat.contrib.seq2seq.attention_wrapper import (  # noqa: F401
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    LuongAttention,
)

__getattr__ = removed.module_getattr(__name__)
