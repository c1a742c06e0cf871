"""Kept importable for the agents' policy: the code lives in `hivemind_lab.problems.reading.subjects`."""

from hivemind_lab.problems.reading.subjects import subject_length, word_classes

__all__ = ["subject_length", "word_classes"]
