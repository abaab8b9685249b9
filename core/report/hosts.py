"""Machines by their position: anything a log puts where a host goes is a host.

Dotted names ending in a real top-level domain (public sites excepted), NCCL's line prefix,
`[host]:port` and `[host:pid]`, SLURM's node lists and `srun: error: <node>:` lines, `user@host`
and shell prompts, the values of `*HOST*` / `*ADDR*` / `*NODE*` variables and flags, names a
network word or a port gives away, and the server of a UNC path. RE2 patterns; bounded checks.
"""

from __future__ import annotations

from collections.abc import Iterator

from core.report import patterns as pat
from core.report.hit import RANK_IDENTITY, WORD_CHARS, Hit, glued
from core.report.names import TRIVIAL_VALUES, is_host_name
from core.report.rules import compile_re2

_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
FQDN = compile_re2(r"(?i)(?:" + _LABEL + r"\.)+(?:" + pat.HOST_TLDS + r")\b")
NCCL_PREFIX = compile_re2(r"(?m)^\s*([A-Za-z][A-Za-z0-9_-]{0,62}):\d+:\d+ \[\d+\] NCCL")
BRACKET_PORT = compile_re2(r"\[([A-Za-z][A-Za-z0-9_.-]{0,252})\]:\d{2,5}\b")
BRACKET_PID = compile_re2(r"\[([A-Za-z][A-Za-z0-9_.-]{0,252}):\d{1,7}\]")
SLURM_LINE = compile_re2(
    r"(?:(?:srun|slurmstepd|salloc|sattach)(?:\[\d+\])?: error: ([A-Za-z][A-Za-z0-9_.-]{0,62})"
    r": task|Node failure on ([A-Za-z][A-Za-z0-9_.-]{0,62})|\bON ([A-Za-z][A-Za-z0-9_.-]{0,62})"
    r" CANCELLED)"
)
NODE_LIST = compile_re2(
    r"[A-Za-z][A-Za-z0-9_-]{0,62}\[[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*\][A-Za-z0-9_-]{0,62}"
)
USER_AT_HOST = compile_re2(
    r"([A-Za-z_][A-Za-z0-9_.-]{1,31})@([A-Za-z][A-Za-z0-9_-]{1,62}(?:\.[A-Za-z0-9_-]{1,62})*)"
)
HOST_VAR = compile_re2(
    r"(?i)(-{0,2}[A-Za-z0-9_-]{0,60}(?:host|addr|node|server|endpoint|master)[A-Za-z0-9_-]{0,60})"
    r"([\"']?[ \t]*(?:=|:)[ \t]*[\"']?|[ \t]+)"
)
HOST_VALUE = compile_re2(r"[A-Za-z][A-Za-z0-9_.\-\[\],]{0,252}")
PORTED = compile_re2(r"\b([A-Za-z][A-Za-z0-9_-]{0,62}):\d{2,5}\b")
NETWORK_NAMED = compile_re2(
    r"(?i)\b(?:connect(?:ing|ed)?\s+to|via|peer|(?:from|to|on|at)\s+(?:host|node|server)|"
    r"hostname|host|node)[\s\"'=:]+([A-Za-z][A-Za-z0-9_-]{0,62})"
)
UNC = compile_re2(
    r"(?:^|[^\\A-Za-z0-9])\\{2,4}([A-Za-z0-9][A-Za-z0-9_.-]{0,62})\\{1,2}([^\\\s\"'<>|]{1,80})"
    r"\\{1,2}([^\\\s\"'<>|/]{1,64})"
)
SSH_KEY = compile_re2(
    r"\b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com)[ \t]+"
    r"(AAAA[A-Za-z0-9+/]{16,}={0,3})(?:[ \t]+([^\r\n\"']{1,200}))?"
)
_CODE_OWNERS = frozenset({"self", "cls", "model", "torch", "nn", "module", "super", "args", "cfg"})


def is_public(domain: str) -> bool:
    """A public site or one of its subdomains (a user's subdomain of a hosting site is not)."""
    low = domain.lower().rstrip(".")
    if low in pat.USER_SUBDOMAIN_SITES:
        return True
    return any(low == site or low.endswith("." + site) for site in pat.PUBLIC_SITES)


def _hostish(name: str) -> bool:
    """A single label that names a machine: it holds a digit or a hyphen (gpu07, worker-3)."""
    low = name.lower()
    if low in pat.COMMON_HOSTS or len(name) < 2:
        return False
    return any(c.isdigit() for c in name) or "-" in name


def _code(value: str, after: str) -> bool:
    """`self.nodes[i]`, `args.master_addr`: an expression, not a machine."""
    if after in ("(", "["):
        return True
    return "." in value and all(p.isidentifier() and p.isalpha() for p in value.split("."))


def _host(start: int, end: int, text: str) -> Hit:
    return Hit(start, end, "host-name", text[start:end], rank=RANK_IDENTITY)


