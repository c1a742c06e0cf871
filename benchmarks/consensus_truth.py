"""Consensus against majority vote and Dawid–Skene on crowd-labelling data with gold answers.

Each worker is a model, each (item, label) an assertion ``item <id> has_value <label>`` (a
single-valued predicate, so different labels of one item conflict), and every worker votes once
per item, through `HivemindGraph.resolve_many`, for the label it gave. The graph decides with
its own rule (reliabilities estimated jointly over the domain's votes, a side wins when its
posterior reaches φ⁻¹, verdicts revised as the estimate changes). Per set it prints:

- majority vote's accuracy over all items (a tie earns its expected share);
- Dawid–Skene's (crowd-kit, in the benchmark's own virtual environment under
  .cache/consensus-bench, created on first use; skipped with a message if it cannot be set up:
  crowd-kit is never a dependency of the project);
- the graph's accuracy over all items (an undecided item counts as wrong), its coverage (items
  with one surviving value) and accuracy on the items it decided, for the file's arrival order
  and one shuffled order, and the spread between the two orders.

``--estimator-only`` skips the stores and applies `hivemind_lab.graph.reliability` directly to
the vote set (the same estimate and φ test the graph uses once every vote is in; seconds instead
of minutes). ``--copies N`` adds N copies of the least reliable worker (same labels, new
names) to every set, to show the copy discount at work; with ``--copy-share S`` each copy takes
only a share S of that worker's labels and answers the rest at random (partial copies, the
book-author kind of dependence). ``--halves`` also prints the accuracy
over all items of two fixed random halves of each set's items (seeded; the estimate still sees
every vote, only the scoring is split), so a choice made on one half can be reported on the
other.

The labels of these sets recur across items, so the graph reads them with per-label
confusion rows (Dawid–Skene with a hierarchical prior, docs/design/consensus.md); the graph
run gives each side's value through its predicate and object keys, the estimator-only run
uses the label itself as the side.

Reads the data in place from ../shared/eval/truth (never copied into the repository): every
``<set>/answer.csv`` + ``truth.csv`` (question, worker, answer / question, truth) and every
``*.standardized.tsv`` (worker, orig_id, response, gold). Sets with more than 20 distinct
answers are numeric ratings, not labels (``emotion``: -100..100, gold a rating): exact-match
accuracy means nothing there, so only their mean absolute error is printed, for the mean, the
median, the head count and the value the graph would pick.

Run: .venv/bin/python benchmarks/consensus_truth.py [--sets dog,temp] [--seed 7]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from hivemind_lab.graph import GraphConfig, HivemindGraph, open_store
from hivemind_lab.graph.reliability import Prior, estimate, posterior

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


DS_SCRIPT = """
import json, sys
import pandas as pd
from crowdkit.aggregation import DawidSkene
rows = json.load(sys.stdin)
frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
result = DawidSkene(n_iter=100).fit_predict(frame)
json.dump({str(k): str(v) for k, v in result.items()}, sys.stdout)
"""


def dawid_skene(rows: list[tuple[str, str, str]]) -> dict[str, str] | None:
    """Dawid–Skene's labels from crowd-kit, run in the benchmark's own environment (made on
    first use); None, with a message, when it cannot be set up."""
    venv = REPO / ".cache" / "consensus-bench"
    python = venv / "bin" / "python"
    if not python.exists():
        print("setting up crowd-kit in .cache/consensus-bench (first run only) ...", flush=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True)
        if made.returncode == 0:
            made = subprocess.run(
                [str(python), "-m", "pip", "install", "-q", "crowd-kit"], capture_output=True
            )
        if made.returncode != 0:
            print(f"Dawid–Skene skipped: cannot install crowd-kit ({made.stderr[-300:]!r})")
            shutil.rmtree(venv, ignore_errors=True)
            return None
    done = subprocess.run(
        [str(python), "-c", DS_SCRIPT],
        input=json.dumps([[i, w, a] for i, w, a in rows]),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(f"Dawid–Skene skipped: {done.stderr[-300:]!r}")
        return None
    return json.loads(done.stdout)


def estimator_only(rows: list[tuple[str, str, str]], phi: float) -> dict[str, str | None]:
    """Item → the value the graph's estimate and φ test give once every vote is in: contested
    items are contests; an item with one label is an agreement of its workers (as the graph
    counts the holders of an uncontested claim)."""
    ballots: dict[str, dict[str, frozenset[str]]] = defaultdict(dict)
    sides: dict[str, set[str]] = defaultdict(set)
    for item, worker, label in rows:
        ballots[item].setdefault(worker, frozenset([label]))
        sides[item].add(label)
    frozen = {k: frozenset(v) for k, v in sides.items()}
    config = GraphConfig()
    found = estimate(ballots, frozen, Prior(config.record_prior_mean, config.record_prior_strength))
    answer: dict[str, str | None] = {}
    for item, options in frozen.items():
        if len(options) == 1:
            answer[item] = next(iter(options))
            continue
        post = posterior(ballots[item], options, found)
        best = max(post, key=lambda s: (post[s], s))
        answer[item] = best if post[best] >= phi else None
    return answer


def with_copies(
    rows: list[tuple[str, str, str]],
    gold: dict[str, str],
    n: int,
    *,
    share: float = 1.0,
    seed: int = 7,
) -> list:
    """The rows plus ``n`` copies of the least accurate worker with at least 20 labels. With
    ``share`` < 1 each copy takes that worker's label on an item with probability ``share``
    and otherwise a label of its own, drawn uniformly from the labels given to that item (a
    partial copy, as sources copying part of a listing do; seeded)."""
    if n <= 0:
        return rows
    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item, worker, label in rows:
        right[worker][0] += label == gold.get(item)
        right[worker][1] += 1
    busy = [w for w, (_, n_) in right.items() if n_ >= 20]
    worst = min(busy, key=lambda w: (right[w][0] / right[w][1], w))
    offered: dict[str, list[str]] = defaultdict(list)
    for item, _, label in rows:
        if label not in offered[item]:
            offered[item].append(label)
    rng = random.Random(f"copies-{seed}")
    copies = []
    for k in range(n):
        for i, w, a in rows:
            if w == worst:
                own = a if rng.random() < share else rng.choice(sorted(offered[i]))
                copies.append((i, f"{worst}-copy{k}", own))
    return rows + copies


def evaluate(labels: LabelSet, order: str, seed: int, fast: bool) -> dict[str, float]:
    rows = dedupe(labels.rows)
    if order == "shuffled":
        rows = rows[:]
        random.Random(seed).shuffle(rows)
    started = time.perf_counter()
    if fast:
        answer = estimator_only(rows, GraphConfig().consensus_phi)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            answer = run_consensus(rows, Path(tmp))
    elapsed = time.perf_counter() - started
    items = sorted({i for i, _, _ in rows if i in labels.gold})
    decided = [i for i in items if answer.get(i) is not None]
    right = sum(answer[i] == labels.gold[i] for i in decided)
    first = halves(items, seed)
    per_half = {}
    for name, part in (("A", first), ("B", set(items) - first)):
        per_half[f"half {name}"] = sum(answer.get(i) == labels.gold[i] for i in part) / len(part)
    return {
        "accuracy": right / len(items),
        "coverage": len(decided) / len(items),
        "decided_accuracy": right / max(1, len(decided)),
        "seconds": elapsed,
        **per_half,
    }


def halves(items: list[str], seed: int) -> set[str]:
    """Half A of the items: a fixed seeded sample (half B is the rest)."""
    return set(random.Random(f"half-{seed}").sample(sorted(items), len(items) // 2))


def majority(rows: list[tuple[str, str, str]], gold: dict[str, str]) -> float:
    per_item: dict[str, list[str]] = defaultdict(list)
    for item, _, label in rows:
        per_item[item].append(label)
    items = [i for i in per_item if i in gold]
    return sum(majority_credit(per_item[i], gold[i]) for i in items) / len(items)


def numeric(labels: LabelSet) -> str:
    """Mean absolute error against the gold rating of the mean, the median, the head count's
    value and the value the graph's estimate would pick (its likeliest side once every vote is
    in; a contest picks one asserted value, it never averages)."""
    rows = dedupe(labels.rows)
    ratings: dict[str, list[float]] = defaultdict(list)
    for item, _, label in rows:
        ratings[item].append(float(label))
    picked = estimator_only(rows, 0.0)
    items = [i for i in ratings if i in labels.gold]

    def mae(value: dict[str, float]) -> float:
        return sum(abs(value[i] - float(labels.gold[i])) for i in items) / len(items)

    def head_count(values: list[float]) -> float:
        counts = Counter(values)
        top = max(counts.values())
        return statistics.mean(v for v, n in counts.items() if n == top)

    figures = {
        "mean": mae({i: statistics.mean(ratings[i]) for i in items}),
        "median": mae({i: statistics.median(ratings[i]) for i in items}),
        "head count": mae({i: head_count(ratings[i]) for i in items}),
        "graph's pick": mae({i: float(picked[i] or "nan") for i in items}),
    }
    return "MAE " + ", ".join(f"{name} {value:.1f}" for name, value in figures.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--estimator-only", action="store_true", help="skip the stores")
    parser.add_argument("--copies", type=int, default=0, help="copies of the worst worker")
    parser.add_argument(
        "--copy-share",
        type=float,
        default=1.0,
        help="share of the worst worker's labels each copy takes (the rest its own, at random)",
    )
    parser.add_argument("--no-ds", action="store_true", help="skip Dawid–Skene")
    parser.add_argument("--halves", action="store_true", help="also score two item halves")
    args = parser.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"--data: {str(args.data)!r} is not a folder (expected ../shared)")
    wanted = {s for s in args.sets.split(",") if s}
    print(
        "| set | majority | Dawid–Skene | ours (arrival) | ours (shuffled) | coverage "
        "| accuracy on decided | order spread | s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for labels in load_sets(args.data):
        if wanted and labels.name not in wanted:
            continue
        if len({label for _, _, label in labels.rows}) > MAX_LABELS:
            print(f"| {labels.name} | numeric ratings, not labels: {numeric(labels)} |")
            continue
        rows = with_copies(
            dedupe(labels.rows), labels.gold, args.copies, share=args.copy_share, seed=args.seed
        )
        labels = LabelSet(labels.name, rows, labels.gold)
        mv = majority(rows, labels.gold)
        ds_text = "—"
        if not args.no_ds:
            ds = dawid_skene(rows)
            if ds is not None:
                items = [i for i in {r[0] for r in rows} if i in labels.gold]
                ds_text = f"{sum(ds.get(i) == labels.gold[i] for i in items) / len(items):.3f}"
        runs = [evaluate(labels, order, args.seed, args.estimator_only) for order in ORDERS]
        spread = 100 * (max(r["accuracy"] for r in runs) - min(r["accuracy"] for r in runs))
        print(
            f"| {labels.name} | {mv:.3f} | {ds_text} | {runs[0]['accuracy']:.3f} | "
            f"{runs[1]['accuracy']:.3f} | {runs[0]['coverage']:.3f} / {runs[1]['coverage']:.3f} "
            f"| {runs[0]['decided_accuracy']:.3f} / {runs[1]['decided_accuracy']:.3f} "
            f"| {spread:.1f} pt | {runs[0]['seconds']:.0f} / {runs[1]['seconds']:.0f} |",
            flush=True,
        )
        if args.halves:
            gold_items = sorted({r[0] for r in rows if r[0] in labels.gold})
            first = halves(gold_items, args.seed)
            for name, part in (("A", first), ("B", set(gold_items) - first)):
                part_rows = [r for r in rows if r[0] in part]
                print(
                    f"|   half {name} ({len(part)} items) | {majority(part_rows, labels.gold):.3f} "
                    f"| | {runs[0][f'half {name}']:.3f} | {runs[1][f'half {name}']:.3f} | | | | |",
                    flush=True,
                )


ORDERS = ("arrival", "shuffled")


if __name__ == "__main__":
    main()
