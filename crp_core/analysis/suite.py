"""Suites: a folder (or a list) of labelled scenarios evaluated together (docs/decisions/suites.md §1).

``load_suite(dir_or_files)`` loads every scenario of a folder - ``*.json`` and ``*.toml`` files, the
folder's sub-folders included, in the order of their relative paths; names starting with ``.`` or
``_`` are skipped; symlinked sub-folders are followed, a folder reached twice is a problem; an entry
with a scenario suffix that is not a regular file (a FIFO, a link loop, a dangling link) is refused by
name, never skipped - or the files and folders given, in the order given (each folder walked as above,
a file reached twice loaded once). Each scenario is validated by the scenario
loader (docs/reference/scenarios.md, the ``expect`` table included); every problem of every file is collected
and reported at once (:class:`crp_core.errors.SuiteError`, one :class:`FileProblem` per problem with
its file, line and field). Scenario names are the scenario's ``name``, else the file stem, and are
unique in a suite.

``check_suite(suite, kb)`` lists the fact ids the ``expect`` tables name that the CKF does not hold
(with file, line and field); ``require_known_ids`` raises them as a :class:`SuiteError`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crp_core.errors import MAX_PROBLEMS, FileProblem, Problem, ScenarioError, SuiteError, ValidationError, capped
from crp_core.io.ckf.listing import SCENARIO_SUFFIXES, ckf_manifest
from crp_core.io.located import field_locator, format_path
from crp_core.io.scenario import load_scenario, load_scenario_bytes
from crp_core.model import Expectations, KnowledgeBase, Scenario
from crp_core.support.files import read_regular_file

__all__ = [
    "SuiteScenario",
    "Suite",
    "load_suite",
    "suite_from_files",
    "suite_from_scenarios",
    "check_suite",
    "require_known_ids",
    "SUITE_SUFFIXES",
    "NO_EXPECTATIONS",
]

SUITE_SUFFIXES: tuple[str, ...] = SCENARIO_SUFFIXES  # a suite is scenario files
#: a scenario file is read again only to locate problems; the scenario loader's own limit
_MAX_LOCATED_BYTES = 64 * 1024 * 1024
#: the labels of a scenario without an ``expect`` table: nothing required
NO_EXPECTATIONS = Expectations()

SuiteSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(frozen=True)
class SuiteScenario:
    """One scenario of a suite: its unique ``name``, the file it came from, the loaded scenario."""

    name: str
    path: str  # "" for a scenario built in memory
    scenario: Scenario
    #: the line of a field of the file's text (an uploaded file has no path to read again); None: read ``path``
    locate: Callable[[tuple[str | int, ...]], int] | None = field(default=None, compare=False, repr=False)

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


def _discover(folder: Path) -> tuple[list[Path], list[FileProblem]]:
    """Every ``*.json`` / ``*.toml`` entry under ``folder`` that is not a folder, sub-folders included
    (names starting with ``.`` or ``_`` skipped, and a directory CKF's ``manifest.json``), by relative path;
    and the problems of the walk.

    An entry with a scenario suffix is kept whatever it is - a FIFO, socket, device, symlink loop or
    dangling link included - so the scenario loader refuses it by name (never silently skipped: in a
    CI gate a scenario not evaluated is a pass nobody earned). Symlinked sub-folders are followed; a
    folder reached a second time (a link back to an ancestor, or a second link to one folder) is a
    problem, not walked again."""
    out: list[Path] = []
    problems: list[FileProblem] = []
    st = os.stat(folder)
    visited = {(st.st_dev, st.st_ino)}

    def walk(d: Path) -> None:
        try:
            names = sorted(e.name for e in os.scandir(d))
        except OSError as exc:
            problems.append(FileProblem(0, "suite", f"cannot list the folder: {exc.strerror or exc}", file=str(d)))
            return
        for name in names:
            if name.startswith((".", "_")):
                continue
            p = d / name
            try:
                sub = os.stat(p)  # follows links
            except OSError:
                sub = None  # a link loop or a dangling link: the loader says which, if it is a scenario
            if sub is not None and stat.S_ISDIR(sub.st_mode):
                key = (sub.st_dev, sub.st_ino)
                if key in visited:
                    problems.append(
                        FileProblem(
                            0,
                            "suite",
                            "leads to a folder already in the suite (a symlink loop "
                            "or a second link to it); refusing to walk it twice",
                            file=str(p),
                        )
                    )
                    continue
                visited.add(key)
                walk(p)
            elif p.suffix.lower() in SUITE_SUFFIXES and not ckf_manifest(p):
                out.append(p)

    walk(folder)
    return sorted(out, key=lambda p: p.relative_to(folder).as_posix()), problems


def _files(source: SuiteSource) -> tuple[list[Path], str, list[FileProblem]]:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            files, problems = _folder(path)
            return files, str(path), problems
        if not os.path.lexists(path):
            return [], str(path), [FileProblem(0, "suite", "no such file or folder", file=str(path))]
        return [path], str(path), []  # a FIFO, link loop or dangling link: the scenario loader refuses it
    paths = [Path(p) for p in source]
    if not paths:
        return [], "", [FileProblem(0, "suite", "no scenario files given")]
    found: list[Path] = []
    walk_problems: list[FileProblem] = []
    for p in paths:  # a folder of the list is walked like a folder given alone; a file is taken as it is
        files, more = _folder(p) if p.is_dir() else ([p], [])
        found += files
        walk_problems += more
    seen: dict[str, Path] = {}
    for p in found:
        seen.setdefault(os.path.realpath(p), p)  # the same file given (or reached) twice is loaded once
    return list(seen.values()), ", ".join(str(p) for p in paths), walk_problems


def _folder(path: Path) -> tuple[list[Path], list[FileProblem]]:
    """The scenario files of one folder, and the problems of its walk (an empty folder is one)."""
    files, problems = _discover(path)
    if not files and not problems:
        problems = [FileProblem(0, "suite", "no scenario files (*.json, *.toml) in this folder", file=str(path))]
    return files, problems


def _located(p: Problem, file: str) -> FileProblem:
    return FileProblem(p.line, p.field, p.message, p.fact_id, file=file)


def load_suite(source: SuiteSource, *, expected_model: str | None = None) -> Suite:
    """Load a suite from a folder or from scenario files (docs/decisions/suites.md §1).

    Raises :class:`SuiteError` listing every problem of every file (file, line, field)."""
    files, label, problems = _files(source)
    items = [
        (
            str(path),
            path.stem,
            lambda path=path: load_scenario(path, expected_model=expected_model),
            lambda path=path: _locator(str(path)),
        )
        for path in files
    ]
    return _collect(items, label, problems)


def suite_from_files(
    files: Sequence[tuple[str, bytes]], *, expected_model: str | None = None, source: str = "uploaded files"
) -> Suite:
    """A suite from (file name, content) pairs, e.g. uploads, in the order given; validated and
    reported like :func:`load_suite` (a ``.toml`` name is TOML, anything else JSON)."""
    if not files:
        raise SuiteError(f"suite {source} refused", [FileProblem(0, "suite", "no scenario files given")])
    items = [
        (
            name,
            Path(name).stem,
            lambda name=name, data=data: load_scenario_bytes(data, name, expected_model=expected_model),
            lambda name=name, data=data: field_locator(data, name),
        )
        for name, data in files
    ]
    return _collect(items, source, [])


Locator = Callable[[tuple[str | int, ...]], int]


def _collect(
    items: Sequence[tuple[str, str, Callable[[], Scenario], Callable[[], Locator]]],
    label: str,
    problems: list[FileProblem],
) -> Suite:
    """Load each (file, default name, loader, locator factory), collecting every problem (at most
    :data:`MAX_PROBLEMS` per file, the scenario loader caps its own); names unique in the suite."""
    loaded: list[SuiteScenario] = []
    first: dict[str, str] = {}
    for file, stem, load, locator in items:
        try:
            scenario = load()
        except ScenarioError as exc:
            problems.extend(_located(p, file) for p in exc.problems)
            continue
        name = scenario.name or stem
        if name in first:
            # the line of the name field (a name from the file stem has none)
            line = locator()(("name",)) if scenario.name else 0
            problems.append(
                FileProblem(
                    line,
                    "name",
                    f"scenario name {name!r} is also the name of {first[name]}; names are unique in a suite",
                    file=file,
                )
            )
            continue
        first[name] = file
        loaded.append(SuiteScenario(name=name, path=file, scenario=scenario, locate=_lazy(locator)))
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
            paths += [
                (("expect", "conflicts", i, "fact_a"), c.fact_a),
                (("expect", "conflicts", i, "fact_b"), c.fact_b),
            ]
        for i, (a, b) in enumerate(e.not_conflicts):
            paths += [(("expect", "not_conflicts", i, "fact_a"), a), (("expect", "not_conflicts", i, "fact_b"), b)]
        paths += [(("expect", "relevance", f), f) for f in e.relevance]
        unknown = [(p, f) for p, f in paths if kb.get(f) is None]
        if not unknown:
            continue
        locate = item.locate or _locator(item.path)
        file = item.path or item.name
        listed = [
            FileProblem(locate(p), format_path(p), f"no fact with id {f!r} in the CKF {kb.source}", f, file=file)
            for p, f in unknown[:MAX_PROBLEMS]
        ]
        problems.extend(_located(p, file) for p in capped(list(listed), len(unknown)))
    return tuple(problems)


def _lazy(factory: Callable[[], Locator]) -> Locator:
    """A locator built on its first use (most scenarios never need one), a read error giving line 0."""
    built: list[Locator] = []

    def locate(path: tuple[str | int, ...]) -> int:
        if not built:
            try:
                built.append(factory())
            except ValidationError:
                built.append(_no_line)
        return built[0](path)

    return locate


def _no_line(path: tuple[str | int, ...]) -> int:
    return 0


def _locator(path: str) -> Locator:
    """The scenario file's field locator (lines of its JSON), or one giving 0."""
    if path:
        try:
            return field_locator(read_regular_file(path, max_bytes=_MAX_LOCATED_BYTES, what="scenario"), path)
        except ValidationError:
            pass
    return _no_line


def require_known_ids(suite: Suite, kb: KnowledgeBase) -> None:
    """Raise :class:`SuiteError` when an ``expect`` table names a fact the CKF does not hold."""
    problems = check_suite(suite, kb)
    if problems:
        raise SuiteError(f"suite {suite.source} does not match the CKF {kb.source}", problems)
