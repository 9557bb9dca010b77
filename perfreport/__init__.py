"""perfreport: roofline reports for PyTorch profiler traces.

Data flows one way: read -> tree -> passes -> models -> tables -> writers.

Python API (see docs/api.md)::

    import perfreport
    report = perfreport.analyze("trace.json.gz", arch="h100")
    report.sheet("unified_perf_summary").to_pandas()
    report.to_excel("report.xlsx")
"""

__version__ = "0.1.0"

__all__ = ["analyze", "Report", "BadInput", "__version__"]


def __getattr__(name):  # lazy: `import perfreport` stays cheap for the CLI
    if name == "analyze":
        from perfreport.pipeline import analyze

        return analyze
    if name == "Report":
        from perfreport.report import Report

        return Report
    if name == "BadInput":
        from perfreport.errors import BadInput

        return BadInput
    raise AttributeError(f"module 'perfreport' has no attribute {name!r}")
