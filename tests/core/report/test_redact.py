"""Redaction: every kind of secret is removed, diagnostics survive, the redactor is fuzzed.

No token-shaped string is committed: every secret is generated at test time from random
characters with the right prefix and length (the gitleaks way), so pushing this file trips no
secret scanner.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.report import redact
from core.report.redact import Redactor, Secrets, is_secret_name

ALNUM = string.ascii_letters + string.digits
UPPER32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"


def _r(rng: random.Random, n: int, chars: str = ALNUM) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def _jwt(rng: random.Random) -> str:
    def b64(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64({'sub': _r(rng, 12)})}.{_r(rng, 43)}"


def _private_key(rng: random.Random) -> str:
    kind = "RSA " + "PRIVATE" + " KEY"
    body = "\n".join(_r(rng, 64, ALNUM + "+/") for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


# kind -> make(rng) -> (text as it appears in a log, the secret part that must vanish)
Gen = Callable[[random.Random], tuple[str, str]]


def _same(fn: Callable[[random.Random], str]) -> Gen:
    def make(rng: random.Random) -> tuple[str, str]:
        secret = fn(rng)
        return secret, secret

    return make


def _after(prefix: str, fn: Callable[[random.Random], str], suffix: str = "") -> Gen:
    def make(rng: random.Random) -> tuple[str, str]:
        secret = fn(rng)
        return f"{prefix}{secret}{suffix}", secret

    return make


GENERATORS: dict[str, Gen] = {
    "github-pat": _same(lambda r: "gh" + "p_" + _r(r, 36)),
    "github-fine-grained-pat": _same(lambda r: "github" + "_pat_" + _r(r, 22) + "_" + _r(r, 59)),
    "github-oauth": _same(lambda r: "gh" + "o_" + _r(r, 36)),
    "github-app-token": _same(lambda r: "gh" + "s_" + _r(r, 36)),
    "github-refresh-token": _same(lambda r: "gh" + "r_" + _r(r, 36)),
    "gitlab-pat": _same(lambda r: "gl" + "pat-" + _r(r, 20)),
    "huggingface-token": _same(lambda r: "hf" + "_" + _r(r, 34, string.ascii_letters)),
    "huggingface-org-token": _same(lambda r: "api" + "_org_" + _r(r, 34, string.ascii_letters)),
    "anthropic-key": _same(lambda r: "sk-" + "ant-api03-" + _r(r, 93, ALNUM + "_-") + "AA"),
    "openai-key": _same(lambda r: "sk-" + "proj-" + _r(r, 74) + "T3Blbk" + "FJ" + _r(r, 74)),
    "aws-access-key-id": _same(lambda r: "AK" + "IA" + _r(r, 16, UPPER32)),
    "aws-secret-key": _after("aws_secret_access_key = ", lambda r: _r(r, 40, ALNUM + "/+")),
    "slack-token": _same(
        lambda r: (
            "xo" + "xb-" + _r(r, 12, "0123456789") + "-" + _r(r, 12, "0123456789") + "-" + _r(r, 24)
        )
    ),
    "slack-webhook": _same(
        lambda r: (
            "https://hooks.slack.com/services/T" + _r(r, 10) + "/B" + _r(r, 10) + "/" + _r(r, 24)
        )
    ),
    "google-api-key": _same(lambda r: "AI" + "za" + _r(r, 35, ALNUM + "_-")),
    "jwt": _same(_jwt),
    "private-key": _same(_private_key),
    "url-credentials": _after("pip index: https://build:", lambda r: _r(r, 20), "@pypi.org/simple"),
    "bearer-token": _after("Authorization: Bearer ", lambda r: _r(r, 40)),
    "generic-secret": _after('db_password = "', lambda r: _r(r, 24), '"'),
    "pypi-token": _same(lambda r: "pypi-" + "AgEIcHlwaS5vcmc" + _r(r, 70, ALNUM + "_-")),
    "npm-token": _same(lambda r: "np" + "m_" + _r(r, 36)),
    "stripe-key": _same(lambda r: "sk" + "_live_" + _r(r, 24)),
    "databricks-token": _same(lambda r: "da" + "pi" + _r(r, 32, HEX)),
    "nvidia-api-key": _same(lambda r: "nv" + "api-" + _r(r, 64, ALNUM + "_-")),
    "groq-key": _same(lambda r: "gs" + "k_" + _r(r, 52)),
    "replicate-token": _same(lambda r: "r8" + "_" + _r(r, 37)),
    "email": _same(lambda r: _r(r, 8, string.ascii_lowercase) + ".dev@example-corp.org"),
    "ipv4": _after(
        "MASTER_ADDR=", lambda r: f"10.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1, 255)}"
    ),
    "ipv6": _after(
        "listening on ", lambda r: "2001:db8:" + ":".join(_r(r, 4, HEX) for _ in range(6))
    ),
    "mac-address": _after("link/ether ", lambda r: ":".join(_r(r, 2, HEX) for _ in range(6))),
    "gpu-uuid": _same(
        lambda r: (
            f"GPU-{_r(r, 8, HEX)}-{_r(r, 4, HEX)}-{_r(r, 4, HEX)}-{_r(r, 4, HEX)}-{_r(r, 12, HEX)}"
        )
    ),
    "home-dir": _after("/home/", lambda r: _r(r, 7, string.ascii_lowercase), "/venv/bin/python"),
}


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_each_kind_is_redacted_and_counted(kind: str) -> None:
    rng = random.Random(kind)
    text, secret = GENERATORS[kind](rng)
    log = f"Traceback (most recent call last):\n  step: {text}\nRuntimeError: boom\n"
    shared, items = redact({"log": log}, Secrets())
    assert secret not in shared["log"]
    assert [r.kind for r in items] == [kind], shared["log"]
    assert shared["redaction"]["counts"] == {kind: 1}
    assert "RuntimeError: boom" in shared["log"]  # the diagnostic text stays


def test_at_least_25_kinds_are_covered() -> None:
    assert len(GENERATORS) >= 25


@pytest.mark.parametrize(
    "text",
    [
        "torch 2.11.0+cu130 built with CUDA 12.1.105",
        "torch.backends.cudnn.version() = 91900",
        "NVIDIA H200 with CUDA capability sm_90 is not compatible; supported: sm_50 compute_90",
        "Segmentation fault at 0x7f3a2b1c4d50 in libcudnn_engines_precompiled.so.9",
        "CUDA error: an illegal memory access was encountered (700) cudaErrorIllegalAddress",
        "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
        "torch 2.11.0a0+git1a2b3c4 (a source build)",
        "nvidia-cudnn-cu13 9.19.0.56",
        "cuDNN version: 9.19.0.56",
        "libcudnn.so.9.19.0 loaded from /usr/lib/x86_64-linux-gnu",
        'File "/usr/lib/python3.11/site-packages/torch/nn/modules/rnn.py", line 917, in forward',
        "PCI bus id 00000000:01:00.0, started at 12:34:56",
        "c10::Error: std::vector<at::Tensor> mismatch",
        "TOKENIZERS_PARALLELISM=false HF_HUB_DISABLE_TELEMETRY=1",
        "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 CUBLAS_WORKSPACE_CONFIG=:4096:8",
        "    key = self._make_key(x)",
        "token_type_ids = None",
        "driver 580.159.04, NVML 13.580.159.04",
        "torch.Size([64, 128, 3, 3]) dtype=torch.float16",
        "git clone git@github.com:pytorch/pytorch.git",
        "HF_TOKEN=hf_" + "x" * 34,  # a documentation placeholder, not a token
        "bind to 127.0.0.1:29500 or ::1",
    ],
)
def test_diagnostics_survive(text: str) -> None:
    shared, items = redact({"log": text}, Secrets())
    assert shared["log"] == text, [r.kind for r in items]


def test_commit_ids_survive() -> None:
    """A 40-hex git commit (torch.version.git_version) is public and useful: kept."""
    sha = _r(random.Random(1), 40, HEX)
    shared, _ = redact({"environment": {"torch": {"git_version": sha}}}, Secrets())
    assert shared["environment"]["torch"]["git_version"] == sha


def test_secret_env_vars_are_redacted_by_name_and_by_value() -> None:
    rng = random.Random(2)
    wandb = _r(rng, 40, HEX)  # W&B keys have no prefix: only the name gives them away
    cache = "FAKESECRET_" + _r(rng, 12)
    env = {"WANDB_API_KEY": wandb, "CUDA_CACHE_TOKEN": cache, "CUDA_VISIBLE_DEVICES": "0,1"}
    secrets = Secrets.from_system(env)
    report = {
        "environment": {"env_vars": env},
        "log": f"wandb: using key {wandb}\nexport CUDA_CACHE_TOKEN={cache}\n",
    }
    shared, items = redact(report, secrets)
    dumped = json.dumps(shared)
    assert wandb not in dumped and cache not in dumped
    assert shared["environment"]["env_vars"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert shared["environment"]["env_vars"]["WANDB_API_KEY"] == "[REDACTED env:WANDB_API_KEY]"
    assert {r.kind for r in items} == {"env-secret"}


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("NVIDIA_API_KEY", True),
        ("MLFLOW_TRACKING_PASSWORD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("GITHUB_TOKEN", True),
        ("db_passwd", True),
        ("TOKENIZERS_PARALLELISM", False),
        ("CUDA_VISIBLE_DEVICES", False),
        ("PWD", False),
        ("KEYBOARD_LAYOUT", False),
        ("tokens_per_second", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_identities_are_replaced_everywhere() -> None:
    secrets = Secrets(home="/home/alicew", user="alicew", hosts={"gpu-box-17"})
    log = (
        "alicew@gpu-box-17:~$ python train.py\n"
        'File "/home/alicew/proj/train.py", line 3\n'
        "NCCL INFO gpu-box-17:1234:1234 [0] NCCL INFO Bootstrap : Using eth0\n"
    )
    shared, items = redact({"log": log}, secrets)
    out = shared["log"]
    assert "alicew" not in out and "gpu-box-17" not in out
    assert '"~/proj/train.py"' in out
    assert "[user]@[host]:~$" in out
    assert {r.kind for r in items} == {"user-name", "host-name", "home-dir"}


def test_gpu_labels_are_stable_and_distinct() -> None:
    rng = random.Random(3)
    uuids = [GENERATORS["gpu-uuid"](rng)[0] for _ in range(2)]
    serials = [_r(rng, 13, "0123456789") for _ in range(2)]
    env = {
        "gpus": [
            {"index": i, "uuid": u, "serial": s}
            for i, (u, s) in enumerate(zip(uuids, serials, strict=True))
        ]
    }
    log = f"CUDA_VISIBLE_DEVICES={uuids[1]} on board {serials[1]} (uuid {uuids[1][4:]})"
    shared, _ = redact({"environment": env, "log": log}, Secrets())
    gpus = shared["environment"]["gpus"]
    assert [g["uuid"] for g in gpus] == ["GPU-UUID-1", "GPU-UUID-2"]
    assert [g["serial"] for g in gpus] == ["GPU-SERIAL-1", "GPU-SERIAL-2"]
    # the same GPU in free text, with and without the GPU- prefix, gets the same label
    assert (
        shared["log"] == "CUDA_VISIBLE_DEVICES=GPU-UUID-2 on board GPU-SERIAL-2 (uuid GPU-UUID-2)"
    )


def test_redaction_does_not_modify_its_input() -> None:
    text = GENERATORS["github-pat"](random.Random(4))[0]
    report = {"log": text}
    redact(report, Secrets())
    assert report == {"log": text}


# -- fuzzing -------------------------------------------------------------------------------------

_noise = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Co")), max_size=60
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chunks=st.lists(
        st.one_of(_noise, st.tuples(st.sampled_from(sorted(GENERATORS)), st.integers(0, 2**32))),
        max_size=8,
    )
)
def test_fuzz_never_crashes_never_leaks_is_idempotent(chunks: list[object]) -> None:
    parts: list[str] = []
    planted: list[str] = []
    for chunk in chunks:
        if isinstance(chunk, tuple):
            text, secret = GENERATORS[chunk[0]](random.Random(chunk[1]))
            parts.append(f"\n{text}\n")
            planted.append(secret)
        else:
            parts.append(str(chunk))
    log = "".join(parts)
    once, _ = Redactor(Secrets()).redact_text(log)
    for secret in planted:
        assert secret not in once
    twice, spans = Redactor(Secrets()).redact_text(once)
    assert twice == once, [s[2].kind for s in spans]


def test_versions_in_json_text_and_kb_signatures_survive() -> None:
    """A JSON dump of torch's pinned cuDNN and a KB signature field are not secrets or IPs."""
    r = Redactor(Secrets())
    pinned = '{"declared": "9.19.0.56", "nvidia-cudnn-cu13": "9.19.0.56"}'
    assert r.redact_text(pinned)[0] == pinned
    assert not is_secret_name("signature")
    assert is_secret_name("AWS_SIGNATURE")
    address = '{"master_addr": "10.1.2.3"}'
    assert "10.1.2.3" not in r.redact_text(address)[0]


def test_a_number_under_a_secret_name_is_redacted_too() -> None:
    """Found by fuzzing: `"TOKEN": 1.34e+154` stayed (only strings were redacted)."""
    shared, items = redact({"config": {"API_TOKEN": 84731950266, "max_tokens": 512}}, Secrets())
    assert shared["config"] == {"API_TOKEN": "[REDACTED env:API_TOKEN]", "max_tokens": 512}
    assert [r.kind for r in items] == ["env-secret"]
