"""How well the offline stand-in's reading judges sentence pairs it never saw: SICK
(../shared/eval/sick/SICK.txt, 9,840 pairs labelled contradiction / entailment / neutral, with a
graded relatedness score), read in place and never copied into the repository.

The stand-in decides that a passage contradicts a claim the way `reading.judge` reads a critic's
evidence against an option (`reading.contradicts`): the passage bears on the claim (its share
of the other text's Snowball stems, `reading.bearing`, at least `reading.RELEVANT`, either way
round) and the two speak of it in opposite ways (`reading.stance_sign`: the sign of the cue
polarity, and with no cue an affirmation +1 against a denial -1). Here the two sentences of a
pair stand for the claim and the passage. Nothing is tuned on test: the stand-in's own
threshold and lexicons are used as committed.

- contradiction: precision, recall and F1 of "the pair contradicts" against the gold label
  CONTRADICTION; baselines: the majority class (never a contradiction: F1 0) and "always a
  contradiction" (recall 1, precision the base rate);
- cue polarity only (the stand-in's reading before negation counted, kept for comparison):
  the pair bears and the cue polarities (`reading.polarity`) have opposite signs;
- negation rule (a diagnostic): the pair bears and exactly one sentence holds a negator from
  the stand-in's lexicon; it shows how much of SICK's contradictions is plain negation;
- bearing: Spearman correlation between the stand-in's bearing (the larger direction) and the
  gold relatedness score (1–5).

Split by pair id: even ids are dev, odd ids test. Report test; look at dev when changing a rule.

Business sentences (``--decisions``): the labelled decision problems of
../shared/eval/decisions (dev and test folders, read in place), whose labels give each problem's
options, 2-5 decisive facts (exact spans) and the option a careful strategist would take first.
The stand-in judges the options from the decisive facts alone (`reading.judge`, no evidence),
as an agent weighs the client's facts: how many decisive facts bear on an option at all
(bearing ≥ `RELEVANT`), how many of those it reads with a polarity, and how often the option it
scores highest is the labelled first move (ties at the top: no choice, counted wrong), beside
chance (1 / options).

Usage: python benchmarks/standin_judgements.py [--shared ../shared] [--json] [--decisions]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from scipy.stats import spearmanr

from hivemind_lab.agents.policy.reading import (
    RELEVANT,
    bearing,
    contradicts,
    judge,
    negated,
    option_weights,
    polarity,
)
from hivemind_lab.problems.model import MAX_FACT_CHARS, Fact
from hivemind_lab.text import stems

ROOT = Path(__file__).resolve().parents[1]


class Pair(NamedTuple):
    id: int
    a: str
    b: str
    contradiction: bool
    relatedness: float


class Reading(NamedTuple):
    bearing: float
    """The larger of the two directions' bearing."""
    standin: bool
    """The stand-in's contradiction (`reading.contradicts`)."""
    polarity_only: bool
    """It bears and the cue polarities have opposite signs (the reading before negation)."""
    negation: bool
    """The diagnostic rule: it bears and exactly one sentence holds a negator."""


def load(shared: Path) -> list[Pair]:
    path = shared / "eval" / "sick" / "SICK.txt"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [
            Pair(
                int(r["pair_ID"]),
                r["sentence_A"],
                r["sentence_B"],
                r["entailment_label"] == "CONTRADICTION",
                float(r["relatedness_score"]),
            )
            for r in rows
        ]


def _bearing(text: str, on: str) -> float:
    (weights,) = option_weights((on,))
    return bearing(frozenset(stems(text)), weights)


def read(pair: Pair) -> Reading:
    b = max(_bearing(pair.b, pair.a), _bearing(pair.a, pair.b))
    bears = b >= RELEVANT
    opposite = polarity(pair.a) * polarity(pair.b) < 0
    one_negated = negated(pair.a) != negated(pair.b)
    return Reading(b, contradicts(pair.a, pair.b), bears and opposite, bears and one_negated)


