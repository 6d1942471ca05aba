"""``python -m codecite`` runs the command line."""

from .cli import main

main()
