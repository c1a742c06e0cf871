"""Consensus against majority vote on crowd-labelling data with gold answers.

Each worker is a model, each (item, label) an assertion ``item <id> has_value <label>`` (a
single-valued predicate, so different labels of one item conflict), and every worker votes once
per item, through `HivemindGraph.resolve_many`, for the label it gave. The graph decides with
its own rule (electorate complete, track-record weights, φ supermajority). Per set and vote
order (the file's arrival order, and one shuffled order) it prints:

- coverage: items with one surviving value (uncontested, or a decided contest);
- accuracy of that value against gold, next to majority vote's accuracy on the same items
  (ties in majority vote earn their expected share);
- the same two figures for contested items alone.

Reads the data in place from ../shared/eval/truth (never copied into the repository): every
``<set>/answer.csv`` + ``truth.csv`` (question, worker, answer / question, truth) and every
``*.standardized.tsv`` (worker, orig_id, response, gold). Sets with more than 20 distinct
answers are numeric ratings, not labels, and are skipped.

Run: .venv/bin/python benchmarks/consensus_truth.py [--sets dog,temp] [--seed 7]
"""

from __future__ import annotations

import argparse
import csv
import random
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / ".." / "shared" / "eval" / "truth"
MAX_LABELS = 20
BATCH = 2000


@dataclass(frozen=True)
class LabelSet:
    name: str
    rows: list[tuple[str, str, str]]
    """(item, worker, label) in file order."""
    gold: dict[str, str]


def load_sets(root: Path) -> list[LabelSet]:
    sets = []
    for answers in sorted(root.rglob("answer.csv")):
        with answers.open(newline="") as f:
            rows = [(r["question"], r["worker"], r["answer"]) for r in csv.DictReader(f)]
        with (answers.parent / "truth.csv").open(newline="") as f:
            gold = {r["question"]: r["truth"] for r in csv.DictReader(f)}
        sets.append(LabelSet(answers.parent.name, rows, gold))
    for tsv in sorted(root.rglob("*.standardized.tsv")):
        with tsv.open(newline="") as f:
            reader = csv.DictReader(f, delimiter="\t")
            raw = [(r["orig_id"], r["!amt_worker_ids"], r["response"], r["gold"]) for r in reader]
        sets.append(
            LabelSet(
                tsv.name.split(".")[0],
                [(i, w, a) for i, w, a, _ in raw],
                {i: g for i, _, _, g in raw},
            )
        )
    return sets


