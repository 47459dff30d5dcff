"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._simulated_user``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._simulated_user import (
    FIRST_MESSAGE,
    USER_PROMPT,
    Conversation,
    ConversationEndEvent,
    EmptyMessageError,
    FixedTurns,
    SimulatedConversation,
    SimulatedTurnEvent,
    SimulatedUserContext,
    user_messages,
)

__all__ = ["FIRST_MESSAGE", "USER_PROMPT", "Conversation", "ConversationEndEvent",
           "EmptyMessageError", "FixedTurns", "SimulatedConversation", "SimulatedTurnEvent",
           "SimulatedUserContext", "user_messages"]
