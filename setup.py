"""The optional C accelerators of the read stage (perfreport/read/_collect.c) and of the tree's
nesting (perfreport/tree/_nest.c).

Everything else is in pyproject.toml. ``optional=True``: without a C compiler or the Python
headers the install still succeeds and ``Collector.add`` and ``tree.build._nest`` run their
Python loops."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("perfreport.read._collect", ["perfreport/read/_collect.c"], optional=True),
        Extension("perfreport.tree._nest", ["perfreport/tree/_nest.c"], optional=True),
    ]
)
