"""The client's problem, read: where the flow starts, before knowledge and agents.

`loading` reads a problem (a .toml file, a .txt/.md file with optional front matter, or the
text itself) into a `Problem`; `model` holds the `Decision` a run deliberates (options, facts,
binding constraints, exclusivity, each with its source); `reading` is the rule reader, which
suggests a decision from the text and refuses when unsure; `decision.decide` builds the decision
once from explicit sources first, then the reader.

Names are imported on first use, so reading options does not load the problem file machinery
(and the other way round).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from hivemind_lab.problems.decision import decide
    from hivemind_lab.problems.loading import (
        TEXT_SUFFIXES,
        AttachedDocument,
        ConstraintSpec,
        Problem,
        SuggestedInputs,
        load_problem,
        load_problems,
        problem_from_text,
        resolve_problem,
    )
    from hivemind_lab.problems.model import Constraint, Decision, Fact, Option, Refusal

__all__ = [
    "TEXT_SUFFIXES",
    "AttachedDocument",
    "Constraint",
    "ConstraintSpec",
    "Decision",
    "Fact",
    "Option",
    "Problem",
    "Refusal",
    "SuggestedInputs",
    "decide",
    "load_problem",
    "load_problems",
    "problem_from_text",
    "resolve_problem",
]

_HOMES = {
    **{name: "hivemind_lab.problems.loading" for name in __all__},
    **{
        n: "hivemind_lab.problems.model"
        for n in ("Constraint", "Decision", "Fact", "Option", "Refusal")
    },
    "decide": "hivemind_lab.problems.decision",
}

__getattr__ = lazy_exports(__name__, _HOMES)
