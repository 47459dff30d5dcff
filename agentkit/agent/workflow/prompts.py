"""The prompts of an agent workflow. Their texts are LlamaIndex's: models and users' tests
read them (REFERENCE.md, "AgentWorkflow prompts and hand-off")."""

from agentkit.llms.prompts import PromptTemplate

__all__ = [
    "checked_prompt",
    "DEFAULT_HANDOFF_PROMPT",
    "DEFAULT_HANDOFF_OUTPUT_PROMPT",
    "DEFAULT_STATE_PROMPT",
    "REACT_RETRY_PROMPT",
    "REACT_EMPTY_PROMPT",
]

DEFAULT_HANDOFF_PROMPT = """Useful for handing off to another agent.
If you are currently not equipped to handle the user's request, or another agent is better \
suited to handle the request, please hand off to the appropriate agent.

Currently available agents:
{agent_info}
"""

DEFAULT_HANDOFF_OUTPUT_PROMPT = (
    "Agent {to_agent} is now handling the request due to the following reason: {reason}.\n"
    "Please continue with the current request.")

DEFAULT_STATE_PROMPT = """Current state:
{state}

Current message:
{msg}
"""

REACT_RETRY_PROMPT = """Error while parsing the output: {error}

The output should be in one of the following formats:
1. To call a tool:
```
Thought: <thought>
Action: <action>
Action Input: <action_input>
```
2. To answer the question:
```
Thought: <thought>
Answer: <answer>
```
"""

REACT_EMPTY_PROMPT = """FAILURE: Your previous response was empty.
You must output a thought and an action/answer.

Please follow this structure exactly:
Thought: <what you are thinking>
Action: <tool_name>
Action Input: <json_params>

OR:

Thought: <what you are thinking>
Answer: <your final response to the user>"""


_PLACEHOLDERS = {
    "handoff_prompt": ("{agent_info}",),
    "handoff_output_prompt": ("{to_agent}", "{reason}"),
    "state_prompt": ("{state}", "{msg}"),
}


def checked_prompt(name: str, prompt: str | PromptTemplate) -> PromptTemplate:
    """The workflow prompt ``name`` (``"state_prompt"``...) as a template; ValueError ("State
    prompt must contain {state} and {msg}") if one of its placeholders is missing."""
    template = prompt if isinstance(prompt, PromptTemplate) else PromptTemplate(prompt)
    text = template.get_template()
    placeholders = _PLACEHOLDERS[name]
    for placeholder in placeholders:  # (every agent built checks its prompts)
        if placeholder not in text:
            raise ValueError(f"{name.replace('_', ' ').capitalize()} must contain "
                             f"{' and '.join(placeholders)}")
    return template
