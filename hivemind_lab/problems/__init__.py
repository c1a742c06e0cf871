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

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
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


_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
