"""tf.contrib.framework.nest: TF's nest, with TF 1.15's names for the functions TF 2 renamed."""
from tensorflow.python.util.nest import *
from tensorflow.python.util.nest import is_nested, is_nested_or_composite

is_sequence = is_nested
is_sequence_or_composite = is_nested_or_composite
