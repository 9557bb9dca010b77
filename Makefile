# perfreport: `make demo` runs the main job on a bundled trace, `make test` runs the tests.
# `demo` installs the base package only (what `analyze`, `diff`, `archs` import; see the README's
# table); `test` adds the extras: bench (torch CPU build + triton, for bench-pa), ray
# (--engine ray), pandas (Sheet.df / to_pandas) and the test tools.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.installed-base
FULL := $(VENV)/.installed-test
EXTRAS := bench,test,ray,pandas

.PHONY: install install-test demo test test-gpu bench gpu-bundle gpu-dry-run clean

install: $(BASE)

# setup.py builds the optional C accelerators (perfreport/read/_collect.c, perfreport/tree/_nest.c)
# in place; without a C compiler the install still succeeds and the reader and the tree build run
# their Python loops
$(BASE): pyproject.toml setup.py perfreport/read/_collect.c perfreport/tree/_nest.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e .
	touch $(BASE)

install-test: $(FULL)

$(FULL): $(BASE)
	# CPU build of torch for bench-pa (this exact pin is the local CPU wheel; a bare `torch` pulls
	# the CUDA build); analyze never imports it
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $(FULL)

demo: install
	mkdir -p out
	$(VENV)/bin/perfreport analyze fixtures/h100_qwen_0.5b.json.gz -o out/h100_qwen_0.5b_perf_report.xlsx --summary

# bytecode cached even where PYTHONDONTWRITEBYTECODE is set (pytest rewrites and compiles every test
# module in every worker otherwise: collection 14.8 -> 7.5 CPU s per worker); pyproject's -q keeps
# the pass/skip/fail summary line, and its --dist loadgroup hands every test file out whole to one
# worker, the longest first (tests/conftest.py's GROUPS and COST)
test: install-test
	$(VENV)/bin/ruff check perfreport tests scripts benchmarks
	$(VENV)/bin/ruff format --check perfreport tests scripts benchmarks
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n auto

test-gpu: install-test
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -m gpu

bench: install-test
	$(PY) benchmarks/bench_analyze.py

# Wheels of perfreport's runtime dependencies for the GPU machine (CPython 3.12, no registry there):
# scripts/gpu_checks.sh installs the ones its image lacks from .whl/ (carry it). numpy is the
# image's own (torch needs that one). The list equals pyproject's dependencies
# (tests/house/test_packaging.py).
GPU_WHEELS := "typer>=0.12" "rich>=13" "numpy>=1.24" "openpyxl>=3.1" "orjson>=3.9" "msgspec>=0.18"
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
