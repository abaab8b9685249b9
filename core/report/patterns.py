"""Token-shape rules for redaction: a curated subset of gitleaks' rules plus a few of our own.

Regexes for the GitHub, Hugging Face, OpenAI, Anthropic, AWS, Slack, Google, JWT, private-key,
PyPI, npm and GitLab shapes are adapted from gitleaks (github.com/gitleaks/gitleaks,
config/gitleaks.toml, MIT licence, Copyright (c) 2019 Zachary Rice), rewritten for Python `re`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Characters that may continue a token; a match must not be glued to one of these.
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class TokenRule:
    """One token shape: `kind` names it in counts and labels; `group` is the secret part."""

    kind: str
    regex: re.Pattern[str]
    group: int = 0
    min_entropy: float = 2.5  # rejects placeholders such as hf_xxxxxxxx...


def _rule(kind: str, pattern: str, group: int = 0, min_entropy: float = 2.5) -> TokenRule:
    return TokenRule(kind, re.compile(pattern), group, min_entropy)


TOKEN_RULES: tuple[TokenRule, ...] = (
    _rule("github-fine-grained-pat", _B + r"github_pat_[0-9A-Za-z_]{60,}" + _E),
    _rule("github-pat", _B + r"ghp_[0-9A-Za-z]{36,}" + _E),
    _rule("github-oauth", _B + r"gho_[0-9A-Za-z]{36,}" + _E),
    _rule("github-app-token", _B + r"gh[us]_[0-9A-Za-z]{36,}" + _E),
    _rule("github-refresh-token", _B + r"ghr_[0-9A-Za-z]{36,}" + _E),
    _rule("gitlab-pat", _B + r"glpat-[0-9A-Za-z_-]{20,}" + _E),
    _rule("huggingface-token", _B + r"hf_[A-Za-z0-9]{30,40}" + _E),
    _rule("huggingface-org-token", _B + r"api_org_[A-Za-z0-9]{30,40}" + _E),
    _rule("anthropic-key", _B + r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{32,}"),
    _rule(
        "openai-key",
        _B
        + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})"
        r"|" + _B + r"sk-[A-Za-z0-9]{48}" + _E,
    ),
    _rule("aws-access-key-id", _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}" + _E),
    _rule(
        "aws-secret-key",
        r"(?i)aws[\w.-]{0,20}?(?:secret|sk)[\w.-]{0,20}?[\"']?\s*[:=]+\s*[\"']?"
        r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        group=1,
    ),
    _rule(
        "slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/_-]{20,}"
    ),
    _rule("slack-token", _B + r"xox[abeoprs]-[0-9A-Za-z-]{10,}"),
    _rule("google-api-key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    _rule("jwt", _B + r"ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"),
    _rule("pypi-token", _B + r"pypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,}"),
    _rule("npm-token", _B + r"npm_[0-9A-Za-z]{36}" + _E),
    _rule("stripe-key", _B + r"[sr]k_live_[0-9A-Za-z]{24,}" + _E),
    _rule("databricks-token", _B + r"dapi[0-9a-f]{32}(?:-\d)?" + _E),
    _rule("nvidia-api-key", _B + r"nvapi-[0-9A-Za-z_-]{60,}"),
    _rule("groq-key", _B + r"gsk_[0-9A-Za-z]{52}" + _E),
    _rule("replicate-token", _B + r"r8_[0-9A-Za-z]{37}" + _E),
    _rule("bearer-token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)", group=1),
    # Azure storage connection strings: the account key (base64, ends in ==) and SAS signatures.
    _rule(
        "azure-storage-key",
        r"(?i)(?<![A-Za-z0-9_])(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})",
        group=1,
    ),
    _rule(
        "azure-sas-signature",
        r"(?i)(?<![A-Za-z0-9_])sig=((?:[A-Za-z0-9+/]|%2[BbFf]){16,}(?:=|%3[Dd]){0,2})",
        group=1,
    ),
)

PRIVATE_KEY = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
    r"[\s\S]*?(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\n[ \t]*\n|\Z)"
)

# scheme://user:password@host -> the `user:password` part; a lone long user part is a token.
URL_CREDENTIALS = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]*://(?P<cred>[^/\s:@\"'<>]+(?::[^/\s@\"'<>]*)?)@[\w.-]"
)

# `name = value` / `name: value` / `"name": "value"` where the name says it is a secret.
# Only the name is consumed (the rest is a lookahead) so that `step: db_password = "..."`
# is still seen as an assignment to db_password after `step:` was tried.
ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.])(?<![A-Za-z0-9_.]-)(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,60})(?=[\"']?\s*(?P<op>:=|=>|=|:)\s*"
    r"(?P<q>[\"']?)(?P<value>[^\s\"',;()\[\]{}<>]{4,})(?P=q))"
)

SECRET_NAME_PARTS = frozenset(
    {
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "AUTH",
        "KEY",
        "APIKEY",
        "PRIVATE",
        "COOKIE",
        "SESSION",
        "SIGNATURE",
    }
)
SECRET_NAME_SUFFIXES = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS")
# Environment variables whose names look secret-like but hold ordinary paths or switches.
# A bare `signature` is a KB regex in our own models; AWS_SIGNATURE and the like stay secret.
NOT_SECRET_NAMES = frozenset(
    {"PWD", "OLDPWD", "KEYTIMEOUT", "TOKENIZERS_PARALLELISM", "SIGNATURE", "SIGNATURES"}
)
TRIVIAL_VALUES = frozenset(
    {"", "0", "1", "true", "false", "yes", "no", "on", "off", "none", "null", "nil", "unset"}
)

EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}\b")
IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?!\.\d|\w)"
)
# The lookbehind lets a colon precede the address: NCCL prints `eth0:2001:db8::1394<0>`.
IPV6_CANDIDATE = re.compile(r"(?<![\w.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
MAC = re.compile(
    r"(?<![\w:-])(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}(?![\w:-])"
)
GPU_UUID = re.compile(
    r"\b(?:GPU|MIG)-(?:GPU-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
    r"-[0-9a-fA-F]{12}\b"
)
HOME_PATH = re.compile(
    r"(?P<prefix>/home/|/Users/|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))"
    r"(?P<name>[A-Za-z0-9._-]+)(?=[/\\]|$|[\s\"':;,)\]])"
)

# Words before a dotted quad that say "this is a network address", not a version.
NETWORK_WORDS = re.compile(
    r"(?i)(addr|address|ip|inet|host|server|master|peer|gateway|nameserver|src|dst|remote|"
    r"local|endpoint|bind|listen|socket|interface|eth\d*|ib\d*|ens\d*|from|to|via|at|"
    r"connect\w*|proxy|url|dns|route|node)$"
)
VERSION_WORDS = re.compile(
    r"(?i)(version|cuda|cudnn|driver|nccl|cublas|torch|release|build|lib\w*|nvidia\w*|cu\d+|"
    r"v|ver|rev)$"
)

# User names too common to be personal, which would wreck ordinary words if replaced.
COMMON_USERS = frozenset(
    {"root", "user", "admin", "ubuntu", "runner", "jovyan", "vscode", "ec2-user", "guest", "test"}
)
COMMON_HOSTS = frozenset({"localhost", "localhost.localdomain", "ubuntu", "debian", "host"})

# Host names that are not this machine's (fleet nodes in NCCL / torchrun lines, index servers).
# A dotted name counts only when it ends in a top-level domain that is never a file suffix
# (.py, .pt, .so, .sh, .cu and .md are country domains too; .io, .ai, .int, .info and .app
# are Python attribute names), so model.pt, libcudnn.so.9 and torch.nn.functional survive.
HOST_TLDS = (
    "com|net|org|edu|gov|mil|local|lan|internal|intranet|corp|cluster|localdomain|"
    "co|uk|de|fr|jp|cn|us|ca|au|nl|ch|se|eu|ru|kr|cloud|tech"
)
HOST_FQDN = re.compile(
    r"(?<![\w.-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?i:" + HOST_TLDS + r")"
    r"(?![\w-]|\.\w|\()"
)
# A single-label name given a port (`gpu-node-12345:29500`) or named by a network word
# (`MASTER_ADDR=node017`, `connecting to worker-3`): it must hold a digit or a hyphen, so
# ordinary words after "to" or "host" stay.
HOST_LABEL = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]+)*(?![\w.-])")
HOST_CONTEXT = re.compile(
    r"(?i)(?:\b(?:master_?addr|master-addr|hostname|host|hosts|rdzv_?endpoint|rdzv-endpoint|"
    r"endpoint|peer|server|node|nodes|connect(?:ing|ed)?\s+to|via)|//|@)"
    r"[\s\"'=:]*$"
)
# NCCL's per-line prefix `hostname:pid:tid [rank] NCCL ...`.
NCCL_PREFIX = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9-]{0,62}):\d+:\d+ \[\d+\](?= NCCL)")
# Public services a log or a KB citation names: kept (they identify nobody).
PUBLIC_DOMAINS = frozenset(
    {
        "github.com",
        "githubusercontent.com",
        "github.io",
        "pytorch.org",
        "nvidia.com",
        "python.org",
        "pypi.org",
        "pythonhosted.org",
        "huggingface.co",
        "hf.co",
        "anaconda.org",
        "anaconda.com",
        "conda.io",
        "conda-forge.org",
        "readthedocs.io",
        "readthedocs.org",
        "stackoverflow.com",
        "w3.org",
        "json-schema.org",
        "google.com",
        "googleapis.com",
        "microsoft.com",
        "ubuntu.com",
        "debian.org",
        "kernel.org",
        "gnu.org",
        "docker.com",
        "docker.io",
        "nvcr.io",
        "wandb.ai",
        "mozilla.org",
        "apple.com",
        "gitlab.com",
        "bitbucket.org",
        "sourceforge.net",
        "colab.research.google.com",
    }
)
# Cloud endpoints kept only as themselves: `core.windows.net` is public, but
# `mystore.blob.core.windows.net` names the user's storage account.
CLOUD_SUFFIXES = frozenset({"core.windows.net", "amazonaws.com", "azurecr.io", "cloudapp.net"})
