"""The ``hivemind-lab`` command line: `app` wires the command tree (and holds kb and audit);
`deliberate`, `experiments`, `loops` and `services` hold the other commands, `common` what
all of them share.

Nothing heavy is imported until a command runs, so ``--help`` and input errors answer at once.
"""

from hivemind_lab.cli.app import app, main

__all__ = ["app", "main"]
