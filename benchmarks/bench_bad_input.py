"""How long a broken trace takes to be refused, against a clean read of the same file.

    python benchmarks/bench_bad_input.py [--size-mb 50]

Builds a synthetic trace of at least --size-mb MB, then variants with one fault each at the
start (byte ~5,000), the middle and the end: ``,,`` between two events, an event's closing
``}`` replaced (unbalanced nesting), an invalid UTF-8 byte in a kernel name (repaired, so the
whole file is read), a ``NaN`` in an argument (repaired). Times ``read_trace`` in this
process (best of --repeat) and prints one table: seconds, and the ratio to the clean read.
The old splitter retried every earlier cut after an error: 2-3 minutes on 8.6 MB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfreport.errors import BadInput  # noqa: E402
from perfreport.read import read_trace  # noqa: E402

TMPL = (
    '{"ph": "X", "cat": "kernel", "name": "void gemm_kernel<128, 64>(float*, float const*)", '
    '"pid": 0, "tid": 7, "ts": %d.5, "dur": 3.25, "args": {"device": 0, "stream": 7, '
    '"correlation": %d, "External id": %d, "grid": [128, 4, 1], "block": [256, 1, 1]}}'
)


def build(size_mb: float) -> bytes:
    n = int(size_mb * 1e6 / (len(TMPL) + 10)) + 1
    body = ",\n".join(TMPL % (i, i, i) for i in range(n))
    return ('{"schemaVersion": 1, "traceEvents": [\n' + body + '\n], "traceName": "b"}').encode()


def faults(data: bytes, at: int) -> dict[str, bytes]:
    i = data.index(b"}}", at) + 2  # the end of an event
    j = data.index(b"gemm_kernel", at)
    k = data.index(b'"stream": 7', at)
    return {
        "',,' between events": data[:i] + b"," + data[i:],
        "event '}' missing": data[: i - 1] + b",," + data[i:],
        "invalid UTF-8 (repaired)": data[:j] + b"\xff" + data[j + 1 :],
        "NaN literal (repaired)": data[:k] + b'"stream": NaN' + data[k + 11 :],
    }


def timed(path: Path, repeat: int) -> tuple[float, str]:
    best, what = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            raw = read_trace(str(path))
            what = f"read, {len(raw.warnings)} warning(s)"
        except BadInput as exc:
            what = "refused: " + str(exc).split(": ", 1)[1][:60]
        best = min(best, time.perf_counter() - t0)
    return best, what


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    data = build(a.size_mb)
    with tempfile.TemporaryDirectory() as d:
        clean = Path(d) / "clean.json"
        clean.write_bytes(data)
        t_clean, _ = timed(clean, a.repeat)
        print(f"trace: {len(data) / 1e6:.1f} MB; clean read {t_clean:.2f} s ({len(data) / 1e6 / t_clean:.0f} MB/s)\n")
        print("| fault | where | seconds | x clean | outcome |\n|---|---|---|---|---|")
        for where, at in (("start", 5000), ("middle", len(data) // 2), ("end", len(data) - 2000)):
            for name, bad in faults(data, at).items():
                p = Path(d) / "bad.json"
                p.write_bytes(bad)
                t, what = timed(p, a.repeat)
                print(f"| {name} | {where} | {t:.2f} | {t / t_clean:.2f} | {what} |")


if __name__ == "__main__":
    main()
