# perfreport: `make demo` runs the main job on a bundled trace, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test test-gpu bench clean

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

clean:
	rm -rf out bench_out .pytest_cache
