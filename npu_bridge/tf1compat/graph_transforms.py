"""TF 1.15's `tensorflow.tools.graph_transforms`: gone from TensorFlow 2.x; importing it says so and what to use.

An ImportError (not a module with missing functions), so scripts that import it inside `try: ... except
ImportError:` take their fallback as they would on a TensorFlow without it.
"""
from npu_bridge.tf1compat.removed import GRAPH_TRANSFORMS, user_line

raise ImportError(f"{user_line()}: {GRAPH_TRANSFORMS}", name="tensorflow.tools.graph_transforms")
