"""Suites: a folder (or a list) of labelled scenarios evaluated together (docs/decisions/suites.md §1).

``load_suite(dir_or_files)`` loads every scenario of a folder - ``*.json`` and ``*.toml`` files, the
folder's sub-folders included, in the order of their relative paths; names starting with ``.`` or
``_`` are skipped - or the files given, in the order given. Each scenario is validated by the scenario
loader (SPEC_NOTES §1.2, the ``expect`` table included); every problem of every file is collected
and reported at once (:class:`crp_core.errors.SuiteError`, one :class:`FileProblem` per problem with
its file, line and field). Scenario names are the scenario's ``name``, else the file stem, and are
unique in a suite.

``check_suite(suite, kb)`` lists the fact ids the ``expect`` tables name that the CKF does not hold
(with file, line and field); ``require_known_ids`` raises them as a :class:`SuiteError`.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from crp_core.errors import FileProblem, Problem, ScenarioError, SuiteError
from crp_core.io.scenario import field_locator, format_path, load_scenario, load_scenario_bytes
from crp_core.model import Expectations, KnowledgeBase, Scenario

__all__ = ["SuiteScenario", "Suite", "load_suite", "suite_from_files", "suite_from_scenarios", "check_suite",
           "require_known_ids",
           "SUITE_SUFFIXES", "NO_EXPECTATIONS"]

SUITE_SUFFIXES: tuple[str, ...] = (".json", ".toml")
#: the labels of a scenario without an ``expect`` table: nothing required
NO_EXPECTATIONS = Expectations()

SuiteSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(frozen=True)
class SuiteScenario:
    """One scenario of a suite: its unique ``name``, the file it came from, the loaded scenario."""

    name: str
    path: str  # "" for a scenario built in memory
    scenario: Scenario

    @property
    def expect(self) -> Expectations:
        """The scenario's labels (empty when it has no ``expect`` table)."""
        return self.scenario.expect if self.scenario.expect is not None else NO_EXPECTATIONS


@dataclass(frozen=True)
class Suite:
    """Scenarios in a stable order (folder: relative paths; files: as given)."""

    scenarios: tuple[SuiteScenario, ...]
    source: str = ""

    def __len__(self) -> int:
        return len(self.scenarios)

    def __iter__(self) -> Iterator[SuiteScenario]:
        return iter(self.scenarios)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scenarios)

    def get(self, name: str) -> SuiteScenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(name)

    def select(self, names: Sequence[str]) -> Suite:
        """The sub-suite of ``names`` (suite order kept); an unknown name raises :class:`KeyError`."""
        want = set(names)
        unknown = want - set(self.names)
        if unknown:
            raise KeyError(f"not in the suite: {', '.join(sorted(unknown))}")
        return Suite(tuple(s for s in self.scenarios if s.name in want), self.source)


def _discover(folder: Path) -> list[Path]:
    out = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder)
        if any(part.startswith((".", "_")) for part in rel.parts):
            continue
        if p.is_file() and p.suffix.lower() in SUITE_SUFFIXES:
            out.append(p)
    return sorted(out, key=lambda p: p.relative_to(folder).as_posix())


def _files(source: SuiteSource) -> tuple[list[Path], str, list[FileProblem]]:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            files = _discover(path)
            if not files:
                return [], str(path), [FileProblem(0, "suite", "no scenario files (*.json, *.toml) in this folder",
                                                   file=str(path))]
            return files, str(path), []
        if not path.exists():
            return [], str(path), [FileProblem(0, "suite", "no such file or folder", file=str(path))]
        return [path], str(path), []
    paths = [Path(p) for p in source]
    if not paths:
        return [], "", [FileProblem(0, "suite", "no scenario files given")]
    seen: dict[str, Path] = {}
    for p in paths:
        seen.setdefault(os.path.realpath(p), p)  # the same file given twice is loaded once
    return list(seen.values()), ", ".join(str(p) for p in paths), []


def _located(p: Problem, file: str) -> FileProblem:
    return FileProblem(p.line, p.field, p.message, p.fact_id, file=file)


def load_suite(source: SuiteSource, *, expected_model: str | None = None) -> Suite:
    """Load a suite from a folder or from scenario files (docs/decisions/suites.md §1).

    Raises :class:`SuiteError` listing every problem of every file (file, line, field)."""
    files, label, problems = _files(source)
    items = [(str(path), path.stem, lambda path=path: load_scenario(path, expected_model=expected_model))
             for path in files]
    return _collect(items, label, problems)


