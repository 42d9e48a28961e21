"""TF 1.15's `distribution_strategy_context` (under tensorflow.python.distribute and tensorflow.python.training).

Ported optimizers and BERT-family code ask it for the current strategy or replica context. TensorFlow 2.x moved
these functions into `tensorflow.python.distribute.distribute_lib`; these are the same functions.
"""
from tensorflow.python.distribute import distribute_lib as _distribute_lib

get_strategy = _distribute_lib.get_strategy
has_strategy = _distribute_lib.has_strategy
get_replica_context = _distribute_lib.get_replica_context
get_cross_replica_context = _distribute_lib.get_cross_replica_context
in_cross_replica_context = _distribute_lib.in_cross_replica_context
experimental_set_strategy = _distribute_lib.experimental_set_strategy
# TF 1.15's older names for the same two functions
get_distribution_strategy = get_strategy
has_distribution_strategy = has_strategy
