"""Single instance: a second launch asks the first to come to the front, then exits."""

from __future__ import annotations

import os
import sys
import tempfile
import zlib
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from core.paths import user_data_dir

if TYPE_CHECKING:  # QtNetwork loads only when a socket is needed, after the window is up
    from PySide6.QtNetwork import QLocalSocket

_CONNECT_MS = 500


def server_name() -> str:
    """A per-user, per-data-directory socket name (tests with private data dirs never collide)."""
    # crc32 and the uid rather than hashlib and getpass: both cost milliseconds at start-up.
    digest = f"{zlib.crc32(str(user_data_dir()).encode()):08x}"
    return f"cuda-clinic-{_user()}-{digest}"


def _user() -> str:
    if hasattr(os, "getuid"):
        return str(os.getuid())
    import getpass

    return getpass.getuser()


def may_be_running(name: str | None = None) -> bool:
    """Cheap pre-check without QtNetwork: on Unix a listening instance has a socket file in
    the temporary directory (where QLocalServer puts relative names)."""
    if sys.platform == "win32":
        return True  # named pipes leave no file to look at
    return os.path.exists(os.path.join(tempfile.gettempdir(), name or server_name()))


def notify_running(name: str | None = None) -> bool:
    """If an instance is listening, ask it to show itself and return True."""
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(_CONNECT_MS):
        return False
    socket.write(b"activate\n")
    socket.waitForBytesWritten(_CONNECT_MS)
    socket.disconnectFromServer()
    if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        socket.waitForDisconnected(_CONNECT_MS)
    return True


class InstanceServer(QObject):
    """Listens for later launches and emits `activated` when one arrives."""

    activated = Signal()

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        from PySide6.QtNetwork import QLocalServer

        self.name = name or server_name()
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)
        self._sockets: list[QLocalSocket] = []

    def listen(self) -> bool:
        """Start listening; a stale socket left by a crashed instance is removed first."""
        from PySide6.QtNetwork import QAbstractSocket, QLocalServer

        if self._server.listen(self.name):
            return True
        if self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            QLocalServer.removeServer(self.name)
            return self._server.listen(self.name)
        return False

    def close(self) -> None:
        """Stop listening and drop connections still open."""
        self._server.close()
        for socket in list(self._sockets):
            socket.readyRead.disconnect()
            socket.abort()
        self._sockets.clear()

    def _on_new_connection(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._sockets.append(socket)
            socket.readyRead.connect(self._on_ready_read)
            socket.disconnected.connect(self._on_disconnected)
            self._on_ready_read()

    def _on_ready_read(self) -> None:
        for socket in self._sockets:
            if socket.bytesAvailable() and b"activate" in bytes(socket.readAll().data()):
                self.activated.emit()

    def _on_disconnected(self) -> None:
        for socket in [s for s in self._sockets if s.state() != s.LocalSocketState.ConnectedState]:
            self._sockets.remove(socket)
            socket.deleteLater()
