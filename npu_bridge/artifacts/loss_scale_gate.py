"""The skipped-step gate of `npu-report diff`: loss scaling must settle and then skip (almost) no step.

Dynamic loss scaling starts high (often 2^32) and skips steps whose gradients overflow until the scale fits;
those first skips are expected. Ascend's guide to a precision baseline asks that, once the scale has settled,
under 0.5% of steps are skipped: more means float16 overflows in the model itself. The scale has settled at the
first step loss scaling applied. A new run fails when its rate after that is above the bound and above the
baseline's (a baseline that already skips as often is not a change), or when no step was ever applied.
"""
DEFAULT_MAX_SKIP_RATE = 0.005


def settled(points, skipped):
    """(settle step, its scale, skipped steps after it, steps from it on) of one loss-scale curve; settle step None
    when every step was skipped."""
    skipped = set(skipped)
    for index, (step, scale) in enumerate(points):
        if step not in skipped:
            later = [s for s, _ in points[index:]]
            return step, float(scale), sum(s in skipped for s in later), len(later)
    return None, None, len(points), len(points)


def _describe(key, stats):
    step, scale, skipped, total = stats
    if step is None:
        return f"loss scale {key}: all {total} loss-scaled steps were skipped (the scale never settled)"
    return (f"loss scale {key}: settled at step {step} (scale {scale:g}), then {skipped} of {total} steps skipped "
            f"({skipped / total:.2%})")


def compare(base, new, max_rate, diff):
    """Add the gate's sentences for GraphArtifacts `base` and `new` to GraphDiff `diff`."""
    for key, points in new.loss_scale.items():
        stats = settled(points, new.skipped_steps.get(key, ()))
        before = settled(base.loss_scale[key], base.skipped_steps.get(key, ())) if key in base.loss_scale else None
        sentence = _describe(key, stats)
        if before is not None:
            sentence += f"; baseline: {_describe(key, before).split(': ', 1)[1]}"
        rate = stats[2] / stats[3] if stats[3] else 0.0
        base_rate = before[2] / before[3] if before and before[3] and before[0] is not None else 0.0
        if stats[0] is None or (rate > max_rate and rate > base_rate):
            diff.curve_failures.append(f"{sentence} (beyond the {max_rate:.1%} of steps Ascend's baseline guide "
                                       "allows once the scale settles)")
        else:
            diff.curve_checks.append((f"loss scale {key}", sentence))
    for key in base.loss_scale:
        if key not in new.loss_scale:
            diff.curve_failures.append(f"loss scale {key}: loss scaling ran in the baseline, not in the new run")
