"""tensorflow.contrib.tpu.python: TF 1.15's package path (tpu, ops)."""
