"""Arguments and helpers shared by the sub-commands: the input arguments of the commands that load a
CKF (``run``, ``fanout``, ``conflicts``, ``check``, ``tune``) and :func:`load_input_ckf` (with an SDK
snapshot's source-type mapping), up-front checks of the paths a command
writes to (``--cache-dir``, ``--out``, ``--write-baseline``), atomic writes, and :func:`visible` for
printing data (ids, names, notes) without letting its control characters drive the terminal."""

from __future__ import annotations

import argparse
import os
import stat
import sys
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from crp_core.config import SOURCE_TYPES
from crp_core.errors import ConfigError, Problem

if TYPE_CHECKING:
    from crp_core.io.ckf.sdk_map import SourceTypeMap
    from crp_core.model import KnowledgeBase
    from crp_core.records import Clamp, ConflictPair

    #: what each sub-command's ``register`` receives: ``ArgumentParser.add_subparsers()``
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def cache_dir_arg(value: str) -> str:
    """argparse ``type`` of ``--cache-dir``: refuse at once (exit 2, before any model load) a path that
    is a file, or whose nearest existing ancestor is a file or a folder that cannot be written (the
    cache folder has to be created there)."""
    if value == "":
        raise argparse.ArgumentTypeError("an empty path")
    path = os.path.abspath(os.path.expanduser(value))
    if os.path.lexists(path) and not os.path.isdir(path):
        what = "a broken symbolic link" if os.path.islink(path) and not os.path.exists(path) else "not a folder"
        raise argparse.ArgumentTypeError(f"{value} is {what}; give a folder (created if missing)")
    if not os.path.isdir(path):
        ancestor = os.path.dirname(path)
        while not os.path.lexists(ancestor) and os.path.dirname(ancestor) != ancestor:
            ancestor = os.path.dirname(ancestor)
        if not os.path.isdir(ancestor):
            raise argparse.ArgumentTypeError(
                f"{value}: {ancestor} is not a folder, so the cache folder cannot be created there"
            )
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(
                f"{value}: the folder {ancestor} is not writable, so the cache folder cannot be created there"
            )
    return value


def check_writable(path: str | os.PathLike[str], flag: str) -> str:
    """Refuse (:class:`ConfigError`, exit 2) an output path that cannot be written, before the work
    that produces it: its folder must exist and be a writable folder; the path itself, when it exists,
    must be a regular file (not a folder, FIFO, socket or device). Returns the path as a string."""
    p = os.fspath(path)
    if p == "":
        raise ConfigError(f"{flag}: an empty path")
    folder = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(folder):
        why = "does not exist" if not os.path.lexists(folder) else "is not a folder"
        raise ConfigError(f"{flag}: cannot write {p}: the folder {folder} {why}")
    if os.path.lexists(p):
        try:
            st = os.stat(p)
        except OSError as exc:
            raise ConfigError(f"{flag}: cannot write {p}: {exc.strerror or exc}") from None
        if stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"{flag}: cannot write {p}: it is a folder; name a file")
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{flag}: cannot write {p}: not a regular file (a FIFO, socket or device)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag}: cannot write {p}: the folder {folder} is not writable")
    return p


def write_output(path: str, text: str, flag: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file in the same folder, then
    ``os.replace``; :func:`crp_core.support.files.write_text_atomic`); a failure is a
    :class:`ConfigError` naming ``flag``. The path is checked again first (it may have changed since
    :func:`check_writable` ran, e.g. during a long study)."""
    from crp_core.support.files import write_text_atomic

    check_writable(path, flag)
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise ConfigError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None


#: Unicode categories drawn as escapes by :func:`visible`: controls (C0, DEL, C1), format characters
#: (bidi embeddings / overrides / isolates, zero-width ...), line and paragraph separators
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})


def visible(text: object, *, newlines: bool = False) -> str:
    """``text`` with every control, format or separator character drawn as an escape (``\\x1b``,
    ``\\u202e``, ``\\n``), so data printed by the CLI (fact ids, operator names, notes, scenario
    names) cannot clear the screen, recolour it, move the cursor or reorder a line. ``newlines=True``
    keeps ``\\n`` (multi-line notes printed indented by the caller); a tab is always kept. Backslashes
    are not doubled: the text stays readable, the JSON / CSV exports carry it exactly."""
    s = str(text)
    if s.isprintable():  # the usual text: nothing to escape
        return s
    out: list[str] = []
    for ch in s:
        if ch == "\t" or (ch == "\n" and newlines):
            out.append(ch)
        elif unicodedata.category(ch) in _HIDDEN:
            o = ord(ch)
            out.append({"\n": "\\n", "\r": "\\r"}.get(ch) or (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"))
        else:
            out.append(ch)
    return "".join(out)


def _whole_at_least(value: str, least: int) -> int:
    """``value`` as a whole number of at least ``least``, or the argparse error saying why not."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if n < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {n}")
    return n


