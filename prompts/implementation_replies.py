"""The reply of the code extractor's model analysis (prompts/analyze_implementation.md).

Kept apart from prompts/replies.py so that module can import it into REPLY_MODELS without
a cycle; it follows the same strict rules (JSON types exactly, no extra keys).
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Note = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Component = Literal["training loop", "preprocessing", "hyperparameters", "evaluation",
                    "model architecture", "data", "other"]


class MissingComponent(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    component: Component
    detail: Note


class ImplementationReply(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    frameworks: list[Name] = Field(max_length=20)
    dependencies: list[Name] = Field(max_length=50)
    model_structure: list[Name] = Field(max_length=30)
    missing_components: list[MissingComponent] = Field(max_length=20)
    pseudocode_completeness: Annotated[int, Field(ge=0, le=2)]
    reproducibility_level: Annotated[int, Field(ge=1, le=3)]
    notes: Note
