"""`estimator_export`, which TF 1.15's tensorflow.python.util.tf_export had and TensorFlow 2.x dropped.

Ported copies of Estimator code (WideDeep's dnn_linear_combined) decorate their classes with it. It registered a
symbol's public `tf.estimator` names for TensorFlow's API generator, which a script never runs: here it is a
decorator that returns what it decorates unchanged, which tf1compat.python_internals gives TensorFlow's module.
"""


def estimator_export(*api_names, **kwargs):
    """`@estimator_export("estimator.X", v1=[...])`: the decorated class or function, unchanged."""
    def decorate(symbol):
        return symbol

    return decorate
