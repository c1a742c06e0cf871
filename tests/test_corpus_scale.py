"""The public strategy corpus at scale: 40 agents deliberate without a crash."""

from __future__ import annotations

import pytest

from hivemind_lab import Calibrations, Limits, OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.inputs import request_for
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.problems import load_problem
from tests.support import PRACTICALITY, PROBLEMS, SHARED

CORPUS = SHARED / "corpora" / "strategy_corpus" / "documents.jsonl"


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["batched", "pairwise"])
def test_forty_agents_on_the_strategy_corpus(tmp_path, mode):
    if not CORPUS.exists():
        pytest.skip("../shared is absent")
    total = sum(d.tokens for d in load_documents(CORPUS))
    request = request_for(
        load_problem(PROBLEMS / "furniture-maker-asia-expansion.toml"),
        density=total // 46,  # documents are never cut: about 40 slices
        sufficiency=1,
        critique_mode=mode,
    )
    result = deliberate(
        request,
        Calibrations(),
        Limits(max_rounds=1, max_regenerations=0),
        model=OfflineAgentModel(),
        run_dir=tmp_path / "run",
        knowledge_base=CORPUS,
        practicality_kb=PRACTICALITY,
    )
    assert result.n_agents >= 40
    assert result.status in ("converged", "non_converged")
    options = [o.lower() for o in request.options]
    top = result.conclusions[0]
    assert any(o in top.recommendations[0].lower() for o in options)
