"""How well a reader reads the client's decision out of free text: options, exclusivity,
binding constraints and refusals, against the labelled problems of ../shared/eval/decisions.

The data is read in place (never copied into the repository). Tune a reader on ``dev`` only;
``test`` is for reporting. Matching, one-to-one and greedy (best pairs first): an extracted
option matches a gold option when the Dice overlap of their content words (Snowball-stemmed,
stop words dropped) is at least 0.5 against the gold label or its quoted span. A refusal
returns no options: it costs recall, never precision.

- option precision / recall: matched options over extracted / over gold options;
- exact set: every gold option matched and nothing else extracted (a refusal on an open
  question, whose gold is ``[]``, counts as exact);
- exclusivity: accuracy on the problems whose gold ``exclusive`` is not null;
- constraint recall: gold constraints that forbid an option, found (Dice ≥ 0.5 against the
  quote) with at least one of their forbidden options linked; ``constraints found``: every
  gold constraint, found by its text alone;
- constraint precision: the reader's constraints that are a gold constraint by their text, over
  all it read (refused problems included: their constraints are still recorded and reported);
  ``forbid precision``: the options the reader says a constraint forbids that a matching gold
  constraint forbids, over all it says are forbidden (a wrong one vetoes a course the client
  may take);
- refusal rate: problems the reader refused.

Usage: python benchmarks/decision_reading.py [--split dev|test|both] [--reader rule|intake]
[--shared ../shared] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import snowballstemmer

MATCH = 0.5
"""Dice overlap of content stems from which an extracted option or constraint is a gold one."""

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "into",
        "onto",
        "as",
        "is",
        "are",
        "be",
        "been",
        "being",
        "was",
        "were",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "we",
        "our",
        "us",
        "i",
        "my",
        "me",
        "you",
        "your",
        "they",
        "their",
        "them",
        "he",
        "she",
        "his",
        "her",
        "not",
        "no",
        "do",
        "does",
        "did",
        "will",
        "would",
        "should",
        "could",
        "can",
        "may",
        "might",
        "must",
        "shall",
        "has",
        "have",
        "had",
        "there",
        "here",
        "which",
        "what",
        "who",
        "whom",
        "how",
        "when",
        "where",
        "why",
        "than",
        "then",
        "so",
        "if",
        "but",
        "also",
        "any",
        "all",
        "some",
        "more",
        "most",
        "such",
        "only",
        "own",
        "same",
        "other",
        "up",
        "out",
        "over",
        "under",
        "about",
        "after",
        "before",
        "again",
        "further",
        "once",
    ]
)


class ReadConstraint(NamedTuple):
    text: str
    forbids: tuple[int, ...]
    """Indexes into the reading's options."""


class Reading(NamedTuple):
    """What a reader made of one problem."""

    options: tuple[str, ...]
    exclusive: bool | None
    constraints: tuple[ReadConstraint, ...]
    refused: bool


Reader = Callable[[str], Reading]


def rule_reader(text: str) -> Reading:
    """The offline rule reader (`hivemind_lab.problems.reading`)."""
    from hivemind_lab.problems.reading import read_decision

    decision = read_decision(text)
    return Reading(
        options=tuple(o.label for o in decision.options),
        exclusive=decision.exclusive,
        constraints=tuple(
            ReadConstraint(c.quote or c.text, tuple(c.forbids)) for c in decision.constraints
        ),
        refused=decision.refusal is not None,
    )


INTAKE_DROPS: dict[str, int] = {
    "problems": 0,
    "items": 0,
    "schema_failures": 0,
    "call_errors": 0,
    "model_calls": 0,
}
"""What the intake's quote checks dropped over a benchmark run (filled by `intake_reader`)."""


def intake_reader(model: Any, runner: asyncio.Runner) -> Reader:
    """The model intake (`hivemind_lab.problems.intake`) on ``model``, a chat model, every call
    on ``runner``'s one event loop (the model's HTTP client is bound to it)."""
    from hivemind_lab.errors import HivemindError
    from hivemind_lab.problems.intake import read_intake
    from hivemind_lab.problems.loading import Problem

    def read(text: str) -> Reading:
        try:
            problem = Problem(id="benchmark", title="benchmark", question=text)
            result = runner.run(read_intake(model, problem))
        except HivemindError:  # the endpoint failed (timeout): counted, read as a refusal
            INTAKE_DROPS["call_errors"] += 1
            return Reading(options=(), exclusive=None, constraints=(), refused=True)
        decision, call = result.decision, result.call
        INTAKE_DROPS["problems"] += bool(call.dropped)
        INTAKE_DROPS["items"] += len(call.dropped)
        INTAKE_DROPS["schema_failures"] += call.error is not None
        INTAKE_DROPS["model_calls"] += 0 if call.cached else max(1, len(call.replies))
        return Reading(
            options=tuple(o.label for o in decision.options),
            exclusive=decision.exclusive,
            constraints=tuple(
                ReadConstraint(c.quote or c.text, tuple(c.forbids)) for c in decision.constraints
            ),
            refused=decision.refusal is not None,
        )

    return read


