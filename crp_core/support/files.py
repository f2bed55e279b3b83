"""Reading an input file whole, safely, and writing an output file whole or not at all.

Every file the library reads by path goes through :func:`read_regular_file` (CKFs, scenarios, suite
files, config TOML, baselines, source-type maps, export reports): the path is stat-ed first and
refused, naming it, when it is not a regular file (a FIFO, socket or device would block a reader
forever or never end), a symlink loop, a dangling link, a folder, or larger than the caller's limit;
the file is then opened non-blocking (a FIFO swapped in after the stat cannot block) and read in
chunks up to the limit, so memory follows the file's size, not the limit. A refusal is the caller's
:class:`~crp_core.errors.ValidationError` subclass with one :class:`~crp_core.errors.Problem` whose
message names the path; a file over the limit is said by :func:`too_large_reason` wherever a size
limit is checked. :func:`regular_or_absent` is the check of a path that may not exist yet.

Every file the library writes goes through :func:`write_atomic` or :func:`replaced_atomically`: a
temporary file beside the target, flushed to disk, then renamed over it, so a failed write, a full
disk or a kill never leaves a half-written file and the file that was there stays until the new one
is complete.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterator
from typing import BinaryIO

from crp_core.errors import ConfigError, Problem, ValidationError

__all__ = [
    "link_reason",
    "not_readable_reason",
    "regular_or_absent",
    "check_regular_file",
    "read_regular_file",
    "read_settings_text",
    "too_large_reason",
    "write_atomic",
    "write_cache_file",
    "write_text_atomic",
    "replaced_atomically",
    "TEMP_PREFIX",
]

_CHUNK = 1 << 20
#: the name prefix of the temporary files the atomic writes leave behind only while they run
TEMP_PREFIX = ".crp-write-"


# ---- reading -------------------------------------------------------------------------------------
def link_reason(path: str, exc: OSError) -> str | None:
    """What a failed ``stat`` of ``path`` means when links are involved: a loop, or a dangling link."""
    if exc.errno == errno.ELOOP:
        return (
            f"{path} is a symlink loop (a symbolic link that leads back to itself, directly or through "
            "other links); refusing to read it"
        )
    if exc.errno == errno.ENOENT and os.path.islink(path):
        return f"{path} is a broken symbolic link (its target {os.readlink(path)!r} does not exist)"
    return None


def _kind_reason(path: str, mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"{path} is a folder, not a file"
    kind = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return f"{path} is {kind}, not a regular file; refusing to read it (a reader would block or never end)"


def _os_reason(path: str, exc: OSError) -> str:
    return link_reason(path, exc) or f"cannot read it: {exc.strerror or exc}"


def not_readable_reason(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be read as a regular file (missing, a link loop, a dangling link, a FIFO,
    a socket, a device, a folder), or None when it is a regular file."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        return _os_reason(p, exc)
    return _kind_reason(p, st.st_mode)


def regular_or_absent(path: str | os.PathLike[str]) -> str | None:
    """None when ``path`` is a regular file or does not exist (and is not a dangling link); else why
    it cannot be used as a file (a link loop, a dangling link, a FIFO, socket, device or folder)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ENOENT and not os.path.islink(p):
            return None
        return link_reason(p, exc) or f"cannot use {p}: {exc.strerror or exc}"
    return _kind_reason(p, st.st_mode)


def too_large_reason(name: str, size: int, limit: int, what: str, setting: str = "") -> str:
    """The one message of a size limit: ``name`` is ``size`` bytes, over ``limit`` for a ``what`` file
    (``setting``: the option that sets the limit, named in parentheses when given)."""
    where = f" ({setting})" if setting else ""
    return f"{name} is {size} bytes, over the limit of {limit} bytes for a {what} file{where}"


class _Refusal:
    """How one read refuses: the caller's error type, its title and the problem's field."""

    def __init__(self, path: str, what: str, error: type[ValidationError], field: str, setting: str) -> None:
        self.path, self.what, self.error, self.field, self.setting = path, what, error, field, setting

    def __call__(self, reason: str) -> ValidationError:
        return self.error(f"{self.what} {self.path} refused", [Problem(0, self.field, reason)])

    def too_large(self, size: int, limit: int) -> ValidationError:
        return self(too_large_reason(self.path, size, limit, self.what, self.setting))


def check_regular_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int,
    what: str,
    error: type[ValidationError] = ValidationError,
    field: str = "file",
    setting: str = "",
) -> None:
    """The checks of :func:`read_regular_file` without the read (for a reader that opens the path
    itself): refused the same way when ``path`` is not a regular file or is over ``max_bytes``."""
    p = os.fspath(path)
    refuse = _Refusal(p, what, error, field, setting)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise refuse(_os_reason(p, exc)) from None
    _refuse_unless_regular(st, max_bytes, refuse)


