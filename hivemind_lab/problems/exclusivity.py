"""Kept importable for run results: where a request's exclusivity came from."""

from hivemind_lab.problems.model import ExclusiveSource

__all__ = ["ExclusiveSource"]
