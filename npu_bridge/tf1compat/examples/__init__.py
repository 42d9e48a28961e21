"""TF 1.15's `tensorflow.examples`: only what ported scripts import from it, `tutorials.mnist.input_data`."""
