#!/usr/bin/env bash
# GPU checks for bench-pa and the Triton paged-attention kernel (issues 5 and 13), in ONE script.
#
#   OUT=/some/dir bash scripts/gpu_checks.sh        # from the repository root, on a GPU machine
#
# Each step runs in its own subshell with `set -euo pipefail` and its own timeout; the script
# goes on after a failed step, prints "PASS <step> (Ns)" / "FAIL <step> (exit N, Ns)" for every
# step on stdout at the end, and exits 1 if any step failed. Everything else goes to
# $OUT/log.txt. Files under $OUT (at most 8, the device tool's limit):
#   log.txt            device, bandwidth probe, GPU tests, tables, the summary
#   bench_seed.csv     the seed grid: batch 32, q 4, 16:1 GQA, Dk 192, page 64, contexts 16K and 64K,
#                      BF16 V128 and V192, FP8 V128; triton vs torch (written row by row: a killed
#                      step leaves .bench_seed.csv.partial with what it measured)
#   bench_graph.csv    graph replay at 64K, NHD and 5D-with-vectorized-V layouts
#   pa_trace.json, trace_rows.json, analyze_trace.csv   one traced launch per case, `perfreport analyze` on it
#   sweep.csv          num_stages x block_n x partials x partitions (x FP8 MMA path) at 64K
# Budget: about 7 minutes on an H200 with a cold Triton cache (step timeouts sum to 450 s, under 8 min).
# Python packages the machine lacks (msgspec, orjson, openpyxl, typer, rich) travel as wheels in
# .whl/ (see /work/.library/device/README.md); they are installed into /tmp/site when present.
set -u
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
LOG="$OUT/log.txt"
: > "$LOG"
if ls .whl/*.whl > /dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .whl/*.whl >> "$LOG" 2>&1 && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
unset TRITON_INTERPRET
SUMMARY=()
FAILED=0

# run_step NAME TIMEOUT_S FUNCTION: the function runs in a subshell with errexit/nounset/pipefail
run_step() {
    local name=$1 limit=$2 fn=$3 t0 rc
    t0=$(date +%s)
    { echo; echo "== $name ($(date +%T), limit ${limit}s)"; } >> "$LOG"
    ( set -euo pipefail; export STEP_LIMIT=$limit; "$fn" ) >> "$LOG" 2>&1
    rc=$?
    local dt=$(( $(date +%s) - t0 ))
    if [ "$rc" -eq 0 ]; then
        SUMMARY+=("PASS $name (${dt}s)")
    else
        SUMMARY+=("FAIL $name (exit $rc, ${dt}s)")
        FAILED=1
    fi
}

step_device() {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv \
        || rocm-smi --showproductname || true
    timeout "$STEP_LIMIT" "$PY" - <<'EOF'
import torch, triton
p = torch.cuda.get_device_properties(0)
print(f"torch {torch.__version__} (hip {torch.version.hip}) triton {triton.__version__}")
print(f"{torch.cuda.get_device_name()} SMs {p.multi_processor_count} L2 {getattr(p, 'L2_cache_size', 0) / 2**20:.0f} MiB "
      f"mem {p.total_memory / 2**30:.0f} GiB arch {getattr(p, 'gcnArchName', '')}")
EOF
}

step_bandwidth() {
    timeout "$STEP_LIMIT" "$PY" - <<'EOF'
import torch
x = torch.ones(2 * 10**9 // 4 * 2, dtype=torch.float32, device="cuda")  # 4.0 GB
y = torch.empty(10**9 // 4 * 2, dtype=torch.float32, device="cuda")     # 2.0 GB
def t(fn, n=20):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    ts.sort()
    return ts[len(ts) // 2], ts[0]
med, best = t(lambda: x.sum())
print(f"read-only sum 4.0 GB: median {med*1e3:.3f} ms -> {4e9 / med / 1e12:.3f} TB/s (best {4e9 / best / 1e12:.3f})")
half = x[: y.numel()]
med, best = t(lambda: y.copy_(half))
print(f"copy 2.0 GB -> 2.0 GB: median {med*1e3:.3f} ms -> {4e9 / med / 1e12:.3f} TB/s moved (best {4e9 / best / 1e12:.3f})")
EOF
}

step_gpu_tests() {
    timeout "$STEP_LIMIT" "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/pa/kernel/test_pa_gpu.py
}

SEED=(--batch 32 --query-len 4 --q-heads 16 --kv-heads 1 --head-dim 192 --page-size 64)
step_seed_grid() {
    # BF16 V128/V192 and FP8 V128, 16K and 64K: two invocations, one CSV (the second appends)
    timeout $(( STEP_LIMIT / 2 )) "$PY" -m perfreport.cli.app bench-pa --context 16k,64k "${SEED[@]}" \
        --v-head-dim 128,192 --kv-dtype bf16 --backend triton,torch --baseline torch --csv "$OUT/bench_seed.csv"
    timeout $(( STEP_LIMIT / 2 )) "$PY" -m perfreport.cli.app bench-pa --context 16k,64k "${SEED[@]}" \
        --v-head-dim 128 --kv-dtype fp8 --backend triton,torch --baseline torch --csv "$OUT/bench_fp8.csv"
    tail -n +2 "$OUT/bench_fp8.csv" >> "$OUT/bench_seed.csv" && rm -f "$OUT/bench_fp8.csv"
}

step_graph() {
    timeout "$STEP_LIMIT" "$PY" -m perfreport.cli.app bench-pa --context 64k "${SEED[@]}" --v-head-dim 128 \
        --kv-dtype bf16,fp8 --layout nhd,5dv --graph --backend triton --baseline triton --csv "$OUT/bench_graph.csv"
}

step_trace() {
    timeout $(( STEP_LIMIT * 2 / 3 )) "$PY" -m perfreport.cli.app bench-pa --context 64k "${SEED[@]}" \
        --v-head-dim 128 --kv-dtype bf16,fp8 --backend triton --baseline triton --trace "$OUT/pa_trace.json" \
        --json --quiet > "$OUT/trace_rows.json"
    timeout $(( STEP_LIMIT / 3 )) "$PY" -m perfreport.cli.app analyze "$OUT/pa_trace.json" --sheet unified_perf_summary \
        --format csv --quiet > "$OUT/analyze_trace.csv"
    echo "compare 'roofline median (%)' in analyze_trace.csv with trace_pct_roofline in trace_rows.json"
}

step_sweep() {
    timeout "$STEP_LIMIT" "$PY" scripts/pa_sweep.py "$OUT/sweep.csv" --context 65536 --budget-s $(( STEP_LIMIT - 15 ))
}

START=$(date +%s)
run_step device 30 step_device
run_step bandwidth 40 step_bandwidth
run_step gpu-tests 130 step_gpu_tests
run_step seed-grid 100 step_seed_grid
run_step graph-5dv 40 step_graph
run_step trace-analyze 45 step_trace
run_step sweep 65 step_sweep
{
    echo
    echo "== summary (total $(( $(date +%s) - START ))s)"
    printf '%s\n' "${SUMMARY[@]}"
} | tee -a "$LOG"
exit "$FAILED"
