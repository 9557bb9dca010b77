"""``python -m perfreport``: the command line."""

from perfreport.cli.main import main

main()
