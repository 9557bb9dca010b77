"""perfreport: roofline reports for PyTorch profiler traces.

Data flows one way: read -> tree -> passes -> models -> tables -> writers.
"""

__version__ = "0.1.0"
