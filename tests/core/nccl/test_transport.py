"""The transport NCCL chose, from its NCCL_DEBUG=INFO lines."""

from __future__ import annotations

from core.models import to_builtins
from core.nccl.transport import describe, family, parse

NVLINK_LOG = """\
gpu:41:41 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>
gpu:41:41 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
gpu:41:90 [0] NCCL INFO NET/IB : No device found.
gpu:41:90 [0] NCCL INFO Using network Socket
gpu:41:90 [0] NCCL INFO comm 0x55d5c0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0
gpu:41:90 [0] NCCL INFO NVLS multicast support is not available on dev 0 (NVLS_NCHANNELS 0)
gpu:41:90 [0] NCCL INFO Channel 00/24 : 0 1
gpu:41:90 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu:41:90 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu:42:91 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read
gpu:41:90 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
"""


def test_nvlink_host_reports_p2p_and_the_version() -> None:
    typed = parse(NVLINK_LOG)
    info = to_builtins(typed)
    assert info["version"] == "2.28.9+cuda13.0"
    assert info["transports"] == {"P2P/CUMEM/read": 3}
    assert info["primary"] == "P2P"
    assert info["networks"] == ["Socket"]
    assert info["nvls_available"] is False and not info["nvls_used"]
    assert info["nodes"] == 1
    assert describe(typed) == (
        "P2P (P2P/CUMEM/read x3), network Socket, NVLS not available, NCCL 2.28.9+cuda13.0"
    )


def test_shm_and_network_fallbacks_and_warnings() -> None:
    log = (
        "h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
        "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
        "h:1:2 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA\n"
        "h:1:2 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n"
        "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0\n"
    )
    typed = parse(log)
    info = to_builtins(typed)
    assert info["families"] == {"SHM": 2, "NET/IB": 1}
    assert info["primary"] == "SHM"
    assert info["nodes"] == 2
    assert info["warnings"] == ["Call to ibv_reg_mr failed with error Cannot allocate memory"]
    assert family("NET/Socket/0") == "NET/Socket"


def test_output_without_nccl_lines_says_so() -> None:
    typed = parse("just some torch output\nNCCL_DEBUG not set\n")
    info = to_builtins(typed)
    assert not info["seen"] and info["primary"] is None
    assert describe(typed).startswith("not reported")
