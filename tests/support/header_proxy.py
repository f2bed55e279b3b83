"""A stand-in for an authenticating reverse proxy in end-to-end tests: a local TCP forwarder that sets one request
header on every request it passes on, the WebSocket handshake included, and drops whatever value the browser sent.

A browser context's ``extra_http_headers`` are not a reliable stand-in: some Chromium builds leave them off the
WebSocket handshake, which is the request whose headers Streamlit exposes as ``st.context.headers``. A real proxy sets
the header on every request it forwards; so does this one. The real nginx path is tested in
tests/e2e/test_e2e_team_triage_proxy.py."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

__all__ = ["header_proxy"]

#: the most bytes of one request head (request line and headers) the forwarder reads
_HEAD_MAX = 64 * 1024


def _rewrite(head: bytes, name: str, value: str | None) -> bytes:
    """The request head with every ``name`` header removed and ``name: value`` added (when value is not None)."""
    lines = head.split(b"\r\n")
    low = name.lower().encode() + b":"
    kept = [lines[0], *(ln for ln in lines[1:] if ln and not ln.lower().startswith(low))]
    if value is not None:
        kept.append(f"{name}: {value}".encode())
    return b"\r\n".join(kept) + b"\r\n\r\n"


def _length(head: bytes) -> int:
    for ln in head.split(b"\r\n")[1:]:
        key, _, val = ln.partition(b":")
        if key.strip().lower() == b"content-length":
            return int(val.strip() or b"0")
    return 0


async def _requests(src: asyncio.StreamReader, dst: asyncio.StreamWriter, name: str, value: str | None) -> None:
    """Pass requests from the browser on, each head rewritten; after an upgrade, the bytes as they come."""
    while True:
        try:
            head = await src.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            break
        dst.write(_rewrite(head[:-4], name, value))
        body = _length(head)
        if body:
            dst.write(await src.readexactly(body))
        await dst.drain()
        if b"\r\nupgrade:" in head.lower():
            await _pipe(src, dst)
            return
    dst.close()


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while chunk := await src.read(65536):
            dst.write(chunk)
            await dst.drain()
    except ConnectionError:
        pass
    finally:
        dst.close()


async def _shutdown(server: asyncio.AbstractServer) -> None:
    """Stop listening, then end every connection still open (so no coroutine is left unfinished)."""
    server.close()
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.contextmanager
def header_proxy(upstream_url: str, name: str, value: str | None) -> Iterator[str]:
    """A forwarder on 127.0.0.1 to ``upstream_url`` that sets ``name: value`` on every request (None: removes the
    header); yields the forwarder's base URL."""
    up = urlsplit(upstream_url)
    host, port = up.hostname or "127.0.0.1", up.port or 80
    loop = asyncio.new_event_loop()
    ready: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port, limit=_HEAD_MAX)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_requests(reader, up_writer, name, value), _pipe(up_reader, writer))

    async def start() -> asyncio.AbstractServer:
        server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=_HEAD_MAX)
        ready.append(server.sockets[0].getsockname()[1])
        return server

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()  # a loop of its own: the caller's thread may run one already (Playwright's sync API)
    server = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=30)
    try:
        yield f"{up.scheme}://127.0.0.1:{ready[0]}"
    finally:
        asyncio.run_coroutine_threadsafe(_shutdown(server), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
