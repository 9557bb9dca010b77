"""A typer command from a table of arguments (:class:`perfreport.cli.analyze_options.Opt`):
the callback typer reads is given the signature the table describes, so typer's help, shell
completion and error messages are what a hand-written signature would give, and the work is
one function that returns the exit code (which the plain command lines call without typer:
:mod:`perfreport.cli.main`)."""

import inspect

import typer


def typer_callback(name: str, argument, options, run, doc: str):
    """The callback of command ``name``: ``argument`` (the positional one), then ``options``,
    each a typer parameter with its default, names, metavar and help; calling it calls
    ``run(**values)`` and exits with what that returns."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter(
            argument.dest,
            kind,
            default=typer.Argument(argument.default, metavar=argument.metavar, help=argument.help),
            annotation=argument.annotation,
        )
    ]
    for o in options:
        info = typer.Option(o.default, *o.flags, metavar=o.metavar, help=o.help)
        params.append(inspect.Parameter(o.dest, kind, default=info, annotation=o.annotation))

    def callback(**values):
        raise typer.Exit(run(**values))

    callback.__signature__ = inspect.Signature(params)
    callback.__annotations__ = {p.name: p.annotation for p in params}
    callback.__doc__ = doc
    callback.__name__ = callback.__qualname__ = name
    return callback


__all__ = ["typer_callback"]
