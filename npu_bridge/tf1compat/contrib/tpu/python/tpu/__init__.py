"""tensorflow.contrib.tpu.python.tpu: TF 1.15's modules of that path, on the CPU-only names of contrib.tpu."""
