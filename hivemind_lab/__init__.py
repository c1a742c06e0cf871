"""hivemind_lab: a research workbench for multi-agent strategic deliberation.

The public API mirrors the pipeline: knowledge → theory network → monitor → practicality
network → results and audit.
"""

from hivemind_lab.audit import AuditLog, verify_log
from hivemind_lab.deliberation import deliberate, deliberate_async, load_result
from hivemind_lab.errors import HivemindError, InputError
from hivemind_lab.inputs import PRESETS, Calibrations, DeliberationRequest, Limits
from hivemind_lab.knowledge import Document, Slice, load_documents, slice_knowledge
from hivemind_lab.knowledge.slicing import plan_slices
from hivemind_lab.llm import OpenAIChatModel, OpenAIConfig
from hivemind_lab.llm.offline import OfflineAgentModel
from hivemind_lab.problems import Problem, load_problem
from hivemind_lab.results import DeliberationResult

__version__ = "0.1.0"

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
    "deliberate_async",
    "load_documents",
    "load_problem",
    "load_result",
    "plan_slices",
    "slice_knowledge",
    "verify_log",
]
