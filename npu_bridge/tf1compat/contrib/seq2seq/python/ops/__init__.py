"""tensorflow.contrib.seq2seq.python.ops: TF 1.15's module paths (decoder, helper, basic_decoder,
beam_search_ops) for the scripts that import them directly."""
