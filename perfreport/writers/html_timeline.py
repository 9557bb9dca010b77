"""The HTML page's time-axis timeline: GPU busy per (device, stream) over time, the idle split
under each GPU's lanes, the steps marked; zoom, pan and hover (:mod:`.html_timeline_js`).

The data is the report's ``timeline`` (:func:`perfreport.tables.lanes.timeline_lanes`:
one block per GPU event, or blocks merged below a bin of the span when the payload would pass
its cap; the rule is there), embedded as a JSON data block. Colours: each category's fixed
colour (:func:`perfreport.writers.roofline_svg.colour_of`, the chart's).
"""

from __future__ import annotations

import base64
import hashlib

from perfreport.writers import numfmt
from perfreport.writers.html_timeline_js import TIMELINE_SCRIPT
from perfreport.writers.roofline_svg import colour_of
from perfreport.writers.roofline_svg import escape as esc

TIMELINE_HASH = base64.b64encode(hashlib.sha256(TIMELINE_SCRIPT.encode()).digest()).decode()
IDLE_COLOURS = ["#c51b7d", "#a0a0a0", "#dcdcdc"]  # host wait, GPU wait, unknown

STYLE = (
    "<style>#tl{position:relative;width:100%;max-width:1400px;border:1px solid #ccc;user-select:none}"
    "#tl canvas{display:block;width:100%;cursor:grab}"
    "#tl-tip{position:fixed;z-index:9;background:#fffff0;border:1px solid #888;padding:4px 6px;"
    "font-size:12px;white-space:pre;pointer-events:none;max-width:720px;overflow:hidden}"
    ".sw{display:inline-block;width:10px;height:10px;margin:0 3px 0 10px;vertical-align:middle}</style>"
)


def data_json(tl: dict) -> str:
    """The payload as JSON for a ``<script type="application/json">`` block: every ``<``
    written ``\\u003c``, so no text in it can close the element."""
    import orjson

    data = dict(tl, colours=[colour_of(c) for c in tl["cats"]], idle_colours=IDLE_COLOURS)
    return orjson.dumps(data).decode().replace("<", "\\u003c")


def merge_note(tl: dict) -> str:
    """What the page says about how the blocks were made (downsampled or not)."""
    size = f"{tl['bytes'] / 1024:,.0f} KiB"
    if not tl.get("merged"):
        return f"Every one of the {tl['events']:,} GPU events is drawn (data {size})."
    out = (
        f"Downsampled to fit the page: {tl['events']:,} GPU events drawn as {tl['blocks']:,} blocks. On each "
        f"stream, events whose starts fall in one bin of the span / {tl['resolution']:,} = "
        f"{numfmt.time_us(tl['bin_us'])} are merged into one block (shaded by its busy share; its hover gives the "
        f"count, busy time and longest event); busy totals stay exact (data {size})."
    )
    if tl.get("dropped"):
        out += f" Left out to fit: {', '.join(tl['dropped'])} (least busy)."
    return out


def legend(tl: dict) -> str:
    cats = "".join(f'<span class="sw" style="background:{colour_of(c)}"></span>{esc(c)}' for c in tl["cats"])
    idle = "".join(
        f'<span class="sw" style="background:{c}"></span>{esc(k)}' for k, c in zip(tl["kinds"], IDLE_COLOURS)
    )
    return f'<p class="muted">category:{cats}<br>idle rows:{idle}</p>'


def timeline_section(tl) -> str:
    """The section's HTML (a paragraph when the report has no time-axis data)."""
    if tl is None:
        return '<p class="muted">No time axis: this report was not made by analyze from a trace.</p>'
    if not tl:
        return "<p>The trace has no GPU events: no time axis.</p>"
    steps = tl["steps"]
    st = (
        f"{len(steps)} {esc(steps[0]['source'])} step(s) shaded (top row; purple: CPU-bound)"
        if steps
        else "no steps found"
    )
    intro = (
        f'<p class="muted">Time axis: one row per GPU stream ({len(tl["lanes"])}), each GPU event from its start '
        "for its duration, coloured by category (the chart's colours); under each GPU its idle time split "
        "as in idle_time (host wait: nothing queued, the CPU is late; GPU wait; unknown); "
        f"{st}. Time from the first GPU event or step. Wheel to zoom about the cursor, drag to pan, "
        f"double-click to reset; hover for name, op, duration and step. {esc(merge_note(tl))}</p>"
    )
    return "\n".join(
        [
            STYLE,
            intro,
            legend(tl),
            '<div id="tl"><canvas id="tl-canvas" height="40"></canvas></div><div id="tl-tip" hidden></div>',
            f'<script type="application/json" id="tl-data">{data_json(tl)}</script>',
            f"<script>{TIMELINE_SCRIPT}</script>",
        ]
    )


__all__ = ["TIMELINE_HASH", "IDLE_COLOURS", "data_json", "merge_note", "timeline_section"]
