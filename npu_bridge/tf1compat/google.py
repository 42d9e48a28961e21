"""`tensorflow.google`: Google's internal TensorFlow build, never part of the pip package (TF 1.15's neither). Files
copied from Google's repositories (xlnet's preprocess_pretrain_data.py) import it as `tf`; importing it says so and
what the open-source copies import.

An ImportError, so scripts that import it inside `try: ... except ImportError:` take their fallback.
"""
from npu_bridge.tf1compat.removed import user_line

raise ImportError(f"{user_line()}: tensorflow.google is Google's internal build of TensorFlow and was never part of "
                  f"the pip package (TF 1.15's neither): use `import tensorflow as tf` (what the open-source copies of "
                  f"this file import)", name="tensorflow.google")
