"""A package, so its test modules are imported as ``multi.test_<m>``: the mirror of
perfreport/multi/ shares basenames with other stages (report, coverage)."""
