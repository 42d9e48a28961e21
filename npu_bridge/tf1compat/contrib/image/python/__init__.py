"""tensorflow.contrib.image.python: TF 1.15's package path; its `ops` (image_ops, distort_image_ops) is
tf.contrib.image itself."""
from npu_bridge.tf1compat.contrib import image as ops  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
