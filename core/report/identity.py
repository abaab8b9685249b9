"""People, addresses and accounts by their position, not by a list of names.

The folder after a home-like root (`/home`, `/Users`, `C:\\Users`, `/scratch`, `…/users`,
`/gpfs/…/home`, `/data/<user>`, torch's `torchinductor_<user>`), UUIDs (GPU and MIG ones
apart), GPU serial lines, cloud accounts (AWS ARNs and account ids, Azure resource groups, GCP
projects), Kubernetes namespaces and pods, the owner in W&B, Hugging Face and bucket URLs and
users' subdomains of hosting sites; hosts in `core.report.hosts`, addresses in
`core.report.addresses`. RE2 patterns; every check after a match reads a bounded window.
"""

from __future__ import annotations

from collections.abc import Iterator

from core.report import addresses, hosts
from core.report import patterns as pat
from core.report.hit import RANK_IDENTITY, Hit, glued
from core.report.rules import compile_re2

_SEP = r"(?:/|\\{1,2})"
_NAME = r"([A-Za-z0-9._$@-]{1,64})"
_ROOTS = r"(?:home|homes|users|user|u|scratch|people|staff|students)"
# /home/users/<name>: a second root word is skipped, the person is the folder after it.
HOME_PATH = compile_re2(
    r"(?i)" + _SEP + _ROOTS + _SEP + r"(?:(?:users|user|home|homes)" + _SEP + r")?" + _NAME
)
DATA_ROOT = compile_re2(r"(?:^|[\s\"'=:(,\[])/data/" + _NAME)
INDUCTOR = compile_re2(r"\btorchinductor_" + _NAME)
HF_CACHE = compile_re2(r"\b(?:models|datasets|spaces)--([A-Za-z0-9_.-]{1,96}?)--")
UUID = compile_re2(
    r"(?i)((?:MIG-|GPU-)*)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
)
SERIAL = compile_re2(
    r"(?i)\b(?:board[ _]?)?serial(?:[ _]?(?:number|no|num))?[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"([A-Za-z0-9][A-Za-z0-9-]{3,63})"
)
ARN = compile_re2(
    r"\barn:aws[a-z-]{0,12}:[a-z0-9-]{0,32}:[a-z0-9-]{0,32}:(\d{12})?:([A-Za-z0-9_/.:+=@-]{1,256})"
)
AWS_ACCOUNT = compile_re2(
    r"(?i)(?:\baccount(?:[ _-]?id)?[\"']?[ \t]*[:=][ \t]*[\"']?|\b)(\d{12})"
    r"(?:\.dkr\.ecr\.|[\"'\s,]|$)"
)
AZURE_GROUP = compile_re2(r"(?i)/resourceGroups/([A-Za-z0-9._()-]{1,90})")
GCP_PROJECT = compile_re2(
    r"(?i)(?:\bprojects/|--project[= ]|\bgcr\.io/|-docker\.pkg\.dev/)([a-z][a-z0-9-]{4,28}[a-z0-9])"
)
K8S = compile_re2(
    r"(?i)\b(?:namespaces?|pods?)(?:/|[ \t]*[:=][ \t]*[\"']?|[ \t]+[\"'])"
    r"([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?)"
)
KUBECTL_NS = compile_re2(
    r"\bkubectl\b[^\n]{0,200}?[ \t](?:-n|--namespace)[ \t=]+([a-z0-9][a-z0-9.-]{0,252})"
)
URL_OWNER = compile_re2(
    r"(?i)\b(?:wandb\.ai|(?:huggingface|hf)\.co(?:/(?:datasets|spaces|api/models|api/datasets))?)"
    r"/([A-Za-z0-9_.-]{1,96})(?:/|\b)"
)
BUCKET = compile_re2(
    r"(?i)\b(?:s3a?|gs|az|abfss?|wasbs?)://([a-z0-9][a-z0-9._-]{1,62})(?:@([a-z0-9]{3,24})\.)?|"
    r"\bs3(?:[.-][a-z0-9-]{1,30})?\.amazonaws\.com/([a-z0-9][a-z0-9._-]{1,62})"
)
USER_SUBDOMAIN = compile_re2(
    r"(?i)\b([a-z0-9](?:[a-z0-9.-]{0,120}[a-z0-9])?)\.(?:"
    + "|".join(site.replace(".", r"\.") for site in sorted(pat.USER_SUBDOMAIN_SITES))
    + r")\b"
)
_HF_PAGES = frozenset(
    {
        "docs",
        "blog",
        "api",
        "models",
        "datasets",
        "spaces",
        "settings",
        "login",
        "join",
        "pricing",
        "organizations",
        "papers",
        "learn",
        "tasks",
        "new",
        "authors",
        "site",
    }
)
_USER_WORDS = ("user", "users", "home", "homes")


