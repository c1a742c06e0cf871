"""The client's problem, read: where the flow starts, before knowledge and agents.

`loading` reads a problem (a .toml file, a .txt/.md file or the text itself) into a `Problem`;
`text` splits its prose into blocks and sentences; `options` (with `option_text`, `yes_no` and
`subjects`) finds the courses of action the question weighs, `exclusivity` whether it takes one
of them, and `decision` gathers options and facts for the agents.

The loader's names are imported on first use, so reading options does not load the problem
file machinery (and the other way round).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from hivemind_lab.problems.loading import (
        TEXT_SUFFIXES,
        AttachedDocument,
        Problem,
        SuggestedInputs,
        load_problem,
        load_problems,
        problem_from_text,
        resolve_problem,
    )

__all__ = [
    "TEXT_SUFFIXES",
    "AttachedDocument",
    "Problem",
    "SuggestedInputs",
    "load_problem",
    "load_problems",
    "problem_from_text",
    "resolve_problem",
]

_HOMES = {name: "hivemind_lab.problems.loading" for name in __all__}

__getattr__ = lazy_exports(__name__, _HOMES)
