"""Bounded capture of a child's output: lines into a head + tail, or a stream kept whole.

`core.contain.run_contained` reads its child's pipes through these on reader threads.
"""

from __future__ import annotations

import os
import re
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

READ_CHUNK = 1 << 16
MAX_LINE_CHARS = 4000  # a longer line is cut (progress bars redraw with \r on one "line")
HEAD_LINES = 200
TAIL_LINES = 2000
TAIL_BYTES = 512 * 1024

LineCallback = Callable[[float, str], None]


class Lines:
    """Splits a byte stream into lines, keeping a head and a bounded tail."""

    def __init__(self, started: float, on_line: LineCallback | None, until: re.Pattern[str] | None):
        self.started = started
        self.on_line = on_line
        self.until = until
        self.head: list[tuple[float, str]] = []
        self.tail: deque[tuple[float, str]] = deque()
        self.tail_bytes = 0
        self.total = 0
        self.dropped = 0
        self.bytes = 0
        self.marker: tuple[float, str] | None = None
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        if len(self._partial) > MAX_LINE_CHARS * 4:  # an endless line: emit what we have
            lines.append(self._partial)
            self._partial = b""
        for raw in lines:
            self._add(raw)

    def close(self) -> None:
        if self._partial:
            self._add(self._partial)
            self._partial = b""

    def _add(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if "\r" in text:  # progress bars: keep what the terminal would show last
            text = text.rsplit("\r", 1)[-1]
        if len(text) > MAX_LINE_CHARS:
            text = text[: MAX_LINE_CHARS - 1] + "…"
        now = time.monotonic() - self.started
        self.total += 1
        if self.until is not None and self.marker is None and self.until.search(text):
            self.marker = (now, text)
        if len(self.head) < HEAD_LINES:
            self.head.append((now, text))
        else:
            self.tail.append((now, text))
            self.tail_bytes += len(text) + 1
            while len(self.tail) > TAIL_LINES or self.tail_bytes > TAIL_BYTES:
                _t, old = self.tail.popleft()
                self.tail_bytes -= len(old) + 1
                self.dropped += 1
        if self.on_line is not None:
            self.on_line(now, text)


class Stream:
    """Keeps a stream's bytes (its start, or its end with `keep="tail"`), handing each complete
    line to `on_line`."""

    def __init__(
        self, started: float, limit: int, on_line: LineCallback | None, keep: str = "head"
    ) -> None:
        self.started = started
        self.limit = limit
        self.on_line = on_line
        self.keep = keep
        self.data = bytearray()
        self.truncated = False
        self.total = 0
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.keep == "tail":
            self.data += chunk
            if len(self.data) > self.limit:
                del self.data[: len(self.data) - self.limit]
                self.truncated = True
        elif len(self.data) < self.limit:
            room = self.limit - len(self.data)
            self.data += chunk[:room]
            self.truncated = self.truncated or len(chunk) > room
        else:
            self.truncated = True
        if self.on_line is not None:
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            if len(self._partial) > self.limit:  # one endless line: hand over what came
                lines.append(self._partial)
                self._partial = b""
            for raw in lines:
                self._line(raw)

    def close(self) -> None:
        if self.on_line is not None and self._partial:
            self._line(self._partial)
            self._partial = b""

    def _line(self, raw: bytes) -> None:
        assert self.on_line is not None
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        self.on_line(time.monotonic() - self.started, text)

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")


class Sink(Protocol):
    """Where `pump` hands a stream's bytes: `feed` each chunk, `close` at EOF."""

    def feed(self, chunk: bytes) -> None: ...

    def close(self) -> None: ...


def pump(stream: Any, lines: Sink, lock: threading.Lock) -> None:
    """Read a child's output until EOF (never blocks the child): contained runs' `Lines` and
    `Stream`, the wizard worker's log tails.

    Where the pipe can be polled, each read happens once it is readable (so it does not block)
    and inside `lock` together with its `feed`: whoever sees the pipe empty and then takes the
    lock finds every byte already read fed (the worker takes its tails so when a result
    arrives; reading outside the lock lost a step's output, 1 run in a few hundred)."""
    fd = stream.fileno()
    poller = _poller(fd)
    while True:
        if poller is not None:
            try:
                poller.poll()  # readable, or at EOF
            except OSError:
                poller = None
        if poller is not None:
            with lock:
                chunk = _read(fd)
                if chunk:
                    lines.feed(chunk)
        else:  # not pollable: a blocking read must not hold the lock
            chunk = _read(fd)
            if chunk:
                with lock:
                    lines.feed(chunk)
        if not chunk:
            break
    with lock:
        lines.close()


def _poller(fd: int) -> Any:
    """A poll object watching `fd` for input, or None where poll is missing or refuses it."""
    if not hasattr(select, "poll"):
        return None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    except (OSError, ValueError):
        return None
    return poller


def _read(fd: int) -> bytes:
    """One chunk, b'' at EOF or on an error (both end the pump)."""
    try:
        return os.read(fd, READ_CHUNK)
    except OSError:
        return b""
