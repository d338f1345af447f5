"""``python -m tcompact`` runs the command line (the hooks and the status line without it: tcompact.launch)."""

from .launch import main

main()
