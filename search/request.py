"""What a search asks for: the query, the run parameters, and what it must not use."""

from datetime import date

from pydantic import BaseModel, Field

from crase.settings import SearchSettings


class SearchRequest(BaseModel):
    query: str = Field(..., min_length=3, max_length=4000, description="The research question")
    params: SearchSettings = Field(default_factory=SearchSettings, description="Run parameters")
    reference_year: int | None = Field(
        None, ge=1900, le=2200,
        description="Year ages are measured from (the query's year); default: this year",
    )
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with all their edges (benchmarks: the query's source)",
    )
    seed_override: list[str] | None = Field(
        None, max_length=10_000,
        description="Use these paper ids as the seeds instead of planning and searching "
                    "(benchmarks: the seed-corruption test); stages 2-3 run unchanged",
    )

    def age_reference(self) -> int:
        return self.reference_year or date.today().year
