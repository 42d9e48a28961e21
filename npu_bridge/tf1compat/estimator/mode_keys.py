"""ModeKeys: the three modes an Estimator calls its model_fn in (the values TF 1.15 uses)."""


class ModeKeys:
    """Standard names for the model_fn's modes."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"