def suite_from_files(files: Sequence[tuple[str, bytes]], *, expected_model: str | None = None,
                     source: str = "uploaded files") -> Suite:
    """A suite from (file name, content) pairs, e.g. uploads, in the order given; validated and
    reported like :func:`load_suite` (a ``.toml`` name is TOML, anything else JSON)."""
    if not files:
        raise SuiteError(f"suite {source} refused", [FileProblem(0, "suite", "no scenario files given")])
    items = [(name, Path(name).stem,
              lambda name=name, data=data: load_scenario_bytes(data, name, expected_model=expected_model))
             for name, data in files]
    return _collect(items, source, [])


def _collect(items: Sequence[tuple[str, str, Callable[[], Scenario]]], label: str,
             problems: list[FileProblem]) -> Suite:
    """Load each (file, default name, loader), collecting every problem; names unique in the suite."""
    loaded: list[SuiteScenario] = []
    first: dict[str, str] = {}
    for file, stem, load in items:
        try:
            scenario = load()
        except ScenarioError as exc:
            problems.extend(_located(p, file) for p in exc.problems)
            continue
        name = scenario.name or stem
        if name in first:
            problems.append(FileProblem(0, "name", f"scenario name {name!r} is also the name of {first[name]}; "
                                                   "names are unique in a suite", file=file))
            continue
        first[name] = file
        loaded.append(SuiteScenario(name=name, path=file, scenario=scenario))
    if problems:
        raise SuiteError(f"suite {label} refused", problems)
    return Suite(tuple(loaded), label)


def suite_from_scenarios(scenarios: Sequence[Scenario], source: str = "") -> Suite:
    """A suite of scenarios built in memory (named by ``scenario.name``, else ``scenario-<i>``)."""
    out: list[SuiteScenario] = []
    problems: list[FileProblem] = []
    seen: set[str] = set()
    for i, s in enumerate(scenarios):
        name = s.name or f"scenario-{i + 1}"
        if name in seen:
            problems.append(FileProblem(0, "name", f"scenario name {name!r} is used twice", file=f"scenarios[{i}]"))
            continue
        seen.add(name)
        out.append(SuiteScenario(name=name, path="", scenario=s))
    if problems:
        raise SuiteError("suite refused", problems)
    return Suite(tuple(out), source)


def check_suite(suite: Suite, kb: KnowledgeBase) -> tuple[FileProblem, ...]:
    """The fact ids of the ``expect`` tables that ``kb`` does not hold, one problem each (file, line, field)."""
    problems: list[FileProblem] = []
    for item in suite:
        e = item.scenario.expect
        if e is None:
            continue
        paths: list[tuple[tuple[str | int, ...], str]] = []
        paths += [(("expect", "must_include", i), f) for i, f in enumerate(e.must_include)]
        paths += [(("expect", "must_exclude", i), f) for i, f in enumerate(e.must_exclude)]
        for i, c in enumerate(e.conflicts):
            paths += [(("expect", "conflicts", i, "fact_a"), c.fact_a),
                      (("expect", "conflicts", i, "fact_b"), c.fact_b)]
        unknown = [(p, f) for p, f in paths if kb.get(f) is None]
        if not unknown:
            continue
        locate = _locator(item.path)
        problems.extend(FileProblem(locate(p), format_path(p), f"no fact with id {f!r} in the CKF {kb.source}",
                                    f, file=item.path or item.name) for p, f in unknown)
    return tuple(problems)


def _no_line(path: tuple[str | int, ...]) -> int:
    return 0


def _locator(path: str) -> Callable[[tuple[str | int, ...]], int]:
    """The scenario file's field locator (lines of its JSON), or one giving 0."""
    if path:
        try:
            return field_locator(Path(path).read_bytes(), path)
        except OSError:
            pass
    return _no_line


def require_known_ids(suite: Suite, kb: KnowledgeBase) -> None:
    """Raise :class:`SuiteError` when an ``expect`` table names a fact the CKF does not hold."""
    problems = check_suite(suite, kb)
    if problems:
        raise SuiteError(f"suite {suite.source} does not match the CKF {kb.source}", problems)
