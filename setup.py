"""The optional C accelerator of the read stage (perfreport/read/_collect.c).

Everything else is in pyproject.toml. ``optional=True``: without a C compiler or the Python
headers the install still succeeds and ``Collector.add`` runs its Python loop."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("perfreport.read._collect", ["perfreport/read/_collect.c"], optional=True)])
