"""The HTML report: one self-contained offline file (``perfreport analyze --html FILE``).

Sections: source and GPU spec, the coverage statement, the roofline chart (inline SVG from
:mod:`perfreport.writers.roofline_svg`), the GPU timeline breakdown, a sortable table of the top
rows of ``unified_perf_summary``, and the notes. No external resource of any kind: a
Content-Security-Policy of ``default-src 'none'`` in the page makes any load an error that a
browser reports (the browser test checks there is none). The only script is the ~50-line
table sorter below (blank cells last either way) and the chart's zoom and pan (wheel, drag,
double-click resets: the SVG viewBox changes), allowed by its SHA-256 hash in the policy (no
``'unsafe-inline'`` scripts).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from perfreport.writers import numfmt
from perfreport.writers.atomic import atomic_path
from perfreport.writers.html_timeline import TIMELINE_HASH, timeline_section
from perfreport.writers.roofline_svg import escape as esc
from perfreport.writers.roofline_svg import roofline_svg
from perfreport.writers.summary import coverage_lines, gpu_breakdown, spec_facts, top_rows
from perfreport.tables import columns as C

TOP = 50


STYLE = """
body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:20px} h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#ddebf7;position:sticky;top:0}
#top th{cursor:pointer} #top th[aria-sort=ascending]::after{content:" ▲"}
#top th[aria-sort=descending]::after{content:" ▼"}
td.name{max-width:460px;overflow:hidden;text-overflow:ellipsis}
td.shape,td.flags{max-width:260px;overflow:hidden;text-overflow:ellipsis}
.coverage{background:#f6f6f6;border-left:4px solid #4e79a7;padding:8px 12px}
.bar{display:flex;height:22px;width:900px;border:1px solid #999}
.bar div{height:100%} .muted{color:#666}
"""

SCRIPT = """
(function(){
  var t=document.getElementById('top');
  if(t){
    var ths=t.tHead.rows[0].cells;
    for(var i=0;i<ths.length;i++){(function(i){
      ths[i].addEventListener('click',function(){
        var asc=ths[i].getAttribute('aria-sort')==='descending';
        for(var j=0;j<ths.length;j++){ths[j].removeAttribute('aria-sort');}
        ths[i].setAttribute('aria-sort',asc?'ascending':'descending');
        var b=t.tBodies[0], rs=Array.prototype.slice.call(b.rows);
        rs.sort(function(a,c){
          var x=a.cells[i].getAttribute('data-v'), y=c.cells[i].getAttribute('data-v');
          var ex=(x==='')||(x===null&&a.cells[i].textContent===''), ey=(y==='')||(y===null&&c.cells[i].textContent==='');
          if(ex||ey){return ex===ey?0:(ex?1:-1);}  /* blanks last, either direction */
          var r;
          if(x!==null&&y!==null){r=parseFloat(x)-parseFloat(y);}
          else{r=a.cells[i].textContent.localeCompare(c.cells[i].textContent);}
          return asc?r:-r;
        });
        rs.forEach(function(r){b.appendChild(r);});
      });
    })(i);}
  }
  /* roofline chart: wheel zooms about the cursor, drag pans, double-click resets (the
     viewBox changes, so overlapping points come apart and can each be hovered) */
  var svg=document.getElementById('roofline');
  if(svg&&svg.viewBox&&svg.viewBox.baseVal){
    var vb=svg.viewBox.baseVal, home=[vb.x,vb.y,vb.width,vb.height], drag=null;
    var at=function(e){var r=svg.getBoundingClientRect();
      return [vb.x+(e.clientX-r.left)/r.width*vb.width, vb.y+(e.clientY-r.top)/r.height*vb.height];};
    svg.addEventListener('wheel',function(e){e.preventDefault();var p=at(e),f=e.deltaY<0?0.8:1.25;
      var w=Math.min(home[2],vb.width*f),h=Math.min(home[3],vb.height*f);
      vb.x=p[0]-(p[0]-vb.x)*w/vb.width; vb.y=p[1]-(p[1]-vb.y)*h/vb.height; vb.width=w; vb.height=h;
      svg.setAttribute('data-zoom',(home[2]/w).toFixed(2));},{passive:false});
    svg.addEventListener('mousedown',function(e){drag=at(e);});
    window.addEventListener('mouseup',function(){drag=null;});
    svg.addEventListener('mousemove',function(e){if(!drag){return;}var p=at(e);
      vb.x+=drag[0]-p[0]; vb.y+=drag[1]-p[1];});
    svg.addEventListener('dblclick',function(){vb.x=home[0];vb.y=home[1];vb.width=home[2];vb.height=home[3];
      svg.setAttribute('data-zoom','1.00');});
    svg.setAttribute('data-zoom','1.00');
  }
  document.documentElement.setAttribute('data-ready','1');
})();
"""

# (row key, header, formatter or None for text)
TABLE = [
    ("name", "name", None),
    ("category", "category", None),
    ("shape", "shape", None),
    ("count", "count", numfmt.count),
    ("time", "GPU time", numfmt.time_us),
    ("share", "share", numfmt.pct),
    ("roofline", "roofline %", numfmt.pct),
    ("bound", "bound", None),
    ("tflops", "TFLOP/s", numfmt.number),
    ("tbps", "TB/s", numfmt.number),
    ("ai", C.FLOP_PER_BYTE, numfmt.number),
    ("flags", "flags", None),
]

# the page's scripts (sorter, time axis) are allowed by their hashes, not by 'unsafe-inline': any other inline script
# (say, markup that slipped through escaping) does not run
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
CSP = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}' 'sha256-{TIMELINE_HASH}'"


def top_table(rows) -> str:
    cols = [c for c in TABLE if any(r.get(c[0]) not in (None, "") for r in rows)]
    out = ['<table id="top"><thead><tr><th>#</th>']
    out += [f"<th>{esc(h)}</th>" for _, h, _ in cols]
    out.append("</tr></thead><tbody>")
    for i, r in enumerate(rows, 1):
        cells = [f'<td class="n" data-v="{i}">{i}</td>']
        for k, _, f in cols:
            v = r.get(k)
            if f is None:
                cls = f' class="{k}"' if k in ("name", "shape", "flags") else ""
                title = f' title="{esc(v)}"' if k in ("name", "shape", "flags") and v else ""
                cells.append(f"<td{cls}{title}>{esc(v)}</td>")
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                cells.append(f'<td class="n" data-v="{float(v)!r}">{esc(f(v))}</td>')
            else:
                cells.append('<td class="n" data-v=""></td>')  # blank: sorts last either way
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


_TL = [("computation", "#4e79a7"), ("exposed comm", "#e15759"), ("exposed memcpy", "#f28e2b"), ("idle", "#dddddd")]


def timeline_html(report) -> str:
    return devices_html(gpu_breakdown(report))


def devices_html(devs) -> str:
    """The GPU timeline table and bars of ``[(label, {type: ms})]`` (:func:`gpu_breakdown`)."""
    if not devs:
        return "<p>The trace has no GPU events.</p>"
    out = ['<table><thead><tr><th>GPU</th><th>total</th>']
    out += [f"<th>{k}</th>" for k, _ in _TL] + ["<th>busy</th></tr></thead><tbody>"]
    bars = []
    for dev, d in devs:
        total = d.get("total") or 0.0
        cells = [f"<td>{esc(dev)}</td>", f'<td class="n">{numfmt.time_us((d.get("total") or 0) * 1e3)}</td>']
        segs = []
        for k, c in _TL + [("busy", "")]:
            ms = d.get(k) or 0.0
            p = 100.0 * ms / total if total else 0.0
            cells.append(f'<td class="n">{numfmt.time_us(ms * 1e3)} ({numfmt.pct(p)})</td>')
            if c and p > 0:
                segs.append(
                    f'<div style="width:{p:.3f}%;background:{c}" title="{esc(k)}: '
                    f'{numfmt.time_us(ms * 1e3)} ({numfmt.pct(p)})"></div>'
                )
        out.append("<tr>" + "".join(cells) + "</tr>")
        bars.append(f'<p>GPU {esc(dev)}</p><div class="bar">{"".join(segs)}</div>')
    out.append("</tbody></table>")
    legend = " ".join(f'<span style="color:{c}">■</span> {k}' for k, c in _TL)
    return "\n".join(out) + "\n" + "\n".join(bars) + f'\n<p class="muted">{legend}</p>'


def notes_and_end(report, shown) -> str:
    """The Notes list (report and sheet notes, each once, none already in ``shown``) and the
    closing script/body/html tags: the end of every page."""
    seen, items = set(shown), []
    for n in list(report.notes) + [n for s in report.sheets for n in s.notes]:
        if n not in seen:
            seen.add(n)
            items.append(f"<li>{esc(n)}</li>")
    return "\n".join(["<h2>Notes</h2><ul>", *items, f"</ul><script>{SCRIPT}</script></body></html>\n"])


def html_text(report, top: int = TOP) -> str:
    rows = top_rows(report, None)
    cov = coverage_lines(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>perfreport: {esc(report.source)}</title><style>{STYLE}</style></head><body>",
        f"<h1>perfreport: {esc(report.source)}</h1>",
        f"<p>{esc(report.arch_msg)}</p>",
    ]
    if cov:
        more = "".join(f"<p>{esc(x)}</p>" for x in cov[2:])  # long lists (kernel names): folded
        parts.append(
            '<div class="coverage" id="coverage">'
            + "".join(f"<p>{esc(x)}</p>" for x in cov[:2])
            + (f"<details><summary>more</summary>{more}</details>" if more else "")
            + "</div>"
        )
    parts.append("<h2>Roofline</h2>")
    parts.append(
        '<p class="muted">One point per row of unified_perf_summary with FLOPs and bytes: '
        "x = FLOP/byte of one call, y = achieved TFLOP/s (mean over calls), area ∝ GPU "
        "time; lines: memory bandwidth × FLOP/byte and the compute peak of each precision "
        "the rows use. Hover a point for its row; wheel to zoom, drag to pan, double-click to reset.</p>"
    )
    parts.append(roofline_svg(rows, report.spec))
    parts.append("<h2>GPU timeline</h2>")
    parts.append(timeline_html(report))
    parts.append(timeline_section(getattr(report, "timeline", None)))
    shown = rows[:top]
    parts.append(f"<h2>Top {len(shown)} of {len(rows)} rows by GPU time</h2>")
    parts.append('<p class="muted">Click a header to sort. Full table: the workbook\'s unified_perf_summary sheet.</p>')
    parts.append(top_table(shown) if shown else "<p>No rows.</p>")
    parts.append("<h2>GPU spec</h2><table><tbody>")
    parts += [f"<tr><td>{esc(a)}</td><td>{esc(b)}</td></tr>" for a, b in spec_facts(report.spec)]
    parts.append("</tbody></table>")
    parts.append(notes_and_end(report, cov))
    return "\n".join(parts)


def write_html(report, path: str | Path, top: int = TOP) -> Path:
    """Write the page atomically to ``path``; returns the path."""
    text = html_text(report, top)
    with atomic_path(path, suffix=".html") as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return Path(path)


__all__ = ["CSP", "STYLE", "SCRIPT", "devices_html", "html_text", "top_table", "write_html"]
