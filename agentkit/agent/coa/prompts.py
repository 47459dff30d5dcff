"""The Chain-of-Abstraction prompts. The prose is agentkit's; the wire format is kept: calls
written ``[FUNC name(inputs) = yN]``, the reasoning prompt ending ``Available functions:``
(a python block of stubs), ``Question:`` and ``Abstract plan of reasoning:``, the refine
prompt ``Question:`` / ``Previous reasoning:`` / ``Response:``.

Both are ``str.format`` templates: the reasoning prompt takes ``{functions}`` and
``{question}``, the refine prompt ``{question}`` and ``{prev_reasoning}``; other braces are
doubled.
"""

__all__ = ["REASONING_PROMPT_TEMPLATE", "REFINE_REASONING_PROMPT_TEMPLATE"]

REASONING_PROMPT_TEMPLATE = """\
Write an abstract plan that answers the question below. Where a step needs a value that a \
function can compute, do not compute it yourself: write a function call in its place,

[FUNC {{function_name}}({{input1}}, {{input2}}, ...) = {{output_placeholder}}]

and name its result with a placeholder y1, y2, y3... Later calls and your prose may use a \
placeholder wherever its value belongs. Inputs are literals (numbers, "quoted strings", \
lists) or placeholders. Calls that do not need each other's results are run at the same \
time.

Example.

Question:
Sally has 3 apples and buys 2 more. Then she triples what she has. How many apples does \
she have now?

Abstract plan of reasoning:
After buying the apples, Sally has [FUNC add(3, 2) = y1] apples. Tripled, that is \
[FUNC multiply(y1, 3) = y2] apples.

Use only these functions:

Available functions:
```python
{functions}
```

Question:
{question}

Abstract plan of reasoning:
"""

REFINE_REASONING_PROMPT_TEMPLATE = """\
Below is a question and a plan of reasoning in which every function call has been replaced \
by its result, written in quotes after the call. Using those results, write the final \
answer to the question. If a result is an error, say what could not be worked out.

Question:
{question}

Previous reasoning:
{prev_reasoning}

Response:
"""
