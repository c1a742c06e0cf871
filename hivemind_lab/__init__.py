"""hivemind_lab: a research workbench for multi-agent strategic deliberation.

The public API mirrors the pipeline: knowledge → theory network → monitor → practicality
network → results and audit.

Names are imported on first use, so ``import hivemind_lab`` (and the command line's ``--help``)
does not pay for scikit-learn, the OpenAI SDK or plotly until something needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
    from hivemind_lab.agents.policy import OfflineAgentModel as OfflineAgentModel
    from hivemind_lab.compliance import rescore as rescore
    from hivemind_lab.deliberation import deliberate as deliberate
    from hivemind_lab.errors import HivemindError as HivemindError
    from hivemind_lab.errors import InputError as InputError
    from hivemind_lab.inputs import PRESETS as PRESETS
    from hivemind_lab.inputs import Calibrations as Calibrations
    from hivemind_lab.inputs import DeliberationRequest as DeliberationRequest
    from hivemind_lab.inputs import Limits as Limits
    from hivemind_lab.knowledge import Document as Document
    from hivemind_lab.knowledge import Slice as Slice
    from hivemind_lab.knowledge import load_documents as load_documents
    from hivemind_lab.knowledge import slice_knowledge as slice_knowledge
    from hivemind_lab.knowledge.slicing import plan_slices as plan_slices
    from hivemind_lab.llm import OpenAIChatModel as OpenAIChatModel
    from hivemind_lab.llm import OpenAIConfig as OpenAIConfig
    from hivemind_lab.problems import Problem as Problem
    from hivemind_lab.problems import load_problem as load_problem
    from hivemind_lab.runs.audit import AuditLog as AuditLog
    from hivemind_lab.runs.audit import verify_log as verify_log
    from hivemind_lab.runs.chat_export import export_chat as export_chat
    from hivemind_lab.runs.results import DeliberationResult as DeliberationResult
    from hivemind_lab.runs.rundir import load_result as load_result


__version__ = "0.1.0"

_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
