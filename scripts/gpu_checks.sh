#!/usr/bin/env bash
# GPU checks for bench-pa and the Triton paged-attention kernel (issue 5), in ONE script.
#
#   OUT=/some/dir bash scripts/gpu_checks.sh        # from the repository root, on a GPU machine
#
# Writes under "$OUT" (7 files): log.txt (device, bandwidth probe, GPU tests, tables),
# bench_pa.csv (the seed's grid: batch 32, q 4, 16:1 GQA, Dk 192, Dv 128/192, page 64, 16K/64K,
# bf16/fp8, triton vs torch), bench_5d_graph.csv (5D layout, graph replay), pa_trace.json +
# trace_rows.json + analyze_trace.csv (one traced launch per case and `perfreport analyze` on it),
# tune.csv (num_warps x num_stages x partitions at 64K).
# Total runtime stays under 5 minutes: every step has its own timeout, the tuning sweep is last.
# Uses the machine's python3 (torch + triton already installed there). `perfreport analyze` also
# needs orjson and msgspec; where they are missing that one step is skipped (carry them as wheels).
set -u
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
unset TRITON_INTERPRET
LOG="$OUT/log.txt"
: > "$LOG"
step() { echo; echo "== $1 ($(date +%T))"; } >> "$LOG"
START=$(date +%s)

step "device"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null \
    || rocm-smi --showproductname 2>/dev/null; } >> "$LOG" 2>&1
timeout 60 "$PY" - >> "$LOG" 2>&1 <<'EOF'
import torch, triton
p = torch.cuda.get_device_properties(0)
print(f"torch {torch.__version__} (hip {torch.version.hip}) triton {triton.__version__}")
print(f"{torch.cuda.get_device_name()} SMs {p.multi_processor_count} L2 {getattr(p, 'L2_cache_size', 0) / 2**20:.0f} MiB "
      f"mem {p.total_memory / 2**30:.0f} GiB arch {getattr(p, 'gcnArchName', '')}")
EOF

step "read-only bandwidth probe: torch sum over a 4 GB buffer"
timeout 60 "$PY" - >> "$LOG" 2>&1 <<'EOF'
import torch
x = torch.ones(10**9, dtype=torch.float32, device="cuda")        # 4.0 GB
for _ in range(3):
    x.sum()
torch.cuda.synchronize()
ts = []
for _ in range(20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); x.sum(); e.record(); torch.cuda.synchronize()
    ts.append(s.elapsed_time(e) / 1e3)
ts.sort()
print(f"read-only sum: median {ts[10]*1e3:.3f} ms -> {4e9 / ts[10] / 1e12:.3f} TB/s "
      f"(best {4e9 / ts[0] / 1e12:.3f} TB/s)")
EOF

step "GPU tests (tests/test_pa_gpu.py)"
timeout 100 "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/test_pa_gpu.py >> "$LOG" 2>&1
echo "pytest exit: $?" >> "$LOG"

SEED=(--batch 32 --query-len 4 --q-heads 16 --kv-heads 1 --head-dim 192 --page-size 64)
step "bench-pa at the seed's shapes"
timeout 80 "$PY" -m perfreport.cli bench-pa --context 16k,64k "${SEED[@]}" --v-head-dim 128,192 \
    --kv-dtype bf16,fp8 --backend triton,torch --baseline torch --csv "$OUT/bench_pa.csv" >> "$LOG" 2>&1
echo "bench-pa exit: $?" >> "$LOG"

step "bench-pa 5D layout and graph replay"
timeout 40 "$PY" -m perfreport.cli bench-pa --context 64k "${SEED[@]}" --v-head-dim 128,192 \
    --kv-dtype bf16,fp8 --layout 5d --graph --backend triton --baseline triton \
    --csv "$OUT/bench_5d_graph.csv" >> "$LOG" 2>&1
echo "bench-pa 5d exit: $?" >> "$LOG"

step "traced launch and perfreport analyze on it"
timeout 40 "$PY" -m perfreport.cli bench-pa --context 64k "${SEED[@]}" --v-head-dim 128 --kv-dtype bf16,fp8 \
    --backend triton --baseline triton --trace "$OUT/pa_trace.json" --json --quiet \
    > "$OUT/trace_rows.json" 2>> "$LOG"
echo "bench-pa trace exit: $?" >> "$LOG"
if "$PY" -c "import orjson, msgspec, openpyxl" 2>/dev/null; then
    timeout 30 "$PY" -m perfreport.cli analyze "$OUT/pa_trace.json" --sheet unified_perf_summary \
        --format csv --quiet > "$OUT/analyze_trace.csv" 2>> "$LOG"
    echo "analyze exit: $? (compare 'roofline median (%)' with trace_pct_roofline in trace_rows.json)" >> "$LOG"
else
    echo "analyze skipped: orjson/msgspec/openpyxl not installed here" >> "$LOG"
fi

step "tuning sweep at 64K (num_warps x num_stages x partitions)"
LEFT=$(( 290 - ($(date +%s) - START) ))
if [ "$LEFT" -gt 20 ]; then
timeout "$LEFT" "$PY" - "$OUT/tune.csv" >> "$LOG" 2>&1 <<'EOF'
import csv, sys
import torch
from perfreport.bench.timing import llc_bytes, time_gpu
from perfreport.kernels.paged_attention_host import auto_partitions, make_workspace, paged_attention_decode
from perfreport.kernels.paged_cache import build_inputs
rows = []
flush = 2 * llc_bytes()
with open(sys.argv[1], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kv_dtype", "v_head_dim", "num_warps", "num_stages", "partitions", "median_us", "p10_us", "p90_us"])
    for kv in ("bf16", "fp8"):
        inp = build_inputs([65536] * 32, q_len=4, q_heads=16, kv_heads=1, head_dim=192, v_head_dim=128,
                           page_size=64, kv_dtype=kv, device="cuda")
        auto = auto_partitions(32, 1, 1024, 64, torch.device("cuda"))
        for parts in sorted({auto, 2 * auto, max(1, auto // 2)}):
            ws = make_workspace(32, 1, 64, 128, parts, "cuda") if parts > 1 else None
            out = torch.empty(128, 16, 128, dtype=torch.bfloat16, device="cuda")
            for nw in (4, 8):
                for ns in (2, 3):
                    fn = lambda: paged_attention_decode(inp.query, inp.key_cache, inp.value_cache, inp.block_tables,
                                                        inp.context_lens, num_partitions=parts, workspace=ws, out=out,
                                                        max_context=65536, num_warps=nw, num_stages=ns, **inp.kwargs())
                    try:
                        t = time_gpu(fn, 50, flush_bytes=flush)
                    except Exception as exc:
                        print(kv, parts, nw, ns, "failed:", type(exc).__name__, str(exc)[:200]); continue
                    w.writerow([kv, 128, nw, ns, parts, f"{t.median_us:.1f}", f"{t.p10_us:.1f}", f"{t.p90_us:.1f}"])
                    f.flush()
                    print(f"{kv} parts {parts} warps {nw} stages {ns}: {t.median_us:.1f} us")
        del inp
EOF
echo "tune exit: $?" >> "$LOG"
else
    echo "tuning skipped: out of time budget" >> "$LOG"
fi
echo "total $(( $(date +%s) - START )) s" >> "$LOG"
