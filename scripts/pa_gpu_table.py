"""The table issue 20's targets are stated in, from bench-pa's headline CSVs and the measured bandwidth.

    python scripts/pa_gpu_table.py --append SRC.csv DST.csv PATH     # gpu_checks.sh, after each headline step
    python scripts/pa_gpu_table.py --bandwidth BW.json HEADLINE.csv TABLE.md

``--append`` adds SRC's rows to DST (the header once) with a ``path`` column (bf16, fp8-f16,
fp8-fp8). The table has one line per (context, layout, path) of our kernel: median µs, TB/s
(the model's bytes over the time), the percent of the *measured* read bandwidth
(scripts/pa_bandwidth.py), the FP8 / BF16 time ratio (same context and layout), the speedup over
the torch reference; then the targets at 64K: BF16 >= 85% of the measured read bandwidth in NHD
and 5DV, FP8 <= 0.55x the BF16 time, >= 15x torch, each MET / MISSED / not measured. Exit 1 when
the CSV has no triton row at all (nothing was measured).
"""

from __future__ import annotations

import csv
import json
import os
import sys

TARGET_PCT, TARGET_RATIO, TARGET_SPEEDUP = 85.0, 0.55, 15.0
PATHS = ("bf16", "fp8-f16", "fp8-fp8")


def append(src: str, dst: str, path: str) -> None:
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    new = not os.path.exists(dst) or os.path.getsize(dst) == 0
    if not rows:
        return
    cols = list(rows[0]) + ["path"]
    with open(dst, "a", newline="") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow(dict(r, path=path))


def _f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def build(rows: list[dict], bw: dict | None) -> tuple[list[str], int]:
    read = (bw or {}).get("read_tb_s")
    ours = [r for r in rows if r.get("backend") == "triton"]
    by = {(r["context"], r["layout"], r["path"]): r for r in ours}
    lines = [
        f"measured read bandwidth: {read:.3f} TB/s, copy {bw.get('copy_tb_s', 0):.3f} TB/s"
        if read
        else "measured read bandwidth: not measured",
        "",
        "| context | layout | path | median µs | TB/s | % of measured read BW | FP8 / BF16 | vs torch | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (ctx, lay, path), r in sorted(by.items(), key=lambda kv: (int(kv[0][0]), kv[0][1], PATHS.index(kv[0][2]))):
        t, tb = _f(r.get("median_us")), _f(r.get("tb_s"))
        bf = by.get((ctx, lay, "bf16"))
        ratio = t / _f(bf["median_us"]) if (path != "bf16" and bf and t and _f(bf.get("median_us"))) else None
        sp = _f(r.get("speedup"))
        cells = [
            ctx,
            lay,
            path,
            f"{t:,.1f}" if t else "",
            f"{tb:.2f}" if tb else "",
            f"{tb / read * 100:.1f}%" if (tb and read) else "",
            f"{ratio:.2f}x" if ratio else "",
            f"{sp:.1f}x" if sp else "",
            r.get("status", ""),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "targets (64K, B32 q4 16:1 Dk192 Dv128 page 64):"]
    for lay in ("NHD", "5DV"):
        r = by.get(("65536", lay, "bf16"))
        tb = _f(r.get("tb_s")) if r else None
        if tb and read:
            pct = tb / read * 100
            lines.append(
                f"  BF16 {lay} {pct:.1f}% of measured read BW (>= {TARGET_PCT:g}%): {'MET' if pct >= TARGET_PCT else 'MISSED'}"
            )
        else:
            lines.append(f"  BF16 {lay} % of measured read BW: not measured")
        for path in ("fp8-f16", "fp8-fp8"):
            f8, bf = by.get(("65536", lay, path)), r
            if f8 and bf and _f(f8.get("median_us")) and _f(bf.get("median_us")):
                q = _f(f8["median_us"]) / _f(bf["median_us"])
                lines.append(
                    f"  {path} {lay} {q:.2f}x the BF16 time (<= {TARGET_RATIO}): {'MET' if q <= TARGET_RATIO else 'MISSED'}"
                )
            else:
                lines.append(f"  {path} {lay} / BF16 time: not measured")
        sp = _f(r.get("speedup")) if r else None
        lines.append(
            f"  BF16 {lay} {sp:.1f}x torch (>= {TARGET_SPEEDUP:g}x): {'MET' if sp >= TARGET_SPEEDUP else 'MISSED'}"
            if sp
            else f"  BF16 {lay} speedup over torch: not measured"
        )
    return lines, len(ours)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--append" and len(argv) == 4:
        append(*argv[1:])
        return 0
    if not (argv and argv[0] == "--bandwidth" and len(argv) == 4):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    bw_path, csv_path, out = argv[1:]
    bw = None
    if os.path.exists(bw_path):
        with open(bw_path) as f:
            bw = json.load(f)
    rows = []
    if os.path.exists(csv_path):
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
    lines, n = build(rows, bw)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out)
    print("\n".join(lines))
    if n == 0:
        sys.stderr.write(f"pa_gpu_table: {csv_path}: no triton rows (nothing measured)\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