def count_arg(value: str) -> int:
    """argparse ``type`` of a count of at least 0."""
    return _whole_at_least(value, 0)


def positive_int(value: str) -> int:
    """argparse ``type`` of a count of at least 1."""
    return _whole_at_least(value, 1)


def max_bytes_arg(value: str) -> int:
    """argparse ``type`` of ``--max-bytes``: a whole number of bytes within the ``ckf_max_bytes`` range of
    the configuration (every command checks it here, whether or not it makes a configuration)."""
    from crp_core.config import RANGES

    lo, hi = RANGES["ckf_max_bytes"]
    text = value.strip()
    try:
        n = int(text) if text.isascii() and len(text) <= 30 else -1
    except ValueError:
        n = -1
    if not lo <= n <= hi:
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a whole number of bytes between {lo} and {hi}")
    return n


class _MaxBytesAsSetting(argparse.Action):
    """``--max-bytes N`` on a command with ``--set``: the same as ``--set ckf_max_bytes=N`` at its place
    on the command line, so one configuration key holds the limit."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option: object = None
    ) -> None:
        namespace.set_args = [*getattr(namespace, "set_args", []), f"ckf_max_bytes={values}"]


def add_max_bytes_arg(p: argparse.ArgumentParser, what: str = "CKF file", *, as_setting: bool = False) -> None:
    """``--max-bytes N``: the largest input accepted. Every command that reads a CKF has it, so the size
    refusal's "--max-bytes" names a flag of the command that printed it. ``as_setting``: the command
    has ``--set`` and the flag sets ``ckf_max_bytes`` (else ``args.max_bytes``, None when not given)."""
    help = f"largest {what} accepted, in bytes (default: ckf_max_bytes of the configuration)"
    if as_setting:
        p.add_argument("--max-bytes", type=max_bytes_arg, metavar="N", help=help, action=_MaxBytesAsSetting)
    else:
        p.add_argument("--max-bytes", type=max_bytes_arg, default=None, metavar="N", help=help)


def add_config_args(p: argparse.ArgumentParser, *, config_help: str = "", set_help: str = "") -> None:
    """``--config TOML`` and ``--set KEY=VALUE`` (repeatable, into ``set_args``): the configuration of a command,
    read with :func:`crp_core.config.layered_config` (defaults < --config < [the scenario's config] < --set).
    ``config_help`` / ``set_help``: what the configuration does for this command, when it says more."""
    p.add_argument(
        "--config",
        metavar="TOML",
        default=None,
        help=config_help or "configuration file (keys of docs/reference/config.md)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="set_args",
        help=set_help or "override one configuration key (repeatable; dotted keys for tables, e.g. ttl_days.news=60)",
    )


def add_input_args(p: argparse.ArgumentParser, *, scenario: bool, now_help: str) -> None:
    """``--ckf`` [``--scenario``] ``--config`` ``--set`` (repeatable, into ``set_args``) ``--max-bytes``
    (into ``set_args`` as ``ckf_max_bytes``) ``--now``
    ``--lenient`` ``--cache-dir`` ``--sdk-map`` ``--source-type`` (:func:`input_source_map`).
    Configuration precedence: defaults < --config < the scenario's
    config < --set (``crp_core.config.layered_config``)."""
    p.add_argument(
        "--ckf", required=True, metavar="PATH", help="CKF file (.jsonl/.ndjson/.json/.csv/.parquet) or directory"
    )
    if scenario:
        p.add_argument("--scenario", required=True, metavar="PATH", help="scenario file (.json or .toml)")
    add_config_args(p)
    add_max_bytes_arg(p, as_setting=True)
    p.add_argument("--now", metavar="ISO", default=None, help=now_help)
    p.add_argument("--lenient", action="store_true", help="skip bad facts of the CKF instead of refusing it")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        type=cache_dir_arg,
        help="embedding / index cache directory (created if missing; must not be a file)",
    )
    add_sdk_map_args(p)


def now_arg(value: str | None) -> datetime | None:
    """``--now`` as an aware datetime, None when not given; an unreadable value is a :class:`ConfigError`."""
    if not value:
        return None
    from crp_core.io.timeparse import parse_timestamp

    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise ConfigError(f"--now: {exc}") from None


def add_sdk_map_args(p: argparse.ArgumentParser, what: str = "--ckf") -> None:
    """``--sdk-map`` ``--source-type``: the source types of an SDK snapshot's facts (:func:`input_source_map`)."""
    p.add_argument(
        "--sdk-map",
        metavar="TOML",
        default=None,
        help=f"when {what} is a crprotocol SDK snapshot: the source-type mapping ([[rule]] tables by "
        "category / source_window_id glob / extraction_stage, first match wins; as import-sdk --map)",
    )
    p.add_argument(
        "--source-type",
        choices=SOURCE_TYPES,
        default=None,
        metavar="TYPE",
        help=f"when {what} is an SDK snapshot: the source type of the facts no mapping rule matches "
        "(default: the mapping's default, else unverified)",
    )


def input_source_map(args: argparse.Namespace) -> SourceTypeMap | None:
    """The SDK source-type mapping of ``--sdk-map`` / ``--source-type`` (docs/decisions/sdk-snapshots.md);
    None when neither is given. A bad mapping file is a :class:`~crp_core.errors.CKFError` naming the key."""
    from crp_core.io.ckf.sdk_map import SourceTypeMap, load_source_map

    path, default = getattr(args, "sdk_map", None), getattr(args, "source_type", None)
    if path is None and default is None:
        return None
    return (load_source_map(path) if path else SourceTypeMap()).with_default(default)


def load_input_ckf(
    path: str,
    *,
    lenient: bool,
    max_bytes: int | None,
    source_map: SourceTypeMap | None,
    map_vectors: bool = False,
    warn: bool = True,
) -> KnowledgeBase:
    """``load_ckf`` of a command's ``--ckf``; a mapping given for a CKF that is not an SDK snapshot is
    said on stderr (it has no effect there), and so are its unknown field names (``warn``; a misspelt
    field name changes what the fact means: :func:`warn_unknown_fields`). ``map_vectors``: a folder's
    vectors memory-mapped (``load_ckf``)."""
    from crp_core.io.ckf import load_ckf

    kb = load_ckf(path, lenient=lenient, max_bytes=max_bytes, source_map=source_map, map_vectors=map_vectors)
    if warn:
        warn_unknown_fields(path, kb.warnings)
        warn_languages(path, kb)
    if source_map is not None and kb.fmt != "sdk":
        print(
            f"crp-inspect: warning: --sdk-map / --source-type ignored: {visible(path)} is not a crprotocol SDK "
            "snapshot (a CKF carries its own source_type)",
            file=sys.stderr,
        )
    return kb


#: unknown field names of a CKF named one by one on stderr; the rest are counted
SHOWN_WARNINGS = 3


def warn_unknown_fields(path: str, warnings: Sequence[Problem]) -> None:
    """One line on stderr naming the fields of a CKF that its format does not have (each ignored: a
    misspelt ``source_type`` or ``modified_at`` silently changes a fact's authority), the first
    :data:`SHOWN_WARNINGS` with the line they first appear on; ``validate`` lists every warning."""
    from crp_core.io.ckf.facts import FACT_FIELDS

    unknown = [w for w in warnings if w.field not in FACT_FIELDS]
    if not unknown:
        return
    shown = ", ".join(f"{visible(w.field)!r} (line {w.line})" for w in unknown[:SHOWN_WARNINGS])
    more = f" and {len(unknown) - SHOWN_WARNINGS} more" if len(unknown) > SHOWN_WARNINGS else ""
    print(
        f"crp-inspect: warning: {visible(path)}: unknown field(s) ignored: {shown}{more} "
        "(a misspelt field falls back to its default; crp-inspect validate lists every warning)",
        file=sys.stderr,
    )


def warn_languages(path: str, kb: KnowledgeBase) -> None:
    """One line on stderr when facts of the CKF do not read as English: the detector's findings on them are
    incomplete (:class:`~crp_core.stages.contradictions.language.LanguageProfile`; docs/decisions/languages.md)."""
    from crp_core.stages.contradictions.language import language_profile

    note = language_profile(kb.facts).note
    if note is not None:
        print(f"crp-inspect: warning: {visible(path)}: {visible(note)}", file=sys.stderr)


def warn_clamps(clamps: Iterable[Clamp]) -> None:
    """Each setting the run used at another value than asked (``PipelineResult.clamps``), one warning
    line on stderr (the JSON report carries them as ``clamps``; docs/decisions/hardening.md)."""
    for c in clamps:
        print(f"crp-inspect: warning: {visible(c.message)}", file=sys.stderr)


class TerminalProgress:
    """Progress of a long preparation on a terminal: ``embedding 1,024/10,000 texts (10%) 352/s ETA 25 s``,
    redrawn in place at most every ``interval`` seconds, a final line when done.

    Prints only when ``stream`` is a terminal (``isatty()``): piped, redirected or captured stderr gets
    nothing, so ``--json`` output and tests are unaffected. Nothing is drawn when every item was done
    already at the first reading (cache hits, embeddings shipped with the CKF). The rate and ETA are
    :class:`crp_core.corpus.jobs.EmbeddingProgress`'s (this run's own work, cache hits excluded).
    """

    def __init__(
        self,
        label: str = "embedding",
        unit: str = "texts",
        *,
        stream: TextIO | None = None,
        interval: float = 0.2,
        clock: Callable[[], float] | None = None,
    ) -> None:
        import time

        from crp_core.corpus.jobs import EmbeddingProgress

        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label, self.unit, self.interval = label, unit, interval
        self._clock = clock or time.monotonic
        self._progress = EmbeddingProgress(self._clock)
        self._last_draw: float | None = None
        self._drawn = False
        self._finished = False

    def __call__(self, done: int, total: int) -> None:
        """A ``Progress`` callback (``(done, total)``)."""
        if not self.enabled or self._finished:
            return
        first = self._last_draw is None and not self._drawn
        self._progress.update(done, total)
        if first and total > 0 and done >= total:  # nothing to do: everything was there already
            self._finished = True
            return
        now = self._clock()
        final = total > 0 and done >= total
        if not final and self._last_draw is not None and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        self._draw(final)

    def _draw(self, final: bool) -> None:
        snap = self._progress.snapshot()
        pct = f" ({100 * snap.done // snap.total}%)" if snap.total else ""
        rate = f" {snap.rate:,.0f}/s" if snap.rate else ""
        if final:
            tail = f" in {snap.elapsed_s:.1f} s"
        else:
            tail = f" ETA {snap.eta_s:,.0f} s" if snap.eta_s is not None else ""
        line = f"{self.label} {snap.done:,}/{snap.total:,} {self.unit}{pct}{rate}{tail}"
        self.stream.write("\r" + line + "\x1b[K" + ("\n" if final else ""))
        self.stream.flush()
        self._drawn = True
        self._finished = final

    def note(self, message: str) -> None:
        """One line (e.g. the index build), on a terminal only."""
        if self.enabled:
            self.stream.write(message + "\n")
            self.stream.flush()


def found_by(pair: ConflictPair) -> str:
    """ " (learned)" after the patterns of a pair the detector's learned comparison found (``run`` and
    ``conflicts`` print a pair the same way)."""
    return " (learned)" if pair.conflict.learned else ""
