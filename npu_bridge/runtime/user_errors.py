"""Errors from the inner session re-raised in the user's terms: user op names, user op, user stack traces.

The pass keeps user node names, so most messages already read right; the nodes it adds
(`<src>-<port>-CastTo...-NpuBridge`, saturation mode's `<src>-<port>-SatFp16[Upper]-NpuBridge`) and the runtime's
fetch casts are replaced by their source op. Where the user's own optimizer list runs grappler's arithmetic
optimizer in the inner session, it moves those casts above value-preserving ops such as a variable's `read` and
renames the op it moved (`wt/ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_float_read`): that name maps
back to `wt/read`, as a plain session would report it.
"""
import re

from npu_bridge import tf_private
from npu_bridge.core.contract import user_names_in

_HEADER = "Graph execution error:"
_REORDERED_CAST = re.compile(r"(/|(?<![^\s'\"{}\[\](),]))ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_"
                             r"(?:float|half|bfloat16|double)_")


def user_name(name):
    """The user op an internal node stands for (the name itself when it is a user node)."""
    return _REORDERED_CAST.sub(r"\1", user_names_in(name))


def translate(error, user_graph):
    """A copy of OpError `error` naming the user's ops of `user_graph` instead of internal nodes.

    Raise it inside the `except` that caught `error` (no `from None`): plain TensorFlow's Session.run shows the raw
    kernel error first (`FailedPreconditionError: Attempting to use uninitialized value v`), then "During handling
    of the above exception, another exception occurred:" and the interpolated "Graph execution error" form, and
    log-grepping jobs read that first line. `error` itself becomes that first error, its message in user names.
    """
    message = user_name(error.message)
    tf_private.set_error_message(error, message)
    if message.startswith(_HEADER):     # partial_run errors come interpolated once already by the inner session
        message = message[len(_HEADER):].lstrip("\n")
    op = None
    match = tf_private.NODEDEF_NAME_RE.search(message)
    if match is not None:
        try:
            op = user_graph.get_operation_by_name(match.group(3))
        except KeyError:
            op = None
    message = tf_private.interpolate_graph(message, user_graph)
    return type(error)(op.node_def if op is not None else None, op, message)


_NAMED_CONSTANT = re.compile(r"^constant '([^']+)'")


def with_source_line(warning, user_graph):
    """A report warning about a constant, with the line of the user's code that built it appended (the first frame
    of the op's creation stack outside TensorFlow and npu_bridge), so a folded mask is found in the script."""
    from npu_bridge.core.options import library_frame

    match = _NAMED_CONSTANT.match(warning)
    if match is None:
        return warning
    try:
        stack = user_graph.get_operation_by_name(match.group(1)).traceback
    except (KeyError, ValueError):
        return warning
    user_frames = [frame for frame in stack or () if not library_frame(frame.filename)]
    if not user_frames:
        return warning
    frame = user_frames[-1]
    return f"{warning}; built at {frame.filename}:{frame.lineno}" + (f": {frame.line.strip()}" if frame.line else "")
