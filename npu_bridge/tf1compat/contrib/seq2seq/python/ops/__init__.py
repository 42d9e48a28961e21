"""tensorflow.contrib.seq2seq.python.ops: TF 1.15's module paths (decoder, helper, basic_decoder,
beam_search_ops, loss; attention_wrapper and beam_search_decoder import, their attention and beam search classes
raising the contrib error) for the scripts that import them directly."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
