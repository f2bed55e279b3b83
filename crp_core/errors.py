"""Error types. Every user-facing failure is one of these, never a bare traceback."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One validation problem, located by line/row (1-based; 0 = whole file) and field."""

    line: int
    field: str
    message: str
    fact_id: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        fid = f" (fact {self.fact_id!r})" if self.fact_id else ""
        return f"{where}, field '{self.field}'{fid}: {self.message}"


@dataclass(frozen=True)
class FileProblem(Problem):
    """A :class:`Problem` of one file among several (a scenario of a suite): ``file`` names it."""

    file: str = ""

    def __str__(self) -> str:
        return f"{self.file}: {Problem.__str__(self)}" if self.file else Problem.__str__(self)


#: problems listed per file (scenario, suite file, baseline): the rest are counted in one last problem
#: (with it, a file's problems stay within the 200 a ValidationError prints)
MAX_PROBLEMS = 100


def capped(problems: list[Problem], total: int, *, field: str = "problems") -> list[Problem]:
    """``problems`` (the first :data:`MAX_PROBLEMS` found) plus, when ``total`` is larger, one last
    problem counting the others (line 0; it comes after the listed ones)."""
    if total <= len(problems):
        return problems
    return problems + [
        Problem(
            0,
            field,
            f"... and {total - len(problems)} more problem(s) not listed "
            f"({total} in all; the first {len(problems)} are listed)",
        )
    ]


class CRPError(Exception):
    """Base class of every error crp_core raises on purpose."""


class ValidationError(CRPError):
    """Input refused; ``problems`` lists every problem found (docs/reference/ckf.md)."""

    def __init__(self, what: str, problems: Sequence[Problem]):
        self.what = what
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems[:200])
        more = f"\n  ... and {len(self.problems) - 200} more" if len(self.problems) > 200 else ""
        super().__init__(f"{what}: {len(self.problems)} problem(s)\n{lines}{more}")


class CKFError(ValidationError):
    """A CKF file was refused."""


class ScenarioError(ValidationError):
    """A scenario file was refused."""


class SuiteError(ValidationError):
    """A suite of scenarios was refused; every problem names its file (:class:`FileProblem`)."""


class ConfigError(CRPError):
    """Unknown configuration key or a value of the wrong type (docs/reference/config.md)."""


class DetectorWeightsError(CRPError):
    """The learned comparison's weights file is malformed or not for this code's features (pipeline.md §4)."""


class EmbeddingModelMismatch(CRPError):
    """Embeddings from two different models must never mix (SPEC-024 §2.5)."""


class SnapshotMutationError(CRPError, TypeError):
    """A branch tried to mutate its read-only Coverage Set snapshot (SPEC-027 §1.5)."""
