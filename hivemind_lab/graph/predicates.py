"""Predicate semantics: which pairs of assertions about one subject contradict each other.

- single-valued predicates (``is``, ``equals``, ``capital_of``…) hold one object per subject, so
  a different object is a conflict;
- multi-valued predicates (``causes``, ``includes``, ``relates_to``…) may hold many objects, so a
  different object is not a conflict;
- negations (``is_not``, ``contradicts``, ``negates``) conflict with any non-negated assertion of
  the same object about the same subject;
- an unknown predicate follows the spec's rule: same predicate, different object ⇒ conflict.
Predicates are compared by their keys (`hivemind_lab.graph.keys.predicate_key`: NFKC, invisible
characters removed, case-folded; ``-`` and ``_`` and spaces are equivalent).
"""

from __future__ import annotations

from typing import Literal

from hivemind_lab.graph.keys import predicate_key
from hivemind_lab.models import Frozen

__all__ = ["ConflictType", "PredicateRegistry", "predicate_key"]

ConflictType = Literal["different_object", "negation"]


class PredicateRegistry(Frozen):
    """Declared semantics of predicates (configurable; these are the documented defaults)."""

    single_valued: frozenset[str] = frozenset(
        {
            "is",
            "equals",
            "is_a",
            "requires_exactly",
            "capital_of",
            "located_in",
            "born_in",
            "founded_in",
            "has_value",
            "defined_as",
            "author_of",
            "ceo_of",
            "synthesized_as",
        }
    )
    multi_valued: frozenset[str] = frozenset(
        {
            "causes",
            "includes",
            "relates_to",
            "implies",
            "requires",
            "supports",
            "enables",
            "influences",
            "part_of",
            "has_part",
            "uses",
            "mentions",
            "recommends",
            "cites",
            "correlates_with",
            "precedes",
        }
    )
    negations: frozenset[str] = frozenset({"is_not", "contradicts", "negates"})

    def conflict(self, pred_a: str, obj_a: str, pred_b: str, obj_b: str) -> ConflictType | None:
        """Whether two assertions about the same subject (normalised) contradict each other."""
        neg_a, neg_b = pred_a in self.negations, pred_b in self.negations
        if neg_a != neg_b and obj_a == obj_b:
            return "negation"
        if neg_a or neg_b:
            return None
        if pred_a != pred_b or obj_a == obj_b:
            return None
        if pred_a in self.multi_valued:
            return None
        return "different_object"
