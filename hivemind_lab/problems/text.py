"""Kept importable for the agents' policy: the text lives in `hivemind_lab.problems.reading.text`."""

from hivemind_lab.problems.reading.text import FIGURE, Block, read_blocks, sentences

__all__ = ["FIGURE", "Block", "read_blocks", "sentences"]
