"""Cost of the input SHA-256 in the notes (issue 23): the read stage with and without hashing.

    python benchmarks/bench_input_sha.py [--size-mb 100] [--reps 3]

Builds an uncompressed trace of --size-mb MB (bench_analyze.build: a replicated real trace),
then in the same run times ``perfreport.read.read_trace`` on it (best of --reps), once as
shipped (the bytes hashed as they are read, ``Source._read``) and once with the hashing replaced
by a plain read (the baseline), and ``hashlib.sha256`` over the file alone. Prints a table;
ratios are against the baseline of this run. A gzip trace hashes its compressed bytes, about a
tenth of the data, so the plain-JSON case is the worst one.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_analyze import build  # noqa: E402

from perfreport.read import read_trace  # noqa: E402
from perfreport.read.source import Source  # noqa: E402


def best(fn, reps: int) -> float:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--source", default=str(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        big = Path(d) / "big.json"
        build(Path(a.source), big, a.size_mb)
        mb = big.stat().st_size / 1e6
        hashed = Source._read

        def plain(self, raw, n):
            return raw.read(n)

        def sha_only():
            h = hashlib.sha256()
            with open(big, "rb") as fh:
                for b in iter(lambda: fh.read(1 << 20), b""):
                    h.update(b)

        Source._read = plain
        base = best(lambda: read_trace(str(big)), a.reps)
        Source._read = hashed
        with_sha = best(lambda: read_trace(str(big)), a.reps)
        sha = best(sha_only, a.reps)
    print(f"read_trace of a {mb:,.0f} MB uncompressed trace, best of {a.reps}")
    print(f"| {'case':<34} | {'seconds':>8} | {'MB/s':>6} | {'ratio':>5} |")
    print(f"|{'-' * 36}|{'-' * 10}|{'-' * 8}|{'-' * 7}|")
    for name, t in (("read, no hashing (baseline)", base), ("read, SHA-256 as read (shipped)", with_sha)):
        print(f"| {name:<34} | {t:8.2f} | {mb / t:6.0f} | {t / base:5.2f} |")
    print(f"| {'hashlib.sha256 of the file alone':<34} | {sha:8.2f} | {mb / sha:6.0f} | {sha / base:5.2f} |")


if __name__ == "__main__":
    main()
