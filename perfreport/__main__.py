"""``python -m perfreport``: the command line."""

from perfreport.cli.app import main

main()