def _refuse_unless_regular(st: os.stat_result, max_bytes: int, refuse: _Refusal) -> None:
    """Refuse a path whose status is not a regular file's, or whose size is over ``max_bytes``."""
    why = _kind_reason(refuse.path, st.st_mode)
    if why is not None:
        raise refuse(why)
    if st.st_size > max_bytes:
        raise refuse.too_large(st.st_size, max_bytes)


def read_regular_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int,
    what: str,
    error: type[ValidationError] = ValidationError,
    field: str = "file",
    setting: str = "",
) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Refused with ``error(f"{what} {path} refused", [Problem(0, field, reason)])`` (the reason names
    the path) for anything but a regular file, a file over the limit (:func:`too_large_reason`, with
    ``setting``), or a read error."""
    p = os.fspath(path)
    refuse = _Refusal(p, what, error, field, setting)
    why = not_readable_reason(p)
    if why is not None:
        raise refuse(why)
    try:
        # non-blocking: a FIFO put in place after the stat opens at once instead of waiting for a writer
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise refuse(_os_reason(p, exc)) from None
    try:
        data = _read_open(fd, max_bytes, refuse)
    except OSError as exc:
        raise refuse(f"cannot read it: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # grew while read
        raise refuse.too_large(len(data), max_bytes)
    return data


def read_settings_text(path: str | os.PathLike[str], *, max_bytes: int, what: str) -> str:
    """The UTF-8 text (a byte-order mark allowed) of a small settings file (a configuration, a search
    space): :func:`read_regular_file`, every refusal a :class:`ConfigError` "cannot read {what} file
    PATH: reason"."""
    name = os.fspath(path)
    try:
        data = read_regular_file(path, max_bytes=max_bytes, what=what)
    except ValidationError as exc:
        raise ConfigError(f"cannot read {what} file {name}: {exc.problems[0].message}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {what} file {name}: not UTF-8 text (offset {exc.start})") from None


def _read_open(fd: int, max_bytes: int, refuse: _Refusal) -> bytes:
    """Up to ``max_bytes + 1`` bytes of the open file ``fd``, once it is known to be a regular file
    within the limit."""
    _refuse_unless_regular(os.fstat(fd), max_bytes, refuse)
    os.set_blocking(fd, True)
    parts: list[bytes] = []
    got = 0
    while got <= max_bytes:
        part = os.read(fd, min(_CHUNK, max_bytes + 1 - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


# ---- writing -------------------------------------------------------------------------------------
#: a file the user writes (an export, a report, a configuration): readable by others, as files usually are
SHARED_FILE_MODE = 0o644
#: a cache file (embeddings, neighbour tables, models built from the user's texts): the owner's only
PRIVATE_FILE_MODE = 0o600


@contextlib.contextmanager
def replaced_atomically(
    path: str | os.PathLike[str], suffix: str = ".tmp", *, parents: bool = False, mode: int = SHARED_FILE_MODE
) -> Iterator[str]:
    """A temporary file path beside ``path`` for the block to fill (by name: a library that writes to
    a path); when the block ends the file is flushed to disk, given ``mode`` and renamed over ``path``;
    when the block raises it is removed. ``parents``: create ``path``'s missing folders first."""
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    if parents:
        os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(
    path: str | os.PathLike[str],
    content: bytes | Callable[[BinaryIO], object],
    *,
    parents: bool = False,
    mode: int = SHARED_FILE_MODE,
) -> None:
    """Write ``content`` to ``path`` whole or not at all (:func:`replaced_atomically`): the bytes, or
    what ``content(fh)`` writes to the open temporary file."""
    with replaced_atomically(path, parents=parents, mode=mode) as tmp, open(tmp, "wb") as fh:
        if isinstance(content, (bytes, bytearray, memoryview)):
            fh.write(content)
        else:
            content(fh)


def cache_file_present(path: str | os.PathLike[str]) -> bool:
    """Is there a cache file at ``path`` to try? A path that cannot be reached (a folder without permission,
    a broken link) counts as absent: the thing is rebuilt, and :func:`write_cache_file` says why it could not
    be kept."""
    return os.path.exists(path)  # False, never an error, for what cannot be stat'ed


def write_cache_file(path: str | os.PathLike[str], content: bytes | Callable[[BinaryIO], object], what: str) -> bool:
    """Write a cache file (what can be rebuilt: a neighbour table, a graph, token counts, a scan's checked
    pairs) as :func:`write_atomic` does, private to the user, its folders made; True when written. A failure
    is a ``RuntimeWarning`` naming ``what`` and the path, and False: the caller keeps what it built."""
    try:
        write_atomic(path, content, parents=True, mode=PRIVATE_FILE_MODE)
    except OSError as exc:
        warnings.warn(f"could not persist the {what} to {os.fspath(path)}: {exc}", RuntimeWarning, stacklevel=3)
        return False
    return True


def write_text_atomic(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (a report, a configuration); returns the path."""
    p = os.fspath(path)
    write_atomic(p, text.encode("utf-8"))
    return p
