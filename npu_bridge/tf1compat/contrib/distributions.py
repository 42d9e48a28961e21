"""tf.contrib.distributions: the distributions TF 1.15 moved to tf.distributions, which tf.compat.v1 keeps
(tensorflow_probability has the rest)."""
from tensorflow.python.ops.distributions.bernoulli import Bernoulli  # noqa: F401
from tensorflow.python.ops.distributions.beta import Beta  # noqa: F401
from tensorflow.python.ops.distributions.categorical import Categorical  # noqa: F401
from tensorflow.python.ops.distributions.dirichlet import Dirichlet  # noqa: F401
from tensorflow.python.ops.distributions.distribution import (  # noqa: F401
    Distribution,
    ReparameterizationType,
)
from tensorflow.python.ops.distributions.exponential import Exponential  # noqa: F401
from tensorflow.python.ops.distributions.gamma import Gamma  # noqa: F401
from tensorflow.python.ops.distributions.kullback_leibler import kl_divergence  # noqa: F401
from tensorflow.python.ops.distributions.laplace import Laplace  # noqa: F401
from tensorflow.python.ops.distributions.multinomial import Multinomial  # noqa: F401
from tensorflow.python.ops.distributions.normal import Normal  # noqa: F401
from tensorflow.python.ops.distributions.student_t import StudentT  # noqa: F401
from tensorflow.python.ops.distributions.uniform import Uniform  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
