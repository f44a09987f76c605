"""Reading a model's reply: the JSON part of the text, validated against the prompt's
reply model and the call's own check, and the one repair request sent when it fails."""

import re
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from crase.prompts.catalog import Message
from crase.text_limits import compile_linear

R = TypeVar("R", bound=BaseModel)

# A reply can echo user text (a draft, a document) at length: both patterns run on RE2
# (crase.text_limits), linear in the reply; FENCE took minutes in Python's engine on a
# fence, 20,000 spaces and a letter.
THINK_BLOCK = compile_linear(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
FENCE = compile_linear(r"^```[a-zA-Z]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)


def extract_json_text(content: str) -> str:
    """The JSON part of a reply: reasoning blocks and code fences removed; when prose
    surrounds a single object, the span from its first `{` to its last `}`."""
    text = THINK_BLOCK.sub("", content).strip()
    fenced = FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith("{") and "{" in text and "}" in text:
        text = text[text.index("{") : text.rindex("}") + 1]
    return text


def validate_reply(
    reply_model: type[R], check: Callable[[R], list[str]] | None, content: str
) -> tuple[R | None, list[str]]:
    """The parsed reply and no problems, or None and what is wrong with it."""
    try:
        value = reply_model.model_validate_json(extract_json_text(content), strict=True)
    except ValidationError as err:
        return None, describe_validation_error(err)
    problems = check(value) if check is not None else []
    return (None, problems) if problems else (value, [])


def describe_validation_error(err: ValidationError, limit: int = 20) -> list[str]:
    problems = []
    for item in err.errors(include_url=False)[:limit]:
        if item["type"] == "json_invalid":
            problems.append(f"the reply is not valid JSON ({item['msg']})")
            continue
        where = ".".join(str(part) for part in item["loc"]) or "reply"
        problems.append(f"{where}: {item['msg']}")
    return problems


def cut_off_problem(max_tokens: int) -> str:
    return (f"the reply was cut off at the limit of {max_tokens} tokens before the JSON "
            "object was complete: keep every text short so that the whole object fits")


def repair_request(problems: list[str]) -> Message:
    listed = "\n".join(f"- {problem}" for problem in problems)
    return {
        "role": "user",
        "content": "Your reply could not be accepted:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON object, in the schema asked for above, "
        "and nothing before or after it.",
    }
