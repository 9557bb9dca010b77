"""The command line: a thin typer layer over :mod:`perfreport.pipeline` and the other stages."""