def fqdns(text: str) -> Iterator[Hit]:
    """Dotted names with a real top-level domain that are not public sites."""
    for m in FQDN.finditer(text):
        start, end = m.span()
        name = m.group()
        before = text[start - 1 : start]
        after = text[end : end + 2]
        if before and (before in WORD_CHARS or before in ".-"):
            continue
        if after[:1] in ("-", "(") or (after[:1] == "." and after[1:2] in WORD_CHARS):
            continue
        if name.split(".", 1)[0].lower() in _CODE_OWNERS:
            continue  # self.net, model.local: attributes, not machines
        if not is_public(name) and name.lower() not in pat.COMMON_HOSTS:
            yield _host(start, end, text)


def positioned(text: str) -> Iterator[Hit]:
    """Hosts a log line's shape gives away: NCCL prefix, [host]:port, srun lines, node lists."""
    for m in NCCL_PREFIX.finditer(text):
        if m.group(1).lower() not in pat.COMMON_HOSTS:
            yield _host(m.start(1), m.end(1), text)
    for regex in (BRACKET_PORT, BRACKET_PID):
        for m in regex.finditer(text):
            if m.group(1).lower() not in pat.COMMON_HOSTS:
                yield _host(m.start(1), m.end(1), text)
    for m in SLURM_LINE.finditer(text):
        group = next(i for i in (1, 2, 3) if m.start(i) >= 0)
        yield _host(m.start(group), m.end(group), text)
    for m in NODE_LIST.finditer(text):
        bracket = m.group().index("[")
        if glued(text, m.start(), m.end()):
            continue
        inside = m.group()[bracket:]
        if "-" in inside or m.group()[:bracket].endswith("-"):
            yield Hit(m.start(), m.end(), "node-list", m.group(), rank=RANK_IDENTITY)


def named(text: str) -> Iterator[Hit]:
    """Single names a port or a network word gives away: gpu-node-3:29500, `connect to w-3`."""
    for m in PORTED.finditer(text):
        name = m.group(1)
        if _hostish(name) and any(c.isdigit() for c in name) and "-" in name:
            yield _host(m.start(1), m.end(1), text)
    for m in NETWORK_NAMED.finditer(text):
        if _hostish(m.group(1)) and not glued(text, m.start(1), m.end(1)):
            yield _host(m.start(1), m.end(1), text)


def user_at_host(text: str) -> Iterator[Hit]:
    """`user@host`, shell prompts (`user@host:~$`), SSH key comments."""
    for m in USER_AT_HOST.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in WORD_CHARS | {".", "-", "+", "%"}:
            continue
        user, host = m.group(1), m.group(2)
        after = text[m.end() : m.end() + 1]
        if after in ("(", "[") or host.lower() == "openssh.com":
            continue
        last = host.rsplit(".", 1)[-1].lower()
        if "." in host and last in pat.HOST_TLDS.split("|"):
            continue  # an e-mail address (the e-mail rule takes it whole)
        if user.lower() not in pat.COMMON_USERS:
            yield Hit(m.start(1), m.end(1), "user-name", user, rank=RANK_IDENTITY)
        if host.lower() not in pat.COMMON_HOSTS and not is_public(host):
            yield _host(m.start(2), m.end(2), text)
    for m in SSH_KEY.finditer(text):
        yield Hit(m.start(1), m.end(1), "ssh-key", m.group(1), rank=RANK_IDENTITY)
        if m.start(2) >= 0 and m.group(2).strip():
            comment = m.group(2).rstrip()
            yield Hit(m.start(2), m.start(2) + len(comment), "user-name", comment)


def host_values(text: str) -> Iterator[Hit]:
    """The value of a `*HOST*` / `*ADDR*` / `*NODE*` variable, key or flag."""
    for m in HOST_VAR.finditer(text):
        name = m.group(1).lstrip("-").replace("-", "_")
        if not is_host_name(name) or (not m.group(2).strip() and not m.group(1).startswith("-")):
            continue  # "host is down": a bare word after a space names nothing
        start = m.end()
        value = HOST_VALUE.match(text[start : start + 256])
        if value is None:
            continue
        raw = value.group().rstrip(".,")
        if len(raw) < 2 or raw.lower() in pat.COMMON_HOSTS or raw.lower() in TRIVIAL_VALUES:
            continue
        if _code(raw, text[start + len(raw) : start + len(raw) + 1]):
            continue
        kind = "node-list" if ("[" in raw or "," in raw) else "host-name"
        yield Hit(start, start + len(raw), kind, raw, rank=RANK_IDENTITY)


def unc(text: str) -> Iterator[Hit]:
    """`\\\\server\\share\\<name>`: the server is a host, the folder under the share a person."""
    for m in UNC.finditer(text):
        yield _host(m.start(1), m.end(1), text)
        yield Hit(m.start(3), m.end(3), "user-name", m.group(3), rank=RANK_IDENTITY)


def find(text: str) -> Iterator[Hit]:
    """Every host hit in `text`."""
    yield from fqdns(text)
    yield from positioned(text)
    yield from named(text)
    yield from user_at_host(text)
    yield from host_values(text)
    yield from unc(text)