READERS = ("rule", "intake")


@functools.cache
def _stemmer() -> Any:
    return snowballstemmer.stemmer("english")


def stems(text: str) -> frozenset[str]:
    """Content words of a text, Snowball-stemmed, without stop words."""
    words = [w for w in re.findall(r"[^\W_]+", text.casefold()) if w not in _STOP]
    return frozenset(_stemmer().stemWords(words))


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def match_options(extracted: Sequence[str], gold: dict[str, Any]) -> dict[int, int]:
    """One-to-one matches, extracted index → gold index, best overlaps first."""
    labels, quotes = gold["options"], gold.get("option_quotes") or []
    pairs = []
    for i, option in enumerate(extracted):
        mine = stems(option)
        for j, label in enumerate(labels):
            quote = quotes[j] if j < len(quotes) else ""
            score = max(dice(mine, stems(label)), dice(mine, stems(quote)))
            if score >= MATCH:
                pairs.append((score, i, j))
    matched: dict[int, int] = {}
    for _, i, j in sorted(pairs, reverse=True):
        if i not in matched and j not in matched.values():
            matched[i] = j
    return matched


class Scores(NamedTuple):
    problems: int
    extracted: int
    gold_options: int
    matched: int
    exact: int
    exclusive_right: int
    exclusive_gold: int
    forbidding: int
    forbidding_found: int
    constraints: int
    constraints_found: int
    read_constraints: int
    read_constraints_right: int
    read_forbids: int
    read_forbids_right: int
    refused: int
    seconds: float

    def summary(self) -> dict[str, float | int | None]:
        def ratio(a: int, b: int) -> float:
            return round(a / b, 3) if b else 0.0

        return {
            "problems": self.problems,
            "option_precision": ratio(self.matched, self.extracted),
            "option_recall": ratio(self.matched, self.gold_options),
            "exact_set": ratio(self.exact, self.problems),
            "exclusivity_accuracy": ratio(self.exclusive_right, self.exclusive_gold),
            "constraint_recall": ratio(self.forbidding_found, self.forbidding),
            "constraints_found": ratio(self.constraints_found, self.constraints),
            "constraint_precision": ratio(self.read_constraints_right, self.read_constraints),
            # None when nothing was said to be forbidden (no precision to speak of)
            "forbid_precision": ratio(self.read_forbids_right, self.read_forbids)
            if self.read_forbids
            else None,
            "read_constraints": self.read_constraints,
            "read_forbids": self.read_forbids,
            "refusal_rate": ratio(self.refused, self.problems),
            "extracted": self.extracted,
            "matched": self.matched,
            "gold_options": self.gold_options,
            "ms_per_problem": round(1000 * self.seconds / max(self.problems, 1), 1),
        }


def is_constraint(read: ReadConstraint, gold: dict[str, Any]) -> bool:
    """Whether a read constraint is a gold one by its text (Dice ≥ 0.5, or it holds the quote)."""
    quote = gold["quote"]
    return dice(stems(read.text), stems(quote)) >= MATCH or quote.casefold() in read.text.casefold()


def score_one(reading: Reading, gold: dict[str, Any]) -> dict[str, int]:
    options = () if reading.refused else reading.options
    matched = match_options(options, gold)
    exact = len(matched) == len(options) == len(gold["options"])
    found_forbidding = found_any = forbidding = 0
    golds = gold.get("constraints") or []
    for constraint in golds:
        forbids = set(constraint.get("forbids") or [])
        forbidding += bool(forbids)
        hits = [c for c in reading.constraints if is_constraint(c, constraint)]
        found_any += bool(hits)
        linked = any(matched.get(i) in forbids for c in hits for i in c.forbids)
        found_forbidding += bool(forbids) and linked
    right = [[g for g in golds if is_constraint(c, g)] for c in reading.constraints]
    forbids_said = [(c, i) for c in reading.constraints for i in c.forbids if i < len(options)]
    forbids_right = [
        (c, i)
        for c, i in forbids_said
        if any(matched.get(i) in (g.get("forbids") or []) for g in golds if is_constraint(c, g))
    ]
    gold_exclusive = gold.get("exclusive")
    return {
        "extracted": len(options),
        "gold_options": len(gold["options"]),
        "matched": len(matched),
        "exact": int(exact),
        "exclusive_gold": int(gold_exclusive is not None),
        "exclusive_right": int(gold_exclusive is not None and reading.exclusive is gold_exclusive),
        "forbidding": forbidding,
        "forbidding_found": found_forbidding,
        "constraints": len(gold.get("constraints") or []),
        "constraints_found": found_any,
        "read_constraints": len(reading.constraints),
        "read_constraints_right": sum(bool(gs) for gs in right),
        "read_forbids": len(forbids_said),
        "read_forbids_right": len(forbids_right),
        "refused": int(reading.refused),
    }


