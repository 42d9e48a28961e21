"""Which graphs and steps `npu-debug compare` looks at, and how it names them.

A real script runs several graphs (plans: fetch-and-feed signatures) in one process: a feature extraction
run once, the training step, `.eval()` calls of a loss. What the user means is the graph that trains (it runs
an optimizer's update), at the steps where the problem shows, which need not be step 0. Without `--steps`
compare scans: it compares the first `bound` applied steps of each graph that trains and the first
OTHER_GRAPH_STEPS of every other graph running reduced ops, and stops a graph's scan at the first step where
an op breaks accuracy. Steps loss scaling skipped are not judged and do not count (up to SKIPPED_LIMIT of
them: from 2^32 a dynamic scale skips about a hundred). With `--steps` exactly those steps of every graph are
compared. The script is stopped once a training graph's scan is over (unless --run-to-end).
"""
import re
from dataclasses import dataclass, field

DEFAULT_SCAN = 20
OTHER_GRAPH_STEPS = 2
SKIPPED_LIMIT = 500


def step_ranges(steps):
    """[0, 1, 2, 5] -> '0-2, 5'."""
    steps = sorted(steps)
    parts, start = [], None
    for index, step in enumerate(steps):
        if start is None:
            start = step
        if index + 1 == len(steps) or steps[index + 1] != step + 1:
            parts.append(str(start) if start == step else f"{start}-{step}")
            start = None
    return ", ".join(parts)


def _word(fetches):
    """A file-name word for a graph from its first fetch: 'vgg/conv1/Relu:0' -> 'Relu'."""
    first = fetches[0] if fetches else "nothing"
    return re.sub(r"[^A-Za-z0-9_]+", "_", first.split(":")[0].rsplit("/", 1)[-1]).strip("_") or "op"


@dataclass
class GraphScan:
    """What compare did with one graph: its name in words, the steps compared and skipped, the verdict."""
    name: str
    trains: bool
    fetches: list
    bound: int
    compared: list = field(default_factory=list)
    skipped: list = field(default_factory=list)     # (step, loss-scaling message)
    culprit: object = None                          # the StepComparison naming an op breaking accuracy
    last: object = None                             # the last StepComparison
    done: bool = False

    def describe(self):
        role = "the training graph" if self.trains else f"graph {self.name.split('_')[0][5:]}"
        seen = f"steps {step_ranges(self.compared)} compared" if self.compared else "no step compared"
        if self.skipped:
            seen += f", steps {step_ranges(s for s, _ in self.skipped)} skipped by loss scaling"
            ends = [self.skipped[0][1]] + ([self.skipped[-1][1]] if len(self.skipped) > 1 else [])
            seen += f" ({'; '.join(ends)})"
        return f"{role} ({self.name}, fetches {', '.join(self.fetches) or '-'}): {seen}"


class Scan:
    """The step chooser CompareObserver asks before each step, and the per-graph bookkeeping.

    steps: the step numbers --steps names (every graph), or None to scan (`bound` applied steps of a graph that
    trains, OTHER_GRAPH_STEPS of the others, each graph until an op breaks accuracy).
    """

    def __init__(self, bound=DEFAULT_SCAN, steps=None):
        self.bound = bound
        self.steps = steps
        self.graphs = {}            # plan signature -> GraphScan, in the order graphs first ran
        self._counts = {True: 0, False: 0}

    def graph(self, signature, trains, fetches):
        scan = self.graphs.get(signature)
        if scan is None:
            self._counts[trains] += 1
            count = self._counts[trains]
            if trains:
                name = "training" if count == 1 else f"training{count}"
            else:
                name = f"graph{count}_fetching_{_word(fetches)}"
            bound = self.bound if trains else min(self.bound, OTHER_GRAPH_STEPS)
            scan = self.graphs[signature] = GraphScan(name, trains, list(fetches), bound)
        return scan

    def __call__(self, step_graph, plan, step):
        fetches = [f.name for f in plan.mapper.unique_fetches()]
        scan = self.graph(plan.signature, step_graph.trains, fetches)
        if self.steps is not None:
            return step in self.steps
        return not scan.done

    def compared(self, comparison):
        """Book a comparison; True when it ends its graph's scan."""
        scan = self.graph(comparison.signature, comparison.trains, comparison.fetches)
        scan.compared.append(comparison.step)
        scan.last = comparison
        if comparison.culprit is not None and scan.culprit is None:
            scan.culprit = comparison
        if self.steps is not None:
            scan.done = comparison.step >= max(self.steps)
        else:
            scan.done = scan.culprit is not None or len(scan.compared) >= scan.bound
        return scan.done

    def skipped(self, comparison):
        """Book a step loss scaling skipped; True when it ends its graph's scan (SKIPPED_LIMIT reached)."""
        scan = self.graph(comparison.signature, comparison.trains, comparison.fetches)
        scan.skipped.append((comparison.step, comparison.skipped))
        if len(scan.skipped) >= SKIPPED_LIMIT:
            scan.done = True
        return scan.done

    def training_done(self):
        """Is a training graph's scan over (the script can stop)?"""
        return any(scan.trains and scan.done for scan in self.graphs.values())