def _user(start: int, end: int, text: str) -> Hit:
    return Hit(start, end, "user-name", text[start:end], rank=RANK_IDENTITY)


def people(text: str) -> Iterator[Hit]:
    """The folder after a home-like root, torch's per-user cache folder, HF cache owners."""
    for regex in (HOME_PATH, DATA_ROOT, INDUCTOR):
        for m in regex.finditer(text):
            name = m.group(1)
            if name.lower() in pat.COMMON_USERS or name.startswith(("$", "@", ".")):
                continue
            if name.lower() in _USER_WORDS:
                continue  # /home/users/<name>: the next match is the person
            yield _user(m.start(1), m.end(1), text)
    for m in HF_CACHE.finditer(text):
        yield Hit(m.start(1), m.end(1), "url-owner", m.group(1), rank=RANK_IDENTITY)


def devices(text: str) -> Iterator[Hit]:
    """UUIDs (GPU and MIG ones labelled as such) and GPU serial-number lines."""
    for m in UUID.finditer(text):
        if glued(text, m.start(), m.end()) and not m.group(1):
            continue
        kind = "gpu-uuid" if m.group(1) else "uuid"
        yield Hit(m.start(), m.end(), kind, m.group(), rank=RANK_IDENTITY)
    for m in SERIAL.finditer(text):
        value = m.group(1)
        if value.lower() not in ("n/a", "none", "null", "unknown", "not") and any(
            c.isdigit() for c in value
        ):
            yield Hit(m.start(1), m.end(1), "gpu-serial", value, rank=RANK_IDENTITY)


def accounts(text: str) -> Iterator[Hit]:
    """Cloud accounts and resources: AWS ARNs and account ids, Azure groups, GCP projects."""
    for m in ARN.finditer(text):
        if m.start(1) >= 0:
            yield Hit(m.start(1), m.end(1), "cloud-account", m.group(1), rank=RANK_IDENTITY)
        yield Hit(m.start(2), m.end(2), "cloud-resource", m.group(2), rank=RANK_IDENTITY)
    for m in AWS_ACCOUNT.finditer(text):
        if m.group().lower().startswith("account") or ".dkr.ecr." in m.group():
            yield Hit(m.start(1), m.end(1), "cloud-account", m.group(1), rank=RANK_IDENTITY)
    for m in AZURE_GROUP.finditer(text):
        yield Hit(m.start(1), m.end(1), "cloud-resource", m.group(1), rank=RANK_IDENTITY)
    for m in GCP_PROJECT.finditer(text):
        yield Hit(m.start(1), m.end(1), "cloud-account", m.group(1), rank=RANK_IDENTITY)


def owners(text: str) -> Iterator[Hit]:
    """Kubernetes names, owners in W&B / HF / bucket URLs, users' subdomains of hosting sites."""
    for regex in (K8S, KUBECTL_NS):
        for m in regex.finditer(text):
            name = m.group(1)
            if name not in ("default", "kube-system") and len(name) >= 2:
                yield Hit(m.start(1), m.end(1), "k8s-name", name, rank=RANK_IDENTITY)
    for m in URL_OWNER.finditer(text):
        owner = m.group(1)
        if owner.lower() not in _HF_PAGES and not owner.startswith("["):
            yield Hit(m.start(1), m.end(1), "url-owner", owner, rank=RANK_IDENTITY)
    for m in USER_SUBDOMAIN.finditer(text):
        before = text[max(0, m.start() - 2) : m.start()]
        in_path = before[-1:] == "/" and before != "//"  # github.com/org/org.github.io: a repo
        if not glued(text, m.start(), m.end()) and before[-1:] != "." and not in_path:
            yield Hit(m.start(1), m.end(1), "url-owner", m.group(1), rank=RANK_IDENTITY)
    for m in BUCKET.finditer(text):
        for group in (1, 2, 3):
            if m.start(group) >= 0:
                yield Hit(
                    m.start(group), m.end(group), "url-owner", m.group(group), rank=RANK_IDENTITY
                )


def find(text: str, key: str | None = None) -> Iterator[Hit]:
    """Every identity hit in `text` (`key`: the field it sits under, for version fields)."""
    yield from people(text)
    yield from hosts.find(text)
    yield from addresses.find(text, key)
    yield from devices(text)
    yield from accounts(text)
    yield from owners(text)
