"""tf.contrib.image: projective transforms (transform, rotate, translate) on TF's ImageProjectiveTransformV2 op,
the YIQ colour distortions and the dense bilinear warp, as TF 1.15 computed them."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.image import dense_image_warp as _warp_module
from npu_bridge.tf1compat.contrib.image import distort_image_ops, image_ops, python  # noqa: F401
from npu_bridge.tf1compat.contrib.image.distort_image_ops import (  # noqa: F401
    adjust_hsv_in_yiq,
    random_hsv_in_yiq,
)
from npu_bridge.tf1compat.contrib.image.image_ops import (  # noqa: F401
    angles_to_projective_transforms,
    compose_transforms,
    flat_transforms_to_matrices,
    matrices_to_flat_transforms,
    rotate,
    transform,
    translate,
    translations_to_projective_transforms,
)

dense_image_warp = _warp_module.dense_image_warp

__getattr__ = removed.module_getattr(__name__)
