"""gui/instance.py: a second launch brings the first window forward and exits."""

from __future__ import annotations

import os
import subprocess
import sys

from gui.instance import InstanceServer, notify_running, server_name


def test_nobody_listening_means_no_instance(qapp) -> None:
    assert not notify_running(server_name())


def test_second_launch_activates_the_first(qtbot, qapp, repo_root) -> None:
    server = InstanceServer()
    assert server.listen()
    try:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        with qtbot.wait_signal(server.activated, timeout=20000):
            second = subprocess.run(
                [sys.executable, "-m", "gui"],
                check=False,
                cwd=repo_root,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stdout
    finally:
        server.close()


def test_stale_socket_is_replaced(qapp) -> None:
    first = InstanceServer()
    assert first.listen()
    # A crashed instance leaves its socket file; a new server must still be able to listen.
    second = InstanceServer(first.name)
    assert second.listen()
    second.close()
    first.close()
