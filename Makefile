# perfreport: `make demo` runs the main job on a bundled trace, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test test-gpu bench gpu-bundle gpu-dry-run clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build of torch for bench-pa (this exact pin is the local CPU wheel); analyze never imports it
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[bench,test,ray]'
	touch $(STAMP)

demo: install
	mkdir -p out
	$(VENV)/bin/perfreport analyze fixtures/h100_qwen_0.5b.json.gz -o out/h100_qwen_0.5b_perf_report.xlsx --summary

test: install
	$(VENV)/bin/ruff check perfreport tests scripts benchmarks
	$(VENV)/bin/ruff format --check perfreport tests scripts benchmarks
	$(PY) -m pytest -n auto

test-gpu: install
	$(PY) -m pytest -q -m gpu

bench: install
	$(PY) benchmarks/bench_analyze.py

# Wheels of perfreport's runtime dependencies for the GPU machine (CPython 3.12, no registry there):
# scripts/gpu_checks.sh installs the ones its image lacks from .whl/ (carry it). numpy is the
# image's own (torch needs that one). Keep the list equal to pyproject's dependencies (tested).
GPU_WHEELS := "typer>=0.12" "rich>=13" "pandas>=2.0" "openpyxl>=3.1" "orjson>=3.9" "msgspec>=0.18"
gpu-bundle:
	rm -rf .whl
	$(PY) -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
		--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
		-d .whl $(GPU_WHEELS)
	rm -f .whl/numpy-*.whl
	du -sh .whl

# scripts/gpu_checks.sh without a GPU: the CPU steps run, the GPU steps print SKIP
gpu-dry-run:
	GPU_CHECKS_MODE=dry OUT=$${OUT:-/tmp/gpu_checks_dry} PYTHON=$(PY) bash scripts/gpu_checks.sh

clean:
	rm -rf out bench_out .pytest_cache