def scores(gold: list[bool], said: list[bool]) -> dict[str, float]:
    tp = sum(g and s for g, s in zip(gold, said, strict=True))
    fp = sum(s and not g for g, s in zip(gold, said, strict=True))
    fn = sum(g and not s for g, s in zip(gold, said, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    flagged = tp + fp
    return {"precision": precision, "recall": recall, "f1": f1, "flagged": flagged}


class Split(NamedTuple):
    pairs: int
    contradictions: int
    readings: dict[str, dict[str, float]]
    """Reading name → precision, recall, F1 and pairs flagged."""
    bearing_spearman: float
    polar_sentences: int
    """Sentences (two a pair) to which the stand-in gives a polarity at all."""


READINGS = {
    "standin": "stand-in (bearing + opposite stance: cue polarity, else denial)",
    "polarity_only": "cue polarity only (the rule before negation counted)",
    "negation_rule": "diagnostic: bearing + one side negated",
    "majority": "majority class (never)",
    "always": "always a contradiction",
}


def evaluate(pairs: list[Pair]) -> Split:
    readings = [read(p) for p in pairs]
    gold = [p.contradiction for p in pairs]
    rho = spearmanr([r.bearing for r in readings], [p.relatedness for p in pairs]).statistic
    return Split(
        pairs=len(pairs),
        contradictions=sum(gold),
        readings={
            "standin": scores(gold, [r.standin for r in readings]),
            "polarity_only": scores(gold, [r.polarity_only for r in readings]),
            "negation_rule": scores(gold, [r.negation for r in readings]),
            "majority": scores(gold, [False] * len(pairs)),
            "always": scores(gold, [True] * len(pairs)),
        },
        bearing_spearman=float(rho),
        polar_sentences=sum(polarity(p.a) != 0 for p in pairs)
        + sum(polarity(p.b) != 0 for p in pairs),
    )


class Decisions(NamedTuple):
    problems: int
    """Problems with options and a labelled first move."""
    facts: int
    bearing: int
    """Decisive facts that bear on at least one option."""
    polar: int
    """Of those, facts the stand-in reads with a tone (for or against)."""
    chosen: int
    """Problems where one option scores highest (no tie at the top)."""
    right: int
    """Problems where that option is the labelled first move."""
    chance: float
    """Expected right choices when guessing one option at random."""


def decisions(folder: Path) -> Decisions:
    """The stand-in's judgement of each problem's options from its decisive facts alone."""
    problems = facts_n = bears_n = polar_n = chosen = right = 0
    chance = 0.0
    for path in sorted(folder.glob("*.json")):
        gold = json.loads(path.read_text("utf-8"))
        options = tuple(gold["options"])
        if not options or gold.get("best_first_move") is None:
            continue
        facts = tuple(
            Fact(id=f"{path.stem}.{n}", text=text[:MAX_FACT_CHARS], source="client")
            for n, text in enumerate(gold["decisive_facts"], 1)
        )
        problems += 1
        chance += 1 / len(options)
        judged = judge(options, (), facts)
        read = {f for j in judged for f in (*j.facts_for, *j.facts_against)}
        weights = option_weights(options)
        for fact in facts:
            facts_n += 1
            if any(bearing(frozenset(stems(fact.text)), w) >= RELEVANT for w in weights):
                bears_n += 1
                polar_n += fact.id in read
        scores = [j.score for j in judged]
        top = max(scores)
        if scores.count(top) == 1:
            chosen += 1
            right += scores.index(top) == gold["best_first_move"]
    return Decisions(problems, facts_n, bears_n, polar_n, chosen, right, round(chance, 2))


def machine() -> dict[str, str]:
    cpu = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        cpu = next(
            (ln.split(":", 1)[1].strip() for ln in out.splitlines() if "Model name" in ln), ""
        )
    except (OSError, subprocess.CalledProcessError):
        cpu = platform.processor()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} ({platform.system()} {platform.machine()}, {os.cpu_count()} cores)",
        "cpu": cpu,
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "commit": commit,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--decisions", action="store_true", help="business sentences instead")
    args = parser.parse_args()
    if args.decisions:
        root = args.shared / "eval" / "decisions"
        found = {name: decisions(root / name) for name in ("dev", "test")}
        if args.json:
            print(json.dumps({k: v._asdict() for k, v in found.items()}, indent=1))
            return
        print(
            "| split | problems | decisive facts | bear on an option | read with a tone |", end=""
        )
        print(" one option on top | = labelled first move | chance |")
        print("|---|---|---|---|---|---|---|---|")
        for name, d in found.items():
            print(
                f"| {name} | {d.problems} | {d.facts} | {d.bearing} | {d.polar} | {d.chosen} | "
                f"{d.right} | {d.chance:.1f} |"
            )
        print(json.dumps(machine()))
        return
    pairs = load(args.shared)
    started = time.perf_counter()
    splits = {
        "dev": evaluate([p for p in pairs if p.id % 2 == 0]),
        "test": evaluate([p for p in pairs if p.id % 2 == 1]),
    }
    seconds = round(time.perf_counter() - started, 2)
    info = machine()
    if args.json:
        out = {name: split._asdict() for name, split in splits.items()}
        print(json.dumps({**out, "seconds": seconds, "machine": info}, indent=1))
        return
    print("| split | reading | precision | recall | F1 | flagged |")
    print("|---|---|---|---|---|---|")
    for name, split in splits.items():
        for key, label in READINGS.items():
            s = split.readings[key]
            print(
                f"| {name} ({split.pairs} pairs, {split.contradictions} contr.) | {label} | "
                f"{s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {s['flagged']:.0f} |"
            )
    for name, split in splits.items():
        print(
            f"{name}: bearing vs relatedness Spearman {split.bearing_spearman:.3f}; "
            f"sentences with a polarity: {split.polar_sentences} of {2 * split.pairs}"
        )
    print(json.dumps(info), f"{seconds} s")


if __name__ == "__main__":
    main()
