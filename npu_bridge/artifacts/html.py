"""`npu-report diff --html OUT`: the comparison as one self-contained page for a CI artifact.

No network and no script: the styles are inline and each loss curve is an inline SVG with the baseline and the
new run drawn on one plot, so the page opens the same from a CI artifact store, a mail attachment or a laptop
offline. It shows the verdict first, then per graph what changed (summary lines, failures, the ops whose
decision changed) and the curves.
"""
import html
import math

from npu_bridge.artifacts.diff import change_text

WIDTH, HEIGHT, MARGIN = 640, 220, 48
BASE_COLOUR, NEW_COLOUR = "#1f77b4", "#e4572e"
STYLE = """
body { font: 14px/1.4 sans-serif; margin: 24px; color: #222; }
.verdict { padding: 12px 16px; border-radius: 6px; font-size: 18px; font-weight: bold; }
.failed { background: #fde2de; color: #8a1c0b; } .passed { background: #dff3e2; color: #155724; }
h2 { margin-top: 28px; } table { border-collapse: collapse; margin: 8px 0; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; font-family: monospace; font-size: 12px; }
.fail { color: #8a1c0b; font-weight: bold; } .note { color: #666; } .ok { color: #155724; }
ul { margin: 4px 0; } svg { background: #fafafa; border: 1px solid #ddd; margin: 6px 0; }
"""


def to_html(diffs, verdict, base_label, new_label):
    """The page for `diffs` (diff.compare), `verdict` the CI log's last line."""
    failed = any(d.failed for d in diffs)
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>npu-report diff</title>",
             f"<style>{STYLE}</style></head><body><h1>npu-report diff</h1>",
             f"<p>baseline <code>{_e(base_label)}</code> &rarr; new run <code>{_e(new_label)}</code></p>",
             (f"<div class='verdict {'failed' if failed else 'passed'}'>{'FAILED' if failed else 'PASSED'}: "
              f"{_e(verdict)}</div>")]
    for diff in diffs:
        parts.append(_graph_section(diff))
    parts.append("</body></html>")
    return "\n".join(parts)


def _graph_section(diff):
    state = "<span class='fail'>CHANGED</span>" if diff.failed else "<span class='ok'>ok</span>"
    parts = [f"<h2>{_e(diff.name)}: {state}</h2>"]
    items = [f"<li>{_e(s)}</li>" for s in diff.summaries]
    items += [f"<li class='fail'>FAIL {_e(s)}</li>" for s in diff.failures + diff.curve_failures]
    items += [f"<li class='ok'>ok {_e(s)}</li>" for _, s in diff.curve_checks]
    items += [f"<li class='note'>note {_e(s)}</li>" for s in diff.notes]
    if items:
        parts.append("<ul>" + "".join(items) + "</ul>")
    if diff.changed_ops:
        rows = "".join(
            f"<tr><td class='{'fail' if failing else 'note'}'>{'FAIL' if failing else 'note'}</td><td>{_e(name)}</td>"
            f"<td>{_e(change_text(changes) or 'reason changed')}</td></tr>"
            for name, changes, failing in sorted(diff.changed_ops, key=lambda op: not op[2]))
        parts.append(f"<table><tr><th></th><th>op</th><th>change</th></tr>{rows}</table>")
    base_curves = diff.base.curves if diff.base else {}
    new_curves = diff.new.curves if diff.new else {}
    for key in [*base_curves, *(k for k in new_curves if k not in base_curves)]:
        parts.append(_plot(key, base_curves.get(key, []), new_curves.get(key, [])))
    base_scales = diff.base.loss_scale if diff.base else {}
    new_scales = diff.new.loss_scale if diff.new else {}
    for key in [*base_scales, *(k for k in new_scales if k not in base_scales)]:
        parts.append(_plot(f"loss scale {key} (log2)", _log2(base_scales.get(key, [])),
                           _log2(new_scales.get(key, []))))
    return "\n".join(parts)


def _log2(points):
    return [[step, math.log2(float(value))] for step, value in points if float(value) > 0]


def _finite(points):
    found = []
    for step, value in points:
        number = float(value)
        if math.isfinite(number):
            found.append((step, number))
    return found


def _plot(title, base, new):
    """An SVG line plot of one curve: the baseline and the new run on shared axes, with their ranges labelled."""
    base, new = _finite(base), _finite(new)
    every = base + new
    if not every:
        return f"<p>{_e(title)}: no finite values</p>"
    steps = [s for s, _ in every]
    values = [v for _, v in every]
    x0, x1 = min(steps), max(steps)
    y0, y1 = min(values), max(values)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y0, y1 = y0 - 0.5, y1 + 0.5

    def point(step, value):
        x = MARGIN + (step - x0) / (x1 - x0) * (WIDTH - 2 * MARGIN)
        y = HEIGHT - MARGIN / 2 - (value - y0) / (y1 - y0) * (HEIGHT - MARGIN)
        return f"{x:.1f},{y:.1f}"

    lines = []
    for points, colour, dash in ((base, BASE_COLOUR, ""), (new, NEW_COLOUR, " stroke-dasharray='6 3'")):
        if points:
            lines.append(f"<polyline fill='none' stroke='{colour}' stroke-width='2'{dash} "
                         f"points='{' '.join(point(s, v) for s, v in points)}'/>")
    bottom, right = HEIGHT - MARGIN / 2, WIDTH - MARGIN
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{HEIGHT}' role='img' "
            f"aria-label='{_e(title)}'>"
            f"<text x='{MARGIN}' y='16' font-size='13' font-weight='bold'>{_e(title)}</text>"
            f"<line x1='{MARGIN}' y1='{bottom}' x2='{right}' y2='{bottom}' stroke='#888'/>"
            f"<line x1='{MARGIN}' y1='{MARGIN / 2}' x2='{MARGIN}' y2='{bottom}' stroke='#888'/>"
            f"<text x='{MARGIN - 4}' y='{MARGIN / 2 + 4}' font-size='10' text-anchor='end'>{y1:.4g}</text>"
            f"<text x='{MARGIN - 4}' y='{bottom}' font-size='10' text-anchor='end'>{y0:.4g}</text>"
            f"<text x='{MARGIN}' y='{bottom + 14}' font-size='10'>step {x0}</text>"
            f"<text x='{right}' y='{bottom + 14}' font-size='10' text-anchor='end'>step {x1}</text>"
            f"{''.join(lines)}"
            f"<rect x='{right - 150}' y='8' width='10' height='3' fill='{BASE_COLOUR}'/>"
            f"<text x='{right - 136}' y='13' font-size='11'>baseline</text>"
            f"<rect x='{right - 80}' y='8' width='10' height='3' fill='{NEW_COLOUR}'/>"
            f"<text x='{right - 66}' y='13' font-size='11'>new run</text></svg>")


def _e(text):
    return html.escape(str(text), quote=True)
