#!/usr/bin/env bash
# GPU checks for bench-pa and the Triton paged-attention kernel (issue 20), in ONE self-sufficient run.
#
#   make gpu-bundle                                  # HERE, once: wheels of analyze's deps into .whl/
#   OUT=/some/dir bash scripts/gpu_checks.sh         # THERE, from the repository root (carry .whl)
#   GPU_CHECKS_MODE=dry OUT=/tmp/x bash scripts/gpu_checks.sh   # anywhere: GPU steps marked SKIP
#
# No registry access is needed on the GPU machine: the wheels the image lacks are installed from
# .whl/ into /tmp/site (scripts/gpu_bundle_install.py installs only those whose modules are missing).
# Steps, each in its own subshell (set -euo pipefail) under its own timeout, in this order:
#   setup           wheels, imports of every analyze dependency, `perfreport analyze` on a bundled trace
#   device          GPU, driver, torch / triton versions
#   bandwidth       measured read-only and copy bandwidth (4 GB), written to bandwidth.json
#   headline-bf16   bench-pa --graph, B32 q4 16:1 Dk192 Dv128 page 64, 16K and 64K, NHD and 5DV, triton vs torch
#   headline-fp8    the same with FP8 KV (f16 path, the default)
#   headline-fp8mma the same with --fp8-mma fp8 (FP8 MMAs)
#   gpu-tests       pytest -m gpu tests/pa/kernel/test_pa_gpu.py
#   trace-analyze   one traced launch per case, read back by `perfreport analyze`
#   sweep           scripts/pa_sweep.py: every path's default first, then num_stages, block_n, ...
#   table           scripts/pa_gpu_table.py: BF16 % of the measured read bandwidth, FP8/BF16, vs torch
# Each headline path is its own step, so a failure in one never skips another. Every step prints
# "PASS|FAIL|SKIP <step> (...)" as it ends (stdout and log.txt); the script exits 1 if any step
# failed. Steps past the total budget (TOTAL_S, 470 s: under 8 minutes) are SKIPped, except the table.
# Files under $OUT (at most 8, the device tool's limit): log.txt bandwidth.json headline.csv
# sweep.csv table.md pa_trace.json trace_rows.json analyze_trace.csv
set -u
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
LOG="$OUT/log.txt"
TOTAL_S=${TOTAL_S:-470}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu_checks.XXXXXX")
: > "$LOG"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
unset TRITON_INTERPRET
if [ -z "${GPU_CHECKS_MODE:-}" ]; then
    if "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" > /dev/null 2>&1; then
        GPU_CHECKS_MODE=gpu
    else
        GPU_CHECKS_MODE=dry
    fi
fi
FAILED=0
START=$(date +%s)

say() { echo "$*" | tee -a "$LOG"; }

# run_step NAME TIMEOUT_S KIND FUNCTION: KIND "gpu" steps are SKIPped in a dry run
run_step() {
    local name=$1 limit=$2 kind=$3 fn=$4 t0 rc dt
    if [ "$kind" = gpu ] && [ "$GPU_CHECKS_MODE" != gpu ]; then
        say "SKIP $name (no GPU: dry run)"
        return
    fi
    if [ "$name" != table ] && [ $(( $(date +%s) - START + limit )) -gt "$TOTAL_S" ]; then
        say "SKIP $name (would pass the ${TOTAL_S}s total budget)"
        return
    fi
    t0=$(date +%s)
    { echo; echo "== $name ($(date +%T), limit ${limit}s)"; } >> "$LOG"
    ( set -euo pipefail; export STEP_LIMIT=$limit; "$fn" ) >> "$LOG" 2>&1
    rc=$?
    dt=$(( $(date +%s) - t0 ))
    if [ "$rc" -eq 0 ]; then
        say "PASS $name (${dt}s)"
    else
        say "FAIL $name (exit $rc, ${dt}s; see log.txt)"
        FAILED=1
    fi
}

