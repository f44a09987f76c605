"""Loads the prompt templates of this folder by name: one task per `<name>.md`.

A template file starts with a header between `---` lines::

    ---
    name: extract_claims
    version: 1
    role: claims
    max_tokens: 1024
    inputs: title, abstract, intro
    ---
    ## system
    ...instructions, may use {{placeholders}}...
    ## user
    ...the request, with paper text inside data blocks...

`role` is the settings field (`ModelSettings.<role>`) whose endpoint serves the task,
`max_tokens` the completion budget unless the endpoint sets its own, `inputs` every
`{{placeholder}}` the body uses: the header and the body must agree, or loading fails.
Rendering takes exactly the declared inputs; a missing or extra one is a PromptError.
Substitution is one pass, so text inside an input is never expanded again.
"""

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from crase.errors import PromptError
from crase.prompts.replies import REPLY_MODELS

PROMPTS_DIR = Path(__file__).resolve().parent
PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")
HEADER_KEYS = {"name", "version", "role", "max_tokens", "inputs"}
DATA_TAG = "untrusted_data"

Message = dict[str, str]


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    role: str
    max_tokens: int
    inputs: tuple[str, ...]
    system: str
    user: str
    reply_model: type[BaseModel]

    @property
    def ref(self) -> str:
        """`name@version`: what is stored next to everything this prompt produced."""
        return f"{self.name}@{self.version}"

    def render(self, inputs: dict[str, str | int | float]) -> list[Message]:
        """System and user messages with the inputs filled in; refuses wrong inputs."""
        given, declared = set(inputs), set(self.inputs)
        if given != declared:
            missing = sorted(declared - given)
            extra = sorted(given - declared)
            raise PromptError(f"prompt {self.ref}: missing inputs {missing}, unknown {extra}")
        values = {key: _as_text(self.ref, key, value) for key, value in inputs.items()}
        return [
            {"role": "system", "content": _fill(self.system, values)},
            {"role": "user", "content": _fill(self.user, values)},
        ]


def data_block(value: Any) -> str:
    """Untrusted text (paper text, model notes) as JSON inside a delimited data block.

    JSON escaping keeps quotes and newlines from ending the value early, and a closing tag
    inside the text is written as `<\\/untrusted_data` (a valid JSON escape of `/`), so no
    paper can close the block and speak as the instructions.
    """
    body = json.dumps(value, ensure_ascii=False, indent=1)
    body = re.sub(f"</({DATA_TAG})", r"<\\/\1", body, flags=re.IGNORECASE)
    return f"<{DATA_TAG}>\n{body}\n</{DATA_TAG}>"


@cache
def load_prompt(name: str) -> Prompt:
    """The template `prompts/<name>.md`, parsed and checked."""
    path = PROMPTS_DIR / f"{name}.md"
    if not path.is_file():
        raise PromptError(f"no prompt template prompts/{name}.md")
    return parse_prompt(path)


def parse_prompt(path: Path) -> Prompt:
    """A template file parsed and checked: header keys, name, placeholders, reply model."""
    name = path.stem
    header, system, user = _split(path)
    if header["name"] != name:
        raise PromptError(f"{path.name}: header name {header['name']!r} != file name")
    inputs = tuple(item.strip() for item in header["inputs"].split(",") if item.strip())
    used = set(PLACEHOLDER.findall(system + user))
    if used != set(inputs):
        raise PromptError(
            f"{path.name}: body uses {sorted(used)}, header declares {sorted(inputs)}"
        )
    if name not in REPLY_MODELS:
        raise PromptError(f"{path.name} has no reply model in prompts/replies.py")
    try:
        max_tokens = int(header["max_tokens"])
    except ValueError as err:
        raise PromptError(f"{path.name}: max_tokens is not an integer") from err
    return Prompt(
        name=name, version=header["version"], role=header["role"], max_tokens=max_tokens,
        inputs=inputs, system=system, user=user, reply_model=REPLY_MODELS[name],
    )


def prompt_names() -> list[str]:
    """Every template in this folder, sorted."""
    return sorted(path.stem for path in PROMPTS_DIR.glob("*.md"))


def _split(path: Path) -> tuple[dict[str, str], str, str]:
    text = path.read_text(encoding="utf-8")
    parts = text.split("---\n", 2)
    if len(parts) != 3 or parts[0].strip():
        raise PromptError(f"{path.name}: no header between --- lines at the top")
    header: dict[str, str] = {}
    for line in parts[1].splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            raise PromptError(f"{path.name}: header line {line!r} is not `key: value`")
        header[key.strip()] = value.strip()
    if set(header) != HEADER_KEYS:
        raise PromptError(f"{path.name}: header keys {sorted(header)} != {sorted(HEADER_KEYS)}")
    body = parts[2]
    match = re.fullmatch(r"\s*## system\n(.*?)\n## user\n(.*)", body, flags=re.DOTALL)
    if match is None:
        raise PromptError(f"{path.name}: body needs a `## system` then a `## user` section")
    return header, match.group(1).strip(), match.group(2).strip()


def _as_text(ref: str, key: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise PromptError(f"prompt {ref}: input {key} must be text or a number")
    return str(value)


def _fill(template: str, values: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda match: values[match.group(1)], template)
