"""Errors that reach the user as one line on stderr (never a traceback)."""


class BadInput(Exception):
    """The input trace (or an option) is unusable. Exit code 2.

    The message names the file and the problem in one line.
    """

    exit_code = 2

    def __init__(self, source: str, problem: str):
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


class ModelError(Exception):
    """A perf model cannot read its op event; the message becomes the row's reason column."""
