"""perfreport: roofline reports for PyTorch profiler traces.

Data flows one way: read -> tree -> passes -> models -> tables -> writers.

Python API (see docs/api.md)::

    import perfreport
    report = perfreport.analyze("trace.json.gz", arch="h100")
    report                                   # one line; in a notebook: coverage and top rows
    report.sheet("unified_perf_summary").to_pandas()
    report.to_excel("report.xlsx")

Public names (:data:`__all__`, also what ``dir(perfreport)`` lists): :func:`analyze`,
:func:`load_tree`, :func:`analyze_ranks` (``perfreport.diff.diff`` compares two), :class:`Report`, :class:`Sheet`,
:class:`GpuSpec`, :func:`load_arch`, :func:`list_archs`, :class:`BadInput`, ``__version__``.
They are imported on first use, so ``import perfreport`` stays cheap for the CLI. Importing or
calling them changes nothing process-wide (glibc malloc tuning is opt-in:
``analyze(..., tune_malloc=True)``; the CLI opts in).
"""

__version__ = "0.1.0"

# name -> (module, attribute)
_PUBLIC = {
    "analyze": ("perfreport.pipeline", "analyze"),
    "load_tree": ("perfreport.pipeline", "load_tree"),
    "analyze_ranks": ("perfreport.multi", "analyze_ranks"),
    "Report": ("perfreport.report", "Report"),
    "Sheet": ("perfreport.tables.sheet", "Sheet"),
    "GpuSpec": ("perfreport.specs", "GpuSpec"),
    "load_arch": ("perfreport.specs", "load_arch"),
    "list_archs": ("perfreport.specs", "list_archs"),
    "BadInput": ("perfreport.errors", "BadInput"),
}

__all__ = [*_PUBLIC, "__version__"]


def __getattr__(name):  # lazy: `import perfreport` stays cheap for the CLI
    if name in _PUBLIC:
        import importlib

        mod, attr = _PUBLIC[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'perfreport' has no attribute {name!r}")


def __dir__():
    return sorted(set(__all__) | {"__doc__", "__file__", "__name__", "__path__", "__spec__"})
