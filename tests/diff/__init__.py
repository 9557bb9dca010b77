"""A package, so its test modules are imported as ``diff.test_<m>``: tests/cli/test_diff.py
(perfreport/cli/diff.py) shares the basename of tests/diff/test_diff.py."""
