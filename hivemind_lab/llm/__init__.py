"""Language-model layer: one async ChatModel protocol, an OpenAI-compatible backend, a
deterministic offline agent model, structured outputs and a content-addressed replay cache."""

from hivemind_lab.llm.base import ChatMessage, ChatModel, ChatRequest, ChatResponse, Usage
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.openai_backend import OpenAIChatModel, OpenAIConfig
from hivemind_lab.llm.structured import Structured, complete_structured

__all__ = [
    "CachingChatModel",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "OfflineAgentModel",
    "OpenAIChatModel",
    "OpenAIConfig",
    "ResponseCache",
    "Structured",
    "Usage",
    "complete_structured",
]


def __getattr__(name: str) -> object:
    # The offline model depends on the agent task models, which depend on this package's base
    # types; importing it lazily keeps that dependency one-way at import time.
    if name == "OfflineAgentModel":
        from hivemind_lab.llm.offline import OfflineAgentModel

        return OfflineAgentModel
    raise AttributeError(name)
