"""Which tensors of a user graph say a step's loss scale and whether loss scaling skipped it, for the run record.

The loss-scale managers (estimator/npu/npu_loss_scale_manager.py) register, when NPULossScaleOptimizer builds
their update, the scale (its value once a step ran, as a script logging it after sess.run sees it), the "every
gradient finite" flag the update reads and the update op. The artifact writer fetches the first two in every
step that runs the update, so run.json holds the scale curve and the skipped steps without the script fetching
anything. Registering adds no op to the graph (a new op would move
the per-op report and fail every existing baseline).
"""
import weakref
from dataclasses import dataclass

_by_graph = weakref.WeakKeyDictionary()    # tf.Graph -> [LossScaling]


@dataclass(frozen=True)
class LossScaling:
    name: str           # the manager's scale tensor as scripts fetch it ("loss_scale:0"): the record's key
    scale: str          # tensor holding the scale once the step ran (the variable, as scripts fetch and log it)
    finite: str         # boolean tensor: no gradient overflowed (False: the step is skipped)
    update: str         # the op updating the scale; a step runs loss scaling when it runs this op


def register(graph, name, scale, finite, update):
    _by_graph.setdefault(graph, []).append(LossScaling(name, scale, finite, update))


def run_by(graph, fetches):
    """The LossScalings whose update op the user fetches `fetches` (tensors and ops) run, in registration order."""
    registered = _by_graph.get(graph)
    if not registered:
        return ()
    updates = {entry.update for entry in registered}
    found, seen = set(), set()
    pending = [fetch if hasattr(fetch, "control_inputs") else fetch.op for fetch in fetches]
    while pending and len(found) < len(updates):
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.name in updates:
            found.add(op.name)
        pending.extend(tensor.op for tensor in op.inputs)
        pending.extend(op.control_inputs)
    return tuple(entry for entry in registered if entry.update in found)
