"""What an idea run asks for: the idea, the mode, eligibility, exclusions, local PDFs and the
budgets. JSON in, so the CLI, the Python function and the HTTP API share one shape."""

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from crase.settings import IdeaSettings

IdeaMode = Literal["retrieval_eval", "full_report"]


class IdeaRequest(BaseModel):
    idea: str = Field(..., min_length=3, max_length=8000,
                      description="The research idea, kept verbatim through every stage")
    mode: IdeaMode = Field(
        "retrieval_eval",
        description="retrieval_eval ends after the ranking and the audit; full_report adds "
                    "a report written from the saved evidence")
    year_min: int | None = Field(None, ge=1600, le=2200,
                                 description="Earliest eligible publication year")
    year_max: int | None = Field(None, ge=1600, le=2200,
                                 description="Latest eligible publication year")
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with their edges (benchmarks: the query's source)")
    pdf_dir: str | None = Field(
        None, description="Local folder of PDFs named by paper id or arXiv id ('/' as '_')")
    providers: bool | None = Field(
        None, description="Probe and use external providers; unset = idea.use_providers")
    params: IdeaSettings = Field(default_factory=IdeaSettings, description="Budgets and gates")

    @model_validator(mode="after")
    def check_years(self) -> "IdeaRequest":
        if self.year_min is not None and self.year_max is not None \
                and self.year_min > self.year_max:
            raise ValueError(f"year_min {self.year_min} is after year_max {self.year_max}")
        return self
