"""The ``hivemind-lab`` command line: `app` wires the command tree (kb, deliberate, audit);
`experiments`, `loops` and `services` hold the other commands and `common` what all share.

Nothing heavy is imported until a command runs, so ``--help`` and input errors answer at once.
"""

from hivemind_lab.cli.app import app, main

__all__ = ["app", "main"]
