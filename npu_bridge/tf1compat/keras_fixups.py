"""TF 1.15 Keras names that ported code relies on and tf_keras now lacks or calls differently.

Scripts print or compare `keras.__version__` (`import keras` under npu-run is the v1 Keras 2 API, and TF 1.15's
tf.keras had a `__version__` too); the v1 API module has none: `give_version` sets the package's.

EfficientNet-family ports (TPU code kept for the NPU) subclass BatchNormalization and override
`_moments(self, inputs, reduction_axes, keep_dims)`, TF 1.15's signature; tf_keras calls it with a `mask` keyword
too, so the subclass fails with "got an unexpected keyword argument 'mask'". A subclass defining `_moments`
without `mask` gets it wrapped to TF 1.15's call: the override runs as written (a mask, which TF 1.15 had no
notion of, is an error naming the class).
"""
import functools
import importlib
import inspect


def give_version(keras_v1_api):
    """`__version__` on the v1 Keras API module (tf_keras.api._v1.keras, keras.api._v1.keras): its package's."""
    if not hasattr(keras_v1_api, "__version__"):
        keras_v1_api.__version__ = importlib.import_module(keras_v1_api.__name__.split(".")[0]).__version__


def accept_tf115_moments(batch_normalization_module):
    """From now on, BatchNormalization subclasses defining TF 1.15's `_moments` get tf_keras's call adapted."""
    base = getattr(batch_normalization_module, "BatchNormalizationBase", None)
    if base is None:        # Keras 3's module of the same name: not TF 1.15's Keras, nothing to adapt
        return
    inherited = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if inherited is not None:
            inherited.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        moments = cls.__dict__.get("_moments")
        if moments is not None and "mask" not in inspect.signature(moments).parameters:
            cls._moments = _without_mask(cls.__name__, moments)

    base.__init_subclass__ = classmethod(__init_subclass__)


def _without_mask(class_name, moments):
    @functools.wraps(moments)
    def _moments(self, inputs, reduction_axes, keep_dims, mask=None):
        if mask is not None:
            raise ValueError(f"{class_name}._moments has TF 1.15's signature (inputs, reduction_axes, keep_dims) and "
                             "cannot take the mask tf_keras passes: add a `mask=None` parameter to it")
        return moments(self, inputs, reduction_axes, keep_dims)

    return _moments
