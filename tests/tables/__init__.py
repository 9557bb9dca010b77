"""A package, so its test modules are imported as ``tables.test_<m>``: the mirror of
perfreport/tables/ shares basenames with other stages (steps, coverage, audit, columns)."""