def problems(folder: Path) -> list[tuple[str, str, dict[str, Any]]]:
    if not folder.is_dir():
        raise SystemExit(f"{folder} not found (the shared evaluation data is read in place)")
    found = []
    for text_path in sorted(folder.glob("*.txt")):
        gold = json.loads(text_path.with_suffix(".json").read_text("utf-8"))
        found.append((text_path.stem, text_path.read_text("utf-8"), gold))
    return found


def run_split(
    folder: Path, reader: Reader, *, verbose: bool = False, limit: int = 0
) -> tuple[Scores, list[dict[str, Any]]]:
    totals: dict[str, int] = {}
    rows = []
    started = time.perf_counter()
    listed = problems(folder)
    for name, text, gold in listed[:limit] if limit else listed:
        reading = reader(text)
        one = score_one(reading, gold)
        for key, value in one.items():
            totals[key] = totals.get(key, 0) + value
        rows.append(
            {
                "problem": name,
                "options": list(reading.options),
                "refused": reading.refused,
                "exclusive": reading.exclusive,
                **one,
            }
        )
    seconds = time.perf_counter() - started
    fields = {k: totals.get(k, 0) for k in Scores._fields if k not in ("problems", "seconds")}
    return Scores(problems=len(rows), seconds=seconds, **fields), rows


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_1m": round(load[0], 2),
    }


def read_splits(
    out: dict[str, Any], splits: Sequence[str], reader: Reader, args: argparse.Namespace
) -> None:
    for split in splits:
        scores, rows = run_split(
            args.shared / "eval" / "decisions" / split, reader, limit=args.limit
        )
        out["splits"][split] = scores.summary()
        if args.verbose:
            out["splits"][split]["problems_read"] = rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--reader", choices=READERS, default="rule")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="intake: response cache to reuse (default: a fresh one, every call made)",
    )
    parser.add_argument("--shared", type=Path, default=Path("../shared"))
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--limit", type=int, default=0, help="only the first N problems")
    parser.add_argument("--timeout", type=float, default=900.0, help="intake: seconds a call")
    parser.add_argument("--verbose", action="store_true", help="print each problem's reading")
    args = parser.parse_args(argv)
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    out: dict[str, Any] = {"reader": args.reader, "machine": machine(), "splits": {}}
    if args.reader == "rule":
        read_splits(out, splits, rule_reader, args)
    else:
        import tempfile

        from hivemind_lab.agents.backends import backend_choice, local_server
        from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
        from hivemind_lab.llm.local import LocalChatModel

        with (
            tempfile.TemporaryDirectory() as tmp,
            local_server(backend_choice("local"), slots=1) as server,
            asyncio.Runner() as runner,
        ):
            # One slot, a long timeout and no retries: a small model on a loaded machine
            # writes a few tokens a second, and a retried call starts over.
            chat = LocalChatModel(server.endpoint, timeout_s=args.timeout, max_retries=0)
            cache = ResponseCache(args.cache or Path(tmp) / "intake.sqlite")
            out["model"] = f"{chat.backend}/{chat.model}"
            for split in splits:
                INTAKE_DROPS.update(dict.fromkeys(INTAKE_DROPS, 0))
                read_splits(
                    out, (split,), intake_reader(CachingChatModel(chat, cache), runner), args
                )
                out["splits"][split]["intake_checks"] = dict(INTAKE_DROPS)
            cache.close()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    if "model" in out:
        print(f"model {out['model']}")
    info = out["machine"]
    print(
        f"reader {args.reader} · {info['date']} · {info['cpu']} ×{info['cores']} · "
        f"load {info['load_1m']} · Python {info['python']}"
    )
    keys = (
        "option_precision",
        "option_recall",
        "exact_set",
        "exclusivity_accuracy",
        "constraint_recall",
        "constraints_found",
        "constraint_precision",
        "forbid_precision",
        "refusal_rate",
        "ms_per_problem",
    )
    print(f"{'split':6} " + " ".join(f"{k:>20}" for k in keys))
    for split, summary in out["splits"].items():
        print(
            f"{split:6} "
            + " ".join(f"{summary[k] if summary[k] is not None else '-':>20}" for k in keys)
        )
        if "intake_checks" in summary:
            print(f"       intake checks: {summary['intake_checks']}")
        for row in summary.get("problems_read", []):
            print(
                f"  {row['problem']}: refused={row['refused']} matched {row['matched']}/"
                f"{row['gold_options']} of {row['extracted']} {row['options']}"
            )


if __name__ == "__main__":
    main()
