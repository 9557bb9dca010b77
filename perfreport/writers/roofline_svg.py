"""The roofline chart as inline SVG: log-log, arithmetic intensity (FLOP/byte) against achieved
TFLOP/s, one point per ``unified_perf_summary`` row (area proportional to its GPU time, colour
by category, hover text with the row), and the spec's memory and compute ceilings.

Ceilings: attainable TFLOP/s = min(peak[precision], bandwidth × FLOP/byte), since
TB/s × FLOP/byte = 10^12 B/s × FLOP/B = TFLOP/s; the ridge of a precision sits at
FLOP/byte = peak / bandwidth (H100 SXM BF16: 989.4 / 3.35 = 295 FLOP/byte).
Plain SVG written here, no plotting library: see docs/analyze.md ("HTML report").
"""

from __future__ import annotations

import math
import re
from html import escape as _escape

from perfreport.writers import numfmt
from perfreport.tables import columns as C

_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
W, H = 960, 560
ML, MR, MT, MB = 70, 190, 20, 50  # margins: the right one holds the legend
PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#1f77b4",
    "#d62728",
]


def escape(v) -> str:
    """Text for HTML/SVG: markup characters escaped, control characters made spaces."""
    return _escape(_CTRL.sub(" ", "" if v is None else str(v)))


def _decades(lo: float, hi: float) -> tuple[int, int]:
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def points(rows) -> list[dict]:
    """Rows that can be placed: positive FLOP/byte and achieved TFLOP/s."""
    return [
        r
        for r in rows
        if isinstance(r.get("ai"), (int, float))
        and isinstance(r.get("tflops"), (int, float))
        and r["ai"] > 0
        and r["tflops"] > 0
    ]


def ceilings(spec, rows) -> list[tuple[str, float]]:
    """(precisions, peak TFLOP/s) to draw: the compute specs the rows use, else every matrix
    peak; precisions with the same peak share one line (``matrix_fp32, vector_fp32``)."""
    if spec is None or not spec.peaks:
        return []
    used = sorted({r.get(C.COMPUTE_SPEC) for r in rows if r.get(C.COMPUTE_SPEC) in spec.peaks})
    keys = used or sorted(k for k in spec.peaks if k.startswith("matrix_")) or sorted(spec.peaks)
    by_peak: dict[float, list[str]] = {}
    for k in keys:
        by_peak.setdefault(spec.peaks[k], []).append(k)
    return [(", ".join(ks), pk) for pk, ks in sorted(by_peak.items(), reverse=True)]


def hover(r: dict) -> str:
    lines = [str(r.get(C.NAME) or "")]
    if r.get("shape"):
        lines.append(f"shape: {r['shape']}")
    lines += [
        f"category: {r.get('category') or ''}",
        f"GPU time: {numfmt.time_us(r.get('time'))} ({numfmt.pct(r.get('share'))}), {r.get('count')} calls",
        f"FLOP/byte: {numfmt.number(r['ai'])}",
        f"achieved: {numfmt.number(r['tflops'])} TFLOP/s, {numfmt.number(r.get('tbps'))} TB/s",
    ]
    if r.get("roofline") is not None:
        lines.append(f"roofline: {numfmt.pct(r['roofline'])} ({r.get('bound')}-bound, {r.get('compute spec')})")
    if r.get(C.FLAGS):
        lines.append(f"flags: {r['flags']}")
    return "\n".join(lines)


# one colour per category, the same in every report (not handed out by time rank, which made GEMM
# blue in one report and orange in another); a category not listed gets a
# palette colour from a stable hash of its name (same name, same colour, on every run)
CATEGORY_COLOURS = {
    "GEMM": "#4e79a7",
    "SDPA_fwd": "#f28e2b",
    "SDPA_bwd": "#ff9da7",
    "InferenceAttention_fwd": "#e15759",
    "MoE": "#b07aa1",
    "CONV_fwd": "#59a14f",
    "CONV_bwd": "#8cd17d",
    "BinaryElementwise": "#76b7b2",
    "UnaryElementwise": "#499894",
    "elementwise": "#86bcb6",
    "Activation_fwd": "#edc948",
    "Norm_fwd": "#9c755f",
    "Norm_bwd": "#d7b5a6",
    "RMSNorm_fwd": "#b6992d",
    "Reduce_fwd": "#f1ce63",
    "reduce": "#f1ce63",
    "RoPE_fwd": "#d37295",
    "KVCache": "#a0cbe8",
    "DataMovement": "#bab0ac",
    "memcpy": "#79706e",
    "comm": "#d62728",
    "Quant": "#fabfd2",
    "Pool": "#ffbe7d",
    "Resample": "#8cd17d",
    "Inductor": "#1f77b4",
}


def colour_of(category: str) -> str:
    """The fixed colour of ``category`` (:data:`CATEGORY_COLOURS`, else a stable hash)."""
    import zlib

    c = str(category or "")
    return CATEGORY_COLOURS.get(c) or PALETTE[zlib.crc32(c.encode("utf-8")) % len(PALETTE)]


def colours(rows) -> dict[str, str]:
    """category -> colour for the categories of ``rows``, in order of GPU time (the legend)."""
    cats = []
    for r in sorted(rows, key=lambda r: -(r.get("time") or 0)):
        c = str(r.get(C.CATEGORY) or "")
        if c not in cats:
            cats.append(c)
    return {c: colour_of(c) for c in cats}


