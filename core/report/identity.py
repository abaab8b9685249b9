"""People, addresses and accounts by their position, not by a list of names.

The folder after a home-like root (`/home`, `/Users`, `C:\\Users`, `/scratch`, `…/users`,
`/gpfs/…/home`, `/data/<user>`, torch's `torchinductor_<user>`), IPv4 addresses (not where the
words before say "version"), IPv6, MAC addresses (also Cisco's `00a1.b2c3.d4e5`), e-mail, UUIDs
(GPU and MIG ones apart), GPU serial lines, cloud accounts (AWS ARNs and account ids, Azure
resource groups, GCP projects), Kubernetes namespaces and pods, and the owner in W&B, Hugging
Face and bucket URLs. RE2 patterns; every check after a match reads a bounded window.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from core.report import hosts
from core.report import patterns as pat
from core.report.hit import RANK_IDENTITY, WORD_CHARS, Hit, glued
from core.report.rules import compile_re2

_SEP = r"(?:/|\\{1,2})"
_NAME = r"([A-Za-z0-9._$@-]{1,64})"
HOME_PATH = compile_re2(
    r"(?i)" + _SEP + r"(?:home|homes|users|user|u|scratch|people|staff|students)" + _SEP + _NAME
)
DATA_ROOT = compile_re2(r"(?:^|[\s\"'=:(,\[])/data/" + _NAME)
INDUCTOR = compile_re2(r"\btorchinductor_" + _NAME)
HF_CACHE = compile_re2(r"\b(?:models|datasets|spaces)--([A-Za-z0-9_.-]{1,96}?)--")
IPV4 = compile_re2(
    r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b"
)
IPV6 = compile_re2(r"(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[A-Za-z0-9]{1,16})?")
MAC = compile_re2(
    r"\b(?:(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}|(?:[0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}|"
    r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})\b"
)
EMAIL = compile_re2(r"[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b")
UUID = compile_re2(
    r"(?i)((?:MIG-|GPU-)*)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
)
SERIAL = compile_re2(
    r"(?i)\b(?:board[ _]?)?serial(?:[ _]?(?:number|no|num))?[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"([A-Za-z0-9][A-Za-z0-9-]{3,63})"
)
ARN = compile_re2(
    r"\barn:aws[a-z-]{0,12}:[a-z0-9-]{0,32}:[a-z0-9-]{0,32}:(\d{12})?:([^\s\"'<>,]{1,256})"
)
AWS_ACCOUNT = compile_re2(
    r"(?i)(?:\baccount(?:[ _-]?id)?[\"']?[ \t]*[:=][ \t]*[\"']?|\b)(\d{12})(?:\.dkr\.ecr\.|[\"'\s,]|$)"
)
AZURE_GROUP = compile_re2(r"(?i)/resourceGroups/([^/\s\"'?#]{1,90})")
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


def _word_before(text: str, start: int) -> tuple[str, str]:
    """The word before a match and the separators between them (64 characters at most)."""
    window = text[max(0, start - 64) : start]
    cut = len(window)
    while cut and window[cut - 1] in " \t:=@>~<,([\"'/":
        cut -= 1
    seps = window[cut:]
    begin = cut
    while begin and (window[begin - 1] in WORD_CHARS or window[begin - 1] in ".+-"):
        begin -= 1
    return window[begin:cut], seps


def _hostlike_word(word: str) -> bool:
    """gpu07, dgx-a100-07, ip-10-0-0-1: a name that ends in a machine number."""
    low = word.lower().rstrip(".")
    tail = low.rsplit("-", 1)[-1]
    digits = len(tail) - len(tail.rstrip("0123456789"))
    if not digits:
        return False
    stem = tail[: len(tail) - digits]
    if not any(c.isalpha() for c in low):
        return False  # 917, 3.2: numbers, not names
    return stem not in ("cu", "py", "cp", "sm", "v", "rc", "post", "dev", "b", "a")


def is_address(text: str, start: int, end: int) -> bool:
    """A dotted quad is an address unless what stands before it says it is a version."""
    quad = text[start:end]
    addr = ipaddress.IPv4Address(quad)
    if addr.is_loopback or addr.is_unspecified or quad.startswith("0."):
        return False
    if (
        text[start - 1 : start] == "."
        or text[end : end + 2][:1] == "."
        and text[end + 1 : end + 2].isdigit()
    ):
        return False  # part of a longer dotted number: 1.2.3.4.5
    word, seps = _word_before(text, start)
    if any(op in seps for op in ("==", ">=", "<=", "~=")):
        return False
    low = word.lower().rstrip(".:")
    last = low.replace("-", "_").rsplit("_", 1)[-1]
    if not low or low in pat.NETWORK_WORDS or last in pat.NETWORK_WORDS:
        return True
    if low[:3] in ("eth", "ens", "enp", "eno") or low[:2] in ("ib", "em") or low.startswith("bond"):
        return True  # an interface: eth0 10.1.2.3
    if low in pat.VERSION_WORDS or last in pat.VERSION_WORDS or low.startswith(("nvidia-", "lib")):
        return False
    if low.startswith("declared") or "version" in low:
        return False
    if _hostlike_word(word):
        return True  # gpu07 10.44.5.6 joined rendezvous
    return not (seps.strip() == "" and any(c in word for c in "-_0123456789"))


def addresses(text: str, key: str | None) -> Iterator[Hit]:
    """IPv4 (not versions), IPv6, MAC addresses, e-mail."""
    low_key = (key or "").lower()
    version_field = low_key.endswith("version") or low_key.startswith(("declared", "nvidia-"))
    if not version_field:
        for m in IPV4.finditer(text):
            if is_address(text, m.start(), m.end()):
                yield Hit(m.start(), m.end(), "ipv4", m.group(), rank=RANK_IDENTITY)
                word, seps = _word_before(text, m.start())
                if word and seps.strip(" \t") == "" and _hostlike_word(word):
                    at = m.start() - len(seps) - len(word)
                    yield Hit(at, at + len(word), "host-name", word, rank=RANK_IDENTITY)
    for m in IPV6.finditer(text):
        hit = _ipv6(text, m.start(), m.end())
        if hit is not None:
            yield hit
    for m in MAC.finditer(text):
        mac = m.group()
        if text[m.start() - 1 : m.start()] in (":", "-", ".") or text[m.end() : m.end() + 1] in (
            ":",
            "-",
            ".",
        ):
            continue  # part of a longer run: an IPv6 address, a PCI path, a version
        digits = "".join(c for c in mac if c not in ":-.").lower()
        if digits.strip("0") and digits != "f" * 12:
            yield Hit(m.start(), m.end(), "mac-address", mac, rank=RANK_IDENTITY)
    for m in EMAIL.finditer(text):
        if not m.group().lower().startswith("git@"):
            yield Hit(m.start(), m.end(), "email", m.group(), rank=RANK_IDENTITY)


_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:")


def _ipv6(text: str, start: int, end: int) -> Hit | None:
    """A real IPv6 address from `start` (glued interface names cut away), or None."""
    stop = min(len(text), start + 64)
    while end < stop and text[end] in _IPV6_CHARS:
        end += 1  # the pattern stops at 8 groups; eth0:2001:... holds one more in front
    while end > start and text[end - 1] in ":":
        end -= 1
    for _ in range(3):
        if start >= end:
            return None
        if start and (text[start - 1] in WORD_CHARS or text[start - 1] == "."):
            cut = text.find(":", start, end)
            if cut < 0:
                return None
            start = cut + 1  # eth0:2001:db8::1 -> the address after the interface
            continue
        break
    if end < len(text) and (text[end] in WORD_CHARS or text[end] in ":."):
        return None
    candidate = text[start:end]
    if candidate.count(":") < 2:
        return None
    try:
        addr = ipaddress.IPv6Address(candidate.split("%", 1)[0])
    except ValueError:
        return None
    if addr.is_loopback or addr.is_unspecified:
        return None
    return Hit(start, end, "ipv6", candidate, rank=RANK_IDENTITY)


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
    """Cloud accounts and resources, Kubernetes names, owners in W&B / HF / bucket URLs."""
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
        if not glued(text, m.start(), m.end()) and text[m.start() - 1 : m.start()] != ".":
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
    yield from addresses(text, key)
    yield from devices(text)
    yield from accounts(text)
