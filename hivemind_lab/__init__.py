"""hivemind_lab: a research workbench for multi-agent strategic deliberation.

The public API mirrors the pipeline: knowledge → theory network → monitor → practicality
network → results and audit.

Names are imported on first use, so ``import hivemind_lab`` (and the command line's ``--help``)
does not pay for scikit-learn, the OpenAI SDK or plotly until something needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from hivemind_lab.agents.policy import OfflineAgentModel
    from hivemind_lab.compliance import rescore
    from hivemind_lab.deliberation import deliberate
    from hivemind_lab.errors import HivemindError, InputError
    from hivemind_lab.inputs import PRESETS, Calibrations, DeliberationRequest, Limits
    from hivemind_lab.knowledge import Document, Slice, load_documents, slice_knowledge
    from hivemind_lab.knowledge.slicing import plan_slices
    from hivemind_lab.llm import OpenAIChatModel, OpenAIConfig
    from hivemind_lab.problems import Problem, load_problem
    from hivemind_lab.runs.audit import AuditLog, verify_log
    from hivemind_lab.runs.chat_export import export_chat
    from hivemind_lab.runs.results import DeliberationResult
    from hivemind_lab.runs.rundir import load_result

__version__ = "0.1.0"

_HOMES: dict[str, str] = {
    "rescore": "hivemind_lab.compliance",
    "deliberate": "hivemind_lab.deliberation",
    "HivemindError": "hivemind_lab.errors",
    "InputError": "hivemind_lab.errors",
    "PRESETS": "hivemind_lab.inputs",
    "Calibrations": "hivemind_lab.inputs",
    "DeliberationRequest": "hivemind_lab.inputs",
    "Limits": "hivemind_lab.inputs",
    "Document": "hivemind_lab.knowledge",
    "Slice": "hivemind_lab.knowledge",
    "load_documents": "hivemind_lab.knowledge",
    "slice_knowledge": "hivemind_lab.knowledge",
    "plan_slices": "hivemind_lab.knowledge.slicing",
    "OpenAIChatModel": "hivemind_lab.llm",
    "OpenAIConfig": "hivemind_lab.llm",
    "OfflineAgentModel": "hivemind_lab.agents.policy",
    "Problem": "hivemind_lab.problems",
    "load_problem": "hivemind_lab.problems",
    "AuditLog": "hivemind_lab.runs.audit",
    "verify_log": "hivemind_lab.runs.audit",
    "export_chat": "hivemind_lab.runs.chat_export",
    "DeliberationResult": "hivemind_lab.runs.results",
    "load_result": "hivemind_lab.runs.rundir",
}


__getattr__ = lazy_exports(__name__, _HOMES)


__all__ = [
    "PRESETS",
    "AuditLog",
    "Calibrations",
    "DeliberationRequest",
    "DeliberationResult",
    "Document",
    "HivemindError",
    "InputError",
    "Limits",
    "OfflineAgentModel",
    "OpenAIChatModel",
    "OpenAIConfig",
    "Problem",
    "Slice",
    "deliberate",
    "export_chat",
    "load_documents",
    "load_problem",
    "load_result",
    "plan_slices",
    "rescore",
    "slice_knowledge",
    "verify_log",
]
