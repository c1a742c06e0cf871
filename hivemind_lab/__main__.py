"""``python -m hivemind_lab`` runs the command line."""

from hivemind_lab.cli import main

main()
