"""EAI action sequencing: EAI's prompt → grammar-constrained JSON action list, open loop or grounded.

The prompt is EAI's own (`EaiTask.prompt(protocol)`): that is the benchmark. The answer is decoded under a GBNF
grammar that admits only a JSON dictionary of the prompt's actions (those EAI's evaluator accepts), each with
its number of objects, over the objects the prompt lists (with their ids for the 1.0.5 protocol), never the
character (the prompt forbids it). So an answer cannot be unparsable, hallucinate an action or object, or have
the wrong number of arguments. With `typed=True` (default) a parameter that VirtualHome's executor checks for a
property (GRAB needs GRABBABLE, OPEN CAN_OPEN, ..., `situated.actions.VIRTUALHOME_SPACE`) only admits objects
the prompt shows with that property.

Layout: `{`, one `  "ACTION": [args]` entry per line (keys repeat: order is execution order, as EAI's
order-preserving parser reads it), `}`. 1.0.5 args are `"name", "id"` (the id quoted, as in the prompt's example
`["sink", "sink_id"]` and as the models write it unconstrained; EAI's evaluator reads `name_id` either way);
1.0.4 args are `"name"` (a bare name means the last listed object of that name, as the 1.0.4 evaluator maps it).

Zero-argument actions (STANDUP) are written `[]` as the prompt says, although EAI's parser then drops them
(docs/eai.md, traps).

The prompt goes to the model in its own chat template (`LLM.chat_template`: ChatML for the embedded Qwen
models), as EAI sends it to chat models: one user message; the answer is then the start of the assistant's turn.

Grounded variant (beyond the benchmark; `plan_grounded`): the answer runs on a private copy of the task's
initial graph in our VirtualHome-faithful simulator, with the task's goals (part of its input) checked after
each step. On the first failing step (the simulator says no, the step has no objects, or it repeats the step
before without effect), or when the plan ends with goals unmet, the model rewrites the plan from there: the
steps before are kept, a `// ... is not possible: <reason>` line tells it why, and the grammar excludes every
call rejected at that place (an action rejected twice there altogether). Rewrites are written in checked
pieces; the plan ends as soon as every goal holds. At most `repairs` rewrites; the last plan is the answer
whatever it does. A checker with hints (`eval.systems.eai_check`) also names enabling steps, which are put before the
failing step without a model call (`enable`), and the action that makes each unmet goal hold.

The parts, one job each: `eai_answers` (steps, the answer text and reading it), `eai_grammar` (the decoding
grammars), `eai_planning` (the prompt, open-loop and grounded planning); this module names what callers use.
"""

from situated.planners.eai_answers import EaiPlan, Step, convert_answer, format_answer, parse_answer
from situated.planners.eai_grammar import (
    APPROACH,
    APPROACH_FIRST,
    DEFAULT_MAX_STEPS,
    answer_grammar,
    approach_grammar,
    task_actions,
)
from situated.planners.eai_planning import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_REPAIRS,
    GROUNDED,
    OPEN_LOOP,
    Check,
    Checker,
    checked_steps,
    enable,
    example_answer,
    example_prompt,
    model_prompt,
    plan_grounded,
    plan_task,
)

__all__ = [
    "APPROACH",
    "APPROACH_FIRST",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_REPAIRS",
    "GROUNDED",
    "OPEN_LOOP",
    "Check",
    "Checker",
    "EaiPlan",
    "Step",
    "answer_grammar",
    "approach_grammar",
    "checked_steps",
    "convert_answer",
    "enable",
    "example_answer",
    "example_prompt",
    "format_answer",
    "model_prompt",
    "parse_answer",
    "plan_grounded",
    "plan_task",
    "task_actions",
]
