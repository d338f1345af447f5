"""``python -m tcompact`` runs the command line."""

from .app import main

main()
