"""One progress display for the whole of a long ``perfreport analyze`` run (stderr, a terminal
only): reading (a bar over the input's bytes), building the tree, the passes, the sheets, then
each file written; for ``perfreport diff`` the same for side A, then side B, then the files.
It disappears before the summary is printed."""

from __future__ import annotations


class StageProgress:
    """``bytes(n)``: bytes of the input read so far; ``stage(text)``: the current stage
    (the bar then pulses: its length is unknown); ``begin(label, total_bytes)``: a new input
    (``perfreport diff``'s side A, then B): reading it, its stages shown as ``label: stage``.
    A no-op when ``enabled`` is False."""

    def __init__(self, console, total_bytes: int | None, enabled: bool = True):
        self._prog = None
        self._label = ""
        if not enabled:
            return
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

        self._prog = Progress(
            TextColumn("{task.description:<22}"),
            BarColumn(),
            DownloadColumn(),
            TimeElapsedColumn(),
            console=console.rich() if hasattr(console, "rich") else console,  # a cli.outputs.LazyConsole
            transient=True,
            redirect_stdout=False,  # stdout may carry a sheet: never through the progress console
        )
        self._task = self._prog.add_task("reading", total=total_bytes)

    def __enter__(self):
        if self._prog is not None:
            self._prog.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._prog is not None:
            self._prog.stop()
            self._prog = None

    def bytes(self, n: int) -> None:
        if self._prog is not None:
            self._prog.update(self._task, completed=n)

    def stage(self, text: str) -> None:
        if self._prog is not None:
            text = f"{self._label}: {text}" if self._label else text
            self._prog.update(self._task, description=text, total=None, completed=0)

    def begin(self, label: str, total_bytes: int | None) -> None:
        """Reading a new input, named ``label`` in the stages that follow ("" : none)."""
        self._label = label
        if self._prog is not None:
            desc = f"{label}: reading" if label else "reading"
            self._prog.update(self._task, description=desc, total=total_bytes, completed=0)


__all__ = ["StageProgress"]
