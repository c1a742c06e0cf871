"""Kept importable for run results: the reading now lives in `hivemind_lab.problems.reading.exclusivity`."""

from hivemind_lab.problems.reading.exclusivity import ExclusiveSource, read_exclusive

__all__ = ["ExclusiveSource", "read_exclusive"]
