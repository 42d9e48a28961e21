"""tensorflow.contrib.seq2seq.python.ops.beam_search_decoder: TF 1.15's module path. tile_batch, gather_tree and
BeamSearchDecoder with its state and output tuples, which ports take from it, are here; the rest raise the contrib
error naming tensorflow_addons.seq2seq."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.seq2seq import tile_batch  # noqa: F401
from npu_bridge.tf1compat.contrib.seq2seq.beam_search_decoder import (  # noqa: F401
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput,
)
from npu_bridge.tf1compat.contrib.seq2seq.beam_search_ops import gather_tree  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
