"""Names tf-slim (TF 1.15's contrib code, extracted) still reads from TensorFlow's internal `ops` module.

TensorFlow 2.16 moved `ops.Tensor` to `tensor.Tensor` and `ops.IndexedSlices` to `indexed_slices.IndexedSlices`;
tf-slim's utils.constant_value, optimize_loss and the gradient helpers test isinstance against the old names and
fail with an AttributeError. restore() puts the same classes back under the old names where they are missing
(nothing changes on 2.15, which still has them): two attributes, no import beyond modules TensorFlow has loaded.
"""


def restore():
    from tensorflow.python.framework import indexed_slices, ops, tensor

    for name, module in (("Tensor", tensor), ("IndexedSlices", indexed_slices)):
        if not hasattr(ops, name):
            setattr(ops, name, getattr(module, name))