def roofline_svg(rows, spec) -> str:
    """The chart; an explanatory ``<p>`` instead when no row has FLOPs and bytes."""
    pts = points(rows)
    if not pts:
        return "<p>No row has both FLOPs and bytes from a perf model: nothing to place on a roofline.</p>"
    ceil = ceilings(spec, pts)
    bw = spec.mem_bw_tbps if spec is not None else None
    xs = [p["ai"] for p in pts]
    ys = [p["tflops"] for p in pts]
    if bw and ceil:
        xs += [pk / bw for _, pk in ceil]
        ys += [pk for _, pk in ceil]
    x0, x1 = _decades(min(xs) / 2, max(xs) * 4)
    y0, y1 = _decades(min(ys) / 2, max(ys) * 2)
    pw, ph = W - ML - MR, H - MT - MB

    def X(v):
        return ML + (math.log10(v) - x0) / (x1 - x0) * pw

    def Y(v):
        return MT + ph - (math.log10(v) - y0) / (y1 - y0) * ph

    out = [
        f'<svg id="roofline" role="img" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'font-family="sans-serif" font-size="12">',
        "<title>Roofline: arithmetic intensity vs achieved TFLOP/s</title>",
        f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>',
    ]
    for d in range(x0, x1 + 1):  # grid and tick labels, one per decade
        x = X(10.0**d)
        out.append(f'<line x1="{x:.1f}" y1="{MT}" x2="{x:.1f}" y2="{MT + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{MT + ph + 16}" text-anchor="middle">{_tick(d)}</text>')
    for d in range(y0, y1 + 1):
        y = Y(10.0**d)
        out.append(f'<line x1="{ML}" y1="{y:.1f}" x2="{ML + pw}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{ML - 6}" y="{y + 4:.1f}" text-anchor="end">{_tick(d)}</text>')
    out.append(f'<text x="{ML + pw / 2}" y="{H - 10}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>')
    out.append(
        f'<text transform="translate(16 {MT + ph / 2}) rotate(-90)" text-anchor="middle">achieved TFLOP/s</text>'
    )
    if bw and ceil:
        top = max(pk for _, pk in ceil)
        xa, xb = 10.0**x0, min(top / bw, 10.0**x1)
        ya = max(bw * xa, 10.0**y0)
        xa = ya / bw
        out.append(
            f'<line class="ceiling" x1="{X(xa):.1f}" y1="{Y(ya):.1f}" x2="{X(xb):.1f}" '
            f'y2="{Y(bw * xb):.1f}" stroke="#333" stroke-width="2"><title>memory: '
            f'{bw:g} TB/s × FLOP/byte</title></line>'
        )
        out.append(f'<text x="{X(xa) + 8:.1f}" y="{Y(ya) - 8:.1f}" fill="#333">{bw:g} TB/s</text>')
        for k, pk in ceil:
            xr = pk / bw
            out.append(
                f'<line class="ceiling" x1="{X(xr):.1f}" y1="{Y(pk):.1f}" x2="{ML + pw}" '
                f'y2="{Y(pk):.1f}" stroke="#333" stroke-width="2" stroke-dasharray="6 3">'
                f'<title>{escape(k)}: {pk:g} TFLOP/s (ridge at {xr:.0f} FLOP/byte)</title></line>'
            )
            out.append(
                f'<text x="{ML + pw - 4}" y="{Y(pk) - 5:.1f}" text-anchor="end" fill="#333">{escape(k)} {pk:g}</text>'
            )
    else:
        out.append(f'<text x="{ML + 10}" y="{MT + 20}" fill="#a00">no GPU spec: no ceilings (use --arch)</text>')
    col = colours(pts)
    tmax = max((p.get("time") or 0.0) for p in pts) or 1.0
    for p in sorted(pts, key=lambda p: -(p.get("time") or 0.0)):  # big first, small on top
        r = 3.0 + 17.0 * math.sqrt(max(0.0, (p.get("time") or 0.0) / tmax))
        c = col[str(p.get(C.CATEGORY) or "")]
        out.append(
            f'<circle class="pt" cx="{X(p["ai"]):.1f}" cy="{Y(p["tflops"]):.1f}" r="{r:.1f}" '
            f'fill="{c}" fill-opacity="0.6" stroke="{c}"><title>{escape(hover(p))}</title></circle>'
        )
    ly = MT + 10
    out.append(f'<text x="{W - MR + 16}" y="{ly}" font-weight="bold">category</text>')
    for cat, c in col.items():
        ly += 18
        out.append(f'<circle cx="{W - MR + 22}" cy="{ly - 4}" r="6" fill="{c}" fill-opacity="0.6" stroke="{c}"/>')
        out.append(f'<text x="{W - MR + 34}" y="{ly}">{escape(cat[:22])}</text>')
    out.append(f'<text x="{W - MR + 16}" y="{ly + 30}" fill="#555">area ∝ GPU time</text>')
    out.append("</svg>")
    return "\n".join(out)


def _tick(d: int) -> str:
    v = 10.0**d
    return f"{v:g}" if -3 <= d <= 4 else f"1e{d}"


__all__ = ["CATEGORY_COLOURS", "ceilings", "colour_of", "colours", "escape", "hover", "points", "roofline_svg"]
