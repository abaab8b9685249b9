"""What NCCL chose, read from its `NCCL_DEBUG=INFO` lines: version, transports, network, NVLS.

NCCL prints one `Channel CC/S : A[a] -> B[b] via TRANSPORT` line per connection, e.g.
`via P2P/CUMEM/read`, `via P2P/IPC`, `via SHM/direct/direct`, `via NET/IB/0/GDRDMA`,
`via NET/Socket/0`; `Using network IB|Socket`; `NVLS multicast support is (not) available`.
"""

from __future__ import annotations

import re
from collections import Counter

from core.nccl.model import Transport

_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(\S*)")
_CHANNEL = re.compile(r"Channel \d+(?:/\d+)?\s*:\s*\d+\[\w+\]\s*->\s*\d+\[\w+\].*?\bvia (\S+)")
_NETWORK = re.compile(r"Using network (\S+)")
_NVLS = re.compile(r"NVLS multicast support is (not )?available")
_NVLS_USED = re.compile(r"(Connected NVLS|NVLS comm|nvlsSupport 1|NVLS enabled)")
_WARN = re.compile(r"NCCL WARN (.*)")
_COMM = re.compile(r"nRanks (\d+) nNodes (\d+)")


def family(transport: str) -> str:
    """`P2P/CUMEM/read` -> `P2P`, `NET/IB/0/GDRDMA` -> `NET/IB`, `SHM/direct/direct` -> `SHM`."""
    parts = transport.split("/")
    if parts[0] == "NET" and len(parts) > 1:
        return f"NET/{parts[1]}"
    return parts[0]


def parse(log: str) -> Transport:
    """Everything NCCL said about its choices; empty fields where it said nothing."""
    transports: Counter[str] = Counter()
    networks: list[str] = []
    warnings: list[str] = []
    nvls_available: bool | None = None
    nvls_used = False
    version = None
    nodes = None
    for line in log.splitlines():
        if "NCCL" not in line:
            continue
        if (match := _CHANNEL.search(line)) is not None:
            transports[match.group(1)] += 1
        elif version is None and (match := _VERSION.search(line)) is not None:
            version = match.group(1) + match.group(2)
        elif (match := _NETWORK.search(line)) is not None and match.group(1) not in networks:
            networks.append(match.group(1))
        elif (match := _NVLS.search(line)) is not None:
            nvls_available = bool(nvls_available) or match.group(1) is None
        elif (match := _WARN.search(line)) is not None and len(warnings) < 10:
            warnings.append(match.group(1).strip())
        elif (match := _COMM.search(line)) is not None:
            nodes = int(match.group(2))
        if _NVLS_USED.search(line):
            nvls_used = True
    families: Counter[str] = Counter()
    for name, count in transports.items():
        families[family(name)] += count
    return Transport(
        version=version,
        transports=dict(transports.most_common()),
        families=dict(families.most_common()),
        primary=families.most_common(1)[0][0] if families else None,
        networks=networks,
        nvls_available=nvls_available,
        nvls_used=nvls_used,
        nodes=nodes,
        warnings=warnings,
        seen=bool(version or transports),
    )


def describe(info: Transport) -> str:
    """One line: `P2P (P2P/CUMEM/read x48), NVLS not available, NCCL 2.28.9+cuda13.0`."""
    if not info.seen:
        return "not reported (no NCCL_DEBUG=INFO lines in the output)"
    parts = []
    if info.transports:
        detail = ", ".join(f"{name} x{n}" for name, n in info.transports.items())
        parts.append(f"{info.primary} ({detail})")
    else:
        parts.append("no channel lines (connections are made at the first collective)")
    if info.networks:
        parts.append("network " + "/".join(info.networks))
    if info.nvls_used:
        parts.append("NVLS in use")
    elif info.nvls_available is not None:
        parts.append("NVLS " + ("available" if info.nvls_available else "not available"))
    if info.version:
        parts.append(f"NCCL {info.version}")
    return ", ".join(parts)
