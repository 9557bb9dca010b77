"""Perf models: one registry (``registry.py``) maps op names to model classes and categories."""