def dedupe(rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """One label per worker and item (a repeated label keeps its first arrival)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for item, worker, label in rows:
        if (item, worker) not in seen:
            seen.add((item, worker))
            out.append((item, worker, label))
    return out


def majority_credit(labels: list[str], gold: str) -> float:
    """Majority vote's expected accuracy on one item (a tie is broken at random)."""
    counts = Counter(labels)
    best = max(counts.values())
    tied = [label for label, n in counts.items() if n == best]
    return (gold in tied) / len(tied)


def model_name(worker: str) -> str:
    return "w-" + "".join(ch if ch.isalnum() else "-" for ch in worker)[:60]


def run_consensus(rows: list[tuple[str, str, str]], tmp: Path) -> dict[str, str | None]:
    """Item → the graph's surviving label (None while contested or undecided)."""
    config = GraphConfig(store="ladybug", db_path=tmp / "graph.lbdb")
    graph = HivemindGraph(open_store(config), config)
    try:
        held: dict[tuple[str, str], str] = {}
        for i in range(0, len(rows), BATCH):
            chunk = rows[i : i + BATCH]
            claims = [
                {
                    "subject": f"item {item}",
                    "predicate": "has_value",
                    "obj": label,
                    "confidence": 1.0,
                    "model": model_name(worker),
                }
                for item, worker, label in chunk
            ]
            for (item, worker, _), result in zip(chunk, graph.assert_many(claims), strict=True):
                held[(item, worker)] = result.assertion_id
        by_side: dict[str, str] = {}
        sides: dict[str, tuple[str, str]] = {}
        for c in graph.conflicts("general", "unresolved"):
            sides[c.conflict_id] = (c.assertion_a.id, c.assertion_b.id)
            by_side.setdefault(c.assertion_a.id, c.conflict_id)
            by_side.setdefault(c.assertion_b.id, c.conflict_id)
        votes = []
        for item, worker, _ in rows:
            mine = held[(item, worker)]
            cid = by_side.get(mine)
            if cid is None:
                continue  # no rival label: nothing to vote on
            side = "accept_a" if sides[cid][0] == mine else "accept_b"
            votes.append({"conflict_id": cid, "resolution": side, "model": model_name(worker)})
        for i in range(0, len(votes), BATCH):
            graph.resolve_many(votes[i : i + BATCH], skip_closed=True)
        answer: dict[str, str | None] = {}
        live: dict[str, list[str]] = defaultdict(list)
        for r in graph.store.read(
            "MATCH (a:Assertion) WHERE a.status = 'active' RETURN a.subject AS s, a.object AS o"
        ):
            live[r["s"].removeprefix("item ")].append(r["o"])
        contested = {
            r["s"].removeprefix("item ")
            for r in graph.store.read(
                "MATCH (c:Conflict) WHERE c.status = 'unresolved' RETURN c.subject AS s"
            )
        }
        for item, values in live.items():
            answer[item] = values[0] if len(values) == 1 and item not in contested else None
        return answer
    finally:
        graph.store.close()


def evaluate(labels: LabelSet, order: str, seed: int) -> dict[str, float]:
    rows = dedupe(labels.rows)
    if order == "shuffled":
        rows = rows[:]
        random.Random(seed).shuffle(rows)
    per_item: dict[str, list[str]] = defaultdict(list)
    for item, _, label in rows:
        per_item[item].append(label)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        answer = run_consensus(rows, Path(tmp))
    elapsed = time.perf_counter() - started
    items = [i for i in per_item if i in labels.gold]
    decided = [i for i in items if answer.get(i) is not None]
    contested = [i for i in decided if len(set(per_item[i])) > 1]
    all_contested = [i for i in items if len(set(per_item[i])) > 1]

    def acc(chosen: list[str]) -> tuple[float, float]:
        if not chosen:
            return float("nan"), float("nan")
        ours = sum(answer[i] == labels.gold[i] for i in chosen) / len(chosen)
        mv = sum(majority_credit(per_item[i], labels.gold[i]) for i in chosen) / len(chosen)
        return ours, mv

    ours, mv = acc(decided)
    c_ours, c_mv = acc(contested)
    return {
        "coverage": len(decided) / len(items),
        "accuracy": ours,
        "majority": mv,
        "contested_coverage": len(contested) / max(1, len(all_contested)),
        "contested_accuracy": c_ours,
        "contested_majority": c_mv,
        "seconds": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"--data: {str(args.data)!r} is not a folder (expected ../shared)")
    wanted = {s for s in args.sets.split(",") if s}
    print(
        "set       order     coverage  accuracy  majority  | contested: coverage  accuracy  "
        "majority  | seconds"
    )
    for labels in load_sets(args.data):
        if wanted and labels.name not in wanted:
            continue
        if len({label for _, _, label in labels.rows}) > MAX_LABELS:
            print(f"{labels.name:9} skipped: numeric ratings, not labels")
            continue
        for order in ("arrival", "shuffled"):
            m = evaluate(labels, order, args.seed)
            print(
                f"{labels.name:9} {order:9} {m['coverage']:8.3f}  {m['accuracy']:8.3f}  "
                f"{m['majority']:8.3f}  |            {m['contested_coverage']:8.3f}  "
                f"{m['contested_accuracy']:8.3f}  {m['contested_majority']:8.3f}  | "
                f"{m['seconds']:7.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