step_setup() {
    if ls .whl/*.whl > /dev/null 2>&1; then
        timeout "$STEP_LIMIT" "$PY" scripts/gpu_bundle_install.py .whl /tmp/site
    fi
    export PYTHONPATH="/tmp/site:$PYTHONPATH"
    timeout "$STEP_LIMIT" "$PY" -c "import typer, rich, numpy, openpyxl, orjson, msgspec, perfreport.cli.app, perfreport.cli.main; print('analyze imports: ok')"
    timeout "$STEP_LIMIT" "$PY" -m perfreport analyze fixtures/h100_qwen_0.5b.json.gz \
        -o "$WORK/analyze_check.xlsx" --quiet
    test -s "$WORK/analyze_check.xlsx"
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
    timeout "$STEP_LIMIT" "$PY" scripts/pa_bandwidth.py "$OUT/bandwidth.json"
}

HEAD=(--context 16k,64k --batch 32 --query-len 4 --q-heads 16 --kv-heads 1 --head-dim 192 --v-head-dim 128
      --page-size 64 --layout nhd,5dv --graph --backend triton,torch --baseline torch --reps 50 --quiet)
headline() {  # headline KV FP8_MMA PATH: one bench-pa run, its rows appended to $OUT/headline.csv
    local csv="$WORK/headline_$3.csv" rc=0
    timeout "$STEP_LIMIT" "$PY" -m perfreport bench-pa "${HEAD[@]}" --kv-dtype "$1" --fp8-mma "$2" \
        --csv "$csv" || rc=$?
    [ -f "$csv" ] || csv="$WORK/.headline_$3.csv.partial"  # killed or failed: what it measured
    [ -f "$csv" ] && "$PY" scripts/pa_gpu_table.py --append "$csv" "$OUT/headline.csv" "$3"
    return "$rc"
}
step_headline_bf16() { headline bf16 f16 bf16; }
step_headline_fp8() { headline fp8 f16 fp8-f16; }
step_headline_fp8mma() { headline fp8 fp8 fp8-fp8; }

step_gpu_tests() {
    timeout "$STEP_LIMIT" "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/pa/kernel/test_pa_gpu.py
}

step_trace() {
    timeout $(( STEP_LIMIT * 2 / 3 )) "$PY" -m perfreport bench-pa --context 64k --batch 32 --query-len 4 \
        --q-heads 16 --kv-heads 1 --head-dim 192 --page-size 64 --v-head-dim 128 --kv-dtype bf16,fp8 \
        --backend triton --baseline triton --trace "$OUT/pa_trace.json" --json --quiet > "$OUT/trace_rows.json"
    timeout $(( STEP_LIMIT / 3 )) "$PY" -m perfreport analyze "$OUT/pa_trace.json" \
        --sheet unified_perf_summary --format csv --quiet > "$OUT/analyze_trace.csv"
    echo "compare 'roofline median (%)' in analyze_trace.csv with trace_pct_roofline in trace_rows.json"
}

step_sweep() {
    timeout "$STEP_LIMIT" "$PY" scripts/pa_sweep.py "$OUT/sweep.csv" --context 65536 --budget-s $(( STEP_LIMIT - 10 ))
}

step_table() {
    "$PY" scripts/pa_gpu_table.py --bandwidth "$OUT/bandwidth.json" "$OUT/headline.csv" "$OUT/table.md"
    cat "$OUT/table.md"
}

say "gpu_checks: mode $GPU_CHECKS_MODE, total budget ${TOTAL_S}s, out $OUT"
run_step setup 40 cpu step_setup
export PYTHONPATH="/tmp/site:$PYTHONPATH"
run_step device 15 gpu step_device
run_step bandwidth 30 gpu step_bandwidth
run_step headline-bf16 75 gpu step_headline_bf16
run_step headline-fp8 60 gpu step_headline_fp8
run_step headline-fp8mma 50 gpu step_headline_fp8mma
run_step gpu-tests 100 gpu step_gpu_tests
run_step trace-analyze 40 gpu step_trace
run_step sweep 50 gpu step_sweep
if [ "$GPU_CHECKS_MODE" = gpu ]; then
    run_step table 10 cpu step_table
else
    say "SKIP table (no GPU: dry run; no rows to tabulate)"
fi
say "== total $(( $(date +%s) - START ))s, $( [ $FAILED -eq 0 ] && echo 'all steps passed or skipped' || echo 'SOME STEPS FAILED')"
rm -rf "$WORK"
exit "$FAILED"
