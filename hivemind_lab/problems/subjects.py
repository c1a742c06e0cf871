"""Kept importable for the agents' policy: the code now lives in `hivemind_lab.problems.reading.subjects`."""

from hivemind_lab.problems.reading.subjects import subject_length, tie_subjects, untie, word_classes

__all__ = ["subject_length", "tie_subjects", "untie", "word_classes"]
