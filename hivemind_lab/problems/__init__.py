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

if TYPE_CHECKING:  # the table below, for type checkers (re-exported by name)
    from hivemind_lab.problems.decision import decide as decide
    from hivemind_lab.problems.loading import TEXT_SUFFIXES as TEXT_SUFFIXES
    from hivemind_lab.problems.loading import AttachedDocument as AttachedDocument
    from hivemind_lab.problems.loading import ConstraintSpec as ConstraintSpec
    from hivemind_lab.problems.loading import Problem as Problem
    from hivemind_lab.problems.loading import SuggestedInputs as SuggestedInputs
    from hivemind_lab.problems.loading import load_problem as load_problem
    from hivemind_lab.problems.loading import load_problems as load_problems
    from hivemind_lab.problems.loading import problem_from_text as problem_from_text
    from hivemind_lab.problems.loading import resolve_problem as resolve_problem
    from hivemind_lab.problems.model import Constraint as Constraint
    from hivemind_lab.problems.model import Decision as Decision
    from hivemind_lab.problems.model import Fact as Fact
    from hivemind_lab.problems.model import Option as Option
    from hivemind_lab.problems.model import Refusal as Refusal


_HOMES: dict[str, str] = {
    "decide": "hivemind_lab.problems.decision",
    "TEXT_SUFFIXES": "hivemind_lab.problems.loading",
    "AttachedDocument": "hivemind_lab.problems.loading",
    "ConstraintSpec": "hivemind_lab.problems.loading",
    "Problem": "hivemind_lab.problems.loading",
    "SuggestedInputs": "hivemind_lab.problems.loading",
    "load_problem": "hivemind_lab.problems.loading",
    "load_problems": "hivemind_lab.problems.loading",
    "problem_from_text": "hivemind_lab.problems.loading",
    "resolve_problem": "hivemind_lab.problems.loading",
    "Constraint": "hivemind_lab.problems.model",
    "Decision": "hivemind_lab.problems.model",
    "Fact": "hivemind_lab.problems.model",
    "Option": "hivemind_lab.problems.model",
    "Refusal": "hivemind_lab.problems.model",
}
"""Each public name and the module that defines it: the one table the package's ``__all__`` and
``__getattr__`` come from (tests/test_lazy.py checks the ``TYPE_CHECKING`` imports match it)."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
