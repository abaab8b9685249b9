"""What a name says about its value: secret (HF_TOKEN, --api-key, "password"), host-like
(MASTER_ADDR, SLURM_JOB_NODELIST), or neither; and which values are too plain to be secret."""

from __future__ import annotations

import re

# A name is split at `_`, `-`, `.`, spaces and lower-to-upper case changes (apiKey -> API KEY).
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
SECRET_PARTS = frozenset(
    {
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PW",
        "PWD",
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
        "SIG",
        "BEARER",
        "JWT",
    }
)
SECRET_SUFFIXES = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS")
# A last part that says the value describes the secret rather than being it: KEY_FILE is a
# path, TOKEN_URL an address, KEY_SIZE a number (gitleaks' generic-api-key allowlist, widened).
DESCRIPTOR_PARTS = frozenset(
    {
        "FILE",
        "PATH",
        "DIR",
        "NAME",
        "URL",
        "URI",
        "ENDPOINT",
        "SIZE",
        "LENGTH",
        "LEN",
        "TYPE",
        "ID",
        "COUNT",
        "NUM",
        "TIMEOUT",
        "MODE",
        "FORMAT",
        "ALGORITHM",
        "VERSION",
        "ENABLED",
        "REQUIRED",
    }
)
# Names that look secret-like but hold ordinary paths or switches; a bare `signature` is a KB
# regex in our own models (AWS_SIGNATURE and the like stay secret).
NOT_SECRET_NAMES = frozenset(
    {"PWD", "OLDPWD", "KEYTIMEOUT", "TOKENIZERS_PARALLELISM", "SIGNATURE", "SIGNATURES"}
)
HOST_NAME_PARTS = ("HOST", "ADDR", "NODE", "SERVER", "ENDPOINT", "MASTER", "NODELIST")
TRIVIAL_VALUES = frozenset(
    {
        "",
        "0",
        "1",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "none",
        "null",
        "nil",
        "unset",
        "undefined",
        "self",
        "cls",
        "lambda",
        "required",
        "optional",
        "redacted",
        "masked",
        "hidden",
        "changeme",
    }
)
_PLACEHOLDER = re.compile(
    r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^}]*\}\}|<[^<>]*>|%[A-Za-z_]+%|"
    r"\[REDACTED[^\]]*\]|(.)\1{3,}|x+|\*+|\.\.\.+|…)$"
)


_REPEAT = re.compile(r"(.)\1{7,}")  # hf_xxxxxxxx..., ********: a placeholder, not a value


def parts(name: str) -> list[str]:
    """The upper-cased words of a name (`--hfToken` -> ["HF", "TOKEN"])."""
    return [p.upper() for p in _PARTS.findall(name[:200])]


def is_secret_name(name: str) -> bool:
    """Whether a variable, flag, key or header name says its value is a credential."""
    bare = name.strip().strip("-\"'").rsplit(".", 1)[-1]
    if not bare or len(bare) > 80 or bare.upper() in NOT_SECRET_NAMES:
        return False
    words = parts(bare)
    if not words or words[-1] in DESCRIPTOR_PARTS:
        return False
    return any(w in SECRET_PARTS or w.endswith(SECRET_SUFFIXES) for w in words)


def is_host_name(name: str) -> bool:
    """Whether a variable name says its value is a machine (MASTER_ADDR, SLURM_NODELIST)."""
    upper = name.upper().replace("-", "_").strip("_")
    if len(upper) > 80 or upper.endswith(("_PORT", "_RANK", "_ID", "_COUNT", "_NUM", "_TYPE")):
        return False
    if "PER_NODE" in upper or upper.startswith(("NPROC", "NNODES", "NUM_", "N_")):
        return False  # --nproc_per_node 8, --nnodes 2: counts, not machines
    return any(p in upper for p in HOST_NAME_PARTS)


def is_trivial(value: str) -> bool:
    """Values too short, too common or too obviously a placeholder to be a secret."""
    v = value.strip().strip("\"'")
    if v.lower() in TRIVIAL_VALUES or len(v) < 4 or (v.isdigit() and len(v) < 6):
        return True
    return _PLACEHOLDER.match(v) is not None or _REPEAT.search(v) is not None
