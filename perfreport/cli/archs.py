"""``perfreport archs``: the built-in GPU specs."""

# annotations stay objects (no `from __future__ import annotations`): typer reads this signature
# at every start, and evaluating ~300 annotation strings cost it ~8 ms

import sys

import typer


def archs(json_out: bool = typer.Option(False, "--json", help="JSON on stdout [default: a table]")):
    """List the GPUs with built-in specs (memory bandwidth, dense peaks)."""
    from perfreport.specs import list_archs

    specs = list_archs()
    if json_out:
        import orjson

        sys.stdout.write(
            orjson.dumps(
                [
                    {
                        "key": s.key,
                        "name": s.name,
                        "mem_bw_tbps": s.mem_bw_tbps,
                        "llc_bytes": s.llc_bytes,
                        "host_link_gbps": s.host_link_gbps,
                        "peaks_tflops": s.peaks,
                        "name_patterns": s.match.get("name_patterns", []),
                    }
                    for s in specs
                ],
                option=orjson.OPT_INDENT_2,
            ).decode()
            + "\n"
        )
        return
    from rich.console import Console
    from perfreport.writers.archs_table import archs_table

    Console(width=None if sys.stdout.isatty() else 120).print(archs_table(specs))
