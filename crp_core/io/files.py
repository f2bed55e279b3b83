"""Reading an input file whole, safely (docs/decisions/hardening.md, "Files").

Every file the library reads by path goes through :func:`read_regular_file` (scenarios, suite files,
config TOML, baseline metrics files; the CKF loader has its own, equivalent reader): the path is
stat-ed first and refused, naming it, when it is not a regular file (a FIFO, socket or device would
block a reader forever or never end), a symlink loop, a dangling link, a folder, or larger than the
caller's limit; the file is then opened non-blocking (a FIFO swapped in after the stat cannot block)
and read in chunks up to the limit. :func:`regular_or_absent` is the check of a path that may not
exist yet (the triage database).
"""

from __future__ import annotations

import errno
import os
import stat

from crp_core.errors import Problem, ValidationError

__all__ = ["read_regular_file", "regular_or_absent", "not_readable_reason", "link_reason", "MAX_PROBLEMS", "capped"]

#: problems listed per file (scenario, suite file, baseline): the rest are counted in one last problem
#: (with it, a file's problems stay within the 200 a ValidationError prints)
MAX_PROBLEMS = 100

_CHUNK = 1 << 20


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


def not_readable_reason(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be read as a regular file (missing, a link loop, a dangling link, a FIFO,
    a socket, a device, a folder), or None when it is a regular file."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        return link_reason(p, exc) or f"cannot read it: {exc.strerror or exc}"
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


def read_regular_file(
    path: str | os.PathLike[str], *, max_bytes: int, what: str, error: type[ValidationError] = ValidationError
) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Refused with ``error(f"{what} {path} refused", [Problem(0, "file", reason)])`` (the reason names
    the path) for anything but a regular file, a file over the limit, or a read error."""
    p = os.fspath(path)

    def refuse(reason: str) -> ValidationError:
        return error(f"{what} {p} refused", [Problem(0, "file", reason)])

    why = not_readable_reason(p)
    if why is not None:
        raise refuse(why)
    try:
        # non-blocking: a FIFO put in place after the stat opens at once instead of waiting for a writer
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise refuse(link_reason(p, exc) or f"cannot read it: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        why = _kind_reason(p, st.st_mode)
        if why is not None:
            raise refuse(why)
        if st.st_size > max_bytes:
            raise refuse(_too_large(p, st.st_size, max_bytes, what))
        os.set_blocking(fd, True)
        parts: list[bytes] = []
        got = 0
        while got <= max_bytes:
            part = os.read(fd, min(_CHUNK, max_bytes + 1 - got))
            if not part:
                break
            parts.append(part)
            got += len(part)
    except OSError as exc:
        raise refuse(f"cannot read it: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if got > max_bytes:  # grew while read
        raise refuse(_too_large(p, got, max_bytes, what))
    return b"".join(parts)


def _too_large(path: str, size: int, limit: int, what: str) -> str:
    return f"{path} is {size} bytes, over the limit of {limit} bytes for a {what} file"


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
