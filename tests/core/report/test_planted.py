"""A pasted log with planted values of many kinds, exported by the real CLI as JSON, Markdown
and HTML: every planted value is gone from every format, and the diagnostics survive.

Secrets are generated at test time (see test_redact), so nothing token-shaped is committed.
"""

from __future__ import annotations

import html
import json
import os
import random
import string
import subprocess
import sys
from typing import Any

import pytest

from .test_redact import GENERATORS, HEX, _r

LOWER = string.ascii_lowercase
CLI = (sys.executable, "-m", "core", "report", "--quick")


def _extra(rng: random.Random) -> dict[str, tuple[str, str]]:
    """Kinds beyond the token generators: the three that leaked, and more identities."""
    key = _r(rng, 86, string.ascii_letters + string.digits + "+/") + "=="
    sig = _r(rng, 43, string.ascii_letters + string.digits) + "%3D"
    node = f"gpu-node-{rng.randrange(10000, 99999)}"
    fqdn = f"{node}.{_r(rng, 6, LOWER)}.example.com"
    mac_user, win_user = _r(rng, 8, LOWER), _r(rng, 8, LOWER)
    short = f"{_r(rng, 5, LOWER)}-{rng.randrange(10, 99)}"
    v6 = f"2001:db8:{_r(rng, 4, HEX)}:{_r(rng, 4, HEX)}::{_r(rng, 4, HEX)}"
    link = f"fe80::{_r(rng, 4, HEX)}:{_r(rng, 4, HEX)}"
    return {
        "azure-storage-key": (
            "AZURE_STORAGE_CONNECTION_STRING: DefaultEndpointsProtocol=https;"
            f"AccountName={_r(rng, 10, LOWER)};AccountKey={key};EndpointSuffix=core.windows.net",
            key,
        ),
        "azure-sas-signature": (
            f"blob url ?sv=2022-11-02&ss=b&srt=co&sp=r&se=2030-01-01&sig={sig}",
            sig[:-3],
        ),
        "remote-host-fqdn": (f"[rank0]: connecting to {fqdn}:29500", fqdn),
        "remote-host-short": (f"[rank1]: connecting to {short}:29500", short),
        "remote-host-nccl": (f"{node}:4242:4242 [0] NCCL INFO Bootstrap : Using eth0", node),
        "remote-host-master": (f"MASTER_ADDR=worker{rng.randrange(100, 999)}", "worker"),
        "ipv6-compressed": (f"NCCL INFO NET/Socket : Using [0]eth0:{v6}<0>", v6),
        "ipv6-link-local": (f"inet6 {link}%eth0 scope link", link),
        "home-macos": (f"/Users/{mac_user}/miniconda3/bin/python", mac_user),
        "home-windows": (f"C:/Users/{win_user}/AppData/Local/torch", win_user),
    }


# Things that must survive every format (no HTML-special characters in them).
SURVIVORS = [
    "cuDNN version: 9.19.0.56",
    "nvidia-cudnn-cu13 9.19.0.56",
    "torch 2.11.0+cu130",
    "sm_90",
    "0x7f3a2b1c4d50",
    "libcudnn.so.9",
    "model.pt",
    "torch.nn.functional",
    "site-packages/torch/nn/modules/rnn.py",
    "rnn.py:917",
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    "https://download.pytorch.org/whl/cu130",
    "bind to 127.0.0.1:29500",
    "driver 580.159.04",
    "PCI bus id 00000000:01:00.0",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("planted")
    rng = random.Random(14)
    planted: dict[str, tuple[str, str]] = {k: g(rng) for k, g in sorted(GENERATORS.items())}
    planted.update(_extra(rng))
    lines = [f"step {i}: {text}" for i, (text, _) in enumerate(planted.values())]
    site = f"/home/{_r(rng, 7, LOWER)}/venv/lib/python3.11/site-packages/torch/nn/modules/rnn.py"
    planted["home-site-packages"] = (site, site.split("/")[2])
    lines.append(f'File "{site}", line 917, in forward (rnn.py:917)')
    lines.extend(SURVIVORS)
    log = tmp / "error.txt"
    log.write_text("Traceback (most recent call last):\n" + "\n".join(lines) + "\n")
    out: dict[str, Any] = {"planted": planted}
    for fmt in ("json", "md", "html"):
        path = tmp / f"report.{fmt}"
        result = subprocess.run(
            [*CLI, "--full", "--error", str(log), "-o", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            # a module fixture runs before the autouse private data dir: give one explicitly
            env={**os.environ, "CUDA_CLINIC_DATA_DIR": str(tmp / "data")},
        )
        assert result.returncode == 0, result.stderr
        out[fmt] = path.read_text()
    return out


def test_at_least_35_kinds_are_planted(exported: dict[str, Any]) -> None:
    assert len(exported["planted"]) >= 35


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_every_planted_value_is_gone(exported: dict[str, Any], fmt: str) -> None:
    text = exported[fmt]
    texts = [text, html.unescape(text), json.dumps(text)]
    leaked = {
        kind: secret
        for kind, (_, secret) in exported["planted"].items()
        if any(secret in t for t in texts)
    }
    assert not leaked


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_diagnostics_survive_every_format(exported: dict[str, Any], fmt: str) -> None:
    text = exported[fmt]
    if fmt == "html":
        text = html.unescape(text)
    missing = [s for s in SURVIVORS if s not in text]
    assert not missing


def test_json_export_counts_the_new_kinds(exported: dict[str, Any]) -> None:
    counts = json.loads(exported["json"])["redaction"]["counts"]
    for kind in ("azure-storage-key", "azure-sas-signature", "remote-host", "ipv6"):
        assert counts.get(kind, 0) >= 1, counts
    assert counts["remote-host"] >= 4
