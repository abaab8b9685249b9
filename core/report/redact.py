"""Redaction: secrets, identities and GPU identifiers replaced by stable per-report labels."""

from __future__ import annotations

import getpass
import ipaddress
import math
import os
import re
import socket
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.report import patterns as pat

JsonPath = tuple[str | int, ...]

# Lower wins when two candidate spans are equally long.
_PRIORITY = {
    "private-key": 0,
    "env-secret": 2,
    "url-credentials": 2,
    "gpu-uuid": 3,
    "gpu-serial": 3,
    "home-dir": 4,
    "generic-secret": 5,
    "email": 6,
    "ipv4": 7,
    "ipv6": 7,
    "mac-address": 7,
    "user-name": 8,
    "host-name": 8,
    "node-name": 8,
    "remote-host": 9,  # this machine's own name (host-name) wins the same span
}
_TOKEN_PRIORITY = 1
_FIXED_LABELS = {"user-name": "[user]", "host-name": "[host]"}
_LABEL_TEMPLATES = {
    "gpu-serial": "GPU-SERIAL-{n}",
    "ipv4": "[ipv4 #{n}]",
    "ipv6": "[ipv6 #{n}]",
    "email": "[email #{n}]",
    "mac-address": "[mac #{n}]",
    "remote-host": "[host #{n}]",
}
_SECRET_LABEL = re.compile(r"^\[REDACTED [^\]]+\]$")
_VERSION_KEYS = frozenset(
    {"cuda", "cudnn", "driver", "torch", "cuda_max", "arch_list", "compute_capability", "nccl"}
)


@dataclass(frozen=True)
class Redaction:
    """One redacted value: `label` replaced `original` at `path`, chars [start, end) there."""

    id: str
    kind: str
    label: str
    original: str
    path: JsonPath
    start: int
    end: int
    in_key: bool = False

    def to_dict(self, include_original: bool = False) -> dict[str, Any]:
        """JSON form; the original value only when asked for (never in a shared report)."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "path": list(self.path),
            "start": self.start,
            "end": self.end,
        }
        if include_original:
            out["original"] = self.original
        return out


@dataclass(frozen=True)
class Hit:
    """A span of the input text to replace (input coordinates)."""

    start: int
    end: int
    kind: str
    value: str
    name: str = ""  # the variable name for env-secret hits


@dataclass
class Secrets:
    """Values known at report time that must never appear: secret env values, identities, GPUs."""

    env: dict[str, str] = field(default_factory=dict)
    home: str | None = None
    user: str | None = None
    hosts: set[str] = field(default_factory=set)
    gpu_uuids: set[str] = field(default_factory=set)
    gpu_serials: set[str] = field(default_factory=set)
    nodes: list[str] = field(default_factory=list)  # a fleet's nodes: labelled node-01, ...

    @classmethod
    def from_system(cls, environ: Mapping[str, str] | None = None) -> Secrets:
        """Collect this machine's secret-looking env values, home, user name and host name."""
        environ = os.environ if environ is None else environ
        env = {k: v for k, v in environ.items() if is_secret_name(k) and not is_trivial(v)}
        try:
            user: str | None = getpass.getuser()
        except (OSError, KeyError):
            user = None
        hosts = {socket.gethostname()}
        return cls(env=env, home=str(Path.home()), user=user, hosts={h for h in hosts if h})

    def add_from(self, obj: Any) -> None:
        """Learn identifiers a report carries in known fields (uuid, serial, hostname, env vars)."""
        if isinstance(obj, Mapping):
            for key, value in obj.items():
                if isinstance(value, str) and value:
                    self._learn(str(key), value)
                self.add_from(value)
            name, value = obj.get("name"), obj.get("value")
            if isinstance(name, str) and isinstance(value, str):
                self._learn(name, value)
        elif isinstance(obj, list):
            for item in obj:
                self.add_from(item)

    def _learn(self, key: str, value: str) -> None:
        low = key.lower()
        if low in ("uuid", "gpu_uuid"):
            self.gpu_uuids.add(value)
        elif low in ("serial", "serial_number", "board_serial"):
            self.gpu_serials.add(value)
        elif low in ("hostname", "host_name", "node_name"):
            self.hosts.add(value)
        elif low == "fleet_node" and value not in self.nodes:
            self.nodes.append(value)
        elif low in ("user", "username", "user_name"):
            self.user = self.user or value
        elif is_secret_name(key) and not is_trivial(value) and not _SECRET_LABEL.match(value):
            self.env[key] = value


def is_secret_name(name: str) -> bool:
    """Whether an env var / field name says its value is a credential (HF_TOKEN, db_password)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name.upper() in pat.NOT_SECRET_NAMES:
        return False
    parts = [p for p in name.upper().split("_") if p]
    return any(p in pat.SECRET_NAME_PARTS or p.endswith(pat.SECRET_NAME_SUFFIXES) for p in parts)


def is_trivial(value: str) -> bool:
    """Values too short or too common to be a secret (flags, numbers, empty)."""
    v = value.strip()
    return v.lower() in pat.TRIVIAL_VALUES or len(v) < 4 or (v.isdigit() and len(v) < 6)


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _exact_values(s: Secrets) -> dict[str, tuple[str, str]]:
    """value -> (kind, env var name) for everything `s` knows."""
    kinds: dict[str, tuple[str, str]] = {}
    for name, value in s.env.items():
        kinds[value] = ("env-secret", name)
    for uuid in s.gpu_uuids:
        for form in {uuid, _norm_uuid(uuid), f"GPU-{_norm_uuid(uuid)}"}:
            kinds[form] = ("gpu-uuid", "")
    kinds.update({serial: ("gpu-serial", "") for serial in s.gpu_serials if len(serial) >= 4})
    if s.home and len(s.home.rstrip("/\\")) > 2:
        kinds[s.home.rstrip("/\\")] = ("home-dir", "")
    if s.user and len(s.user) >= 2 and s.user.lower() not in pat.COMMON_USERS:
        kinds[s.user] = ("user-name", "")
    for host in s.hosts:
        if len(host) >= 2 and host.lower() not in pat.COMMON_HOSTS:
            kinds[host] = ("host-name", "")
    kinds.update({node: ("node-name", "") for node in s.nodes if len(node) >= 2})
    return kinds


def _norm_uuid(value: str) -> str:
    return re.sub(r"^(?:GPU-|MIG-)+", "", value, flags=re.IGNORECASE).lower()


class Redactor:
    """Finds and replaces sensitive spans; one instance per report keeps labels stable."""

    def __init__(self, secrets: Secrets | None = None) -> None:
        self.secrets = secrets if secrets is not None else Secrets()
        self._labels: dict[tuple[str, str], str] = {}
        self._counters: Counter[str] = Counter()
        self._exact = self._exact_pattern()
        self._label_nodes()

    def _label_nodes(self) -> None:
        """node-01, node-02, ... in the nodes' natural order, whatever order text mentions them."""
        nodes = sorted(
            {n for n in self.secrets.nodes if len(n) >= 2},
            key=lambda n: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", n)],
        )
        width = max(2, len(str(len(nodes))))
        for i, node in enumerate(nodes, 1):
            self._labels[("node-name", node)] = f"node-{i:0{width}d}"

    # -- labels -------------------------------------------------------------------------------
    def label(self, kind: str, value: str, name: str = "") -> str:
        """The stable placeholder for `value` (same value -> same label within this report)."""
        if kind == "env-secret":
            return f"[REDACTED env:{name}]" if name else "[REDACTED env-secret]"
        norm = _norm_uuid(value) if kind == "gpu-uuid" else value
        if kind == "home-dir":
            norm = value.rstrip("/\\")
        key = (kind, norm)
        if key not in self._labels:
            self._labels[key] = self._new_label(kind, value)
        return self._labels[key]

    def _new_label(self, kind: str, value: str) -> str:
        if kind == "home-dir":
            return self._home_label(value)
        if kind in _FIXED_LABELS:
            return _FIXED_LABELS[kind]
        self._counters[kind] += 1
        n = self._counters[kind]
        if kind == "gpu-uuid":
            return f"{'MIG' if value.upper().startswith('MIG-') else 'GPU'}-UUID-{n}"
        template = _LABEL_TEMPLATES.get(kind, "[REDACTED {kind} #{n}]")
        return template.format(kind=kind, n=n)

    def _home_label(self, value: str) -> str:
        home = (self.secrets.home or "").rstrip("/\\")
        if home and value.rstrip("/\\") == home:
            return "~"
        m = pat.HOME_PATH.match(value)
        prefix = m.group("prefix") if m else ""
        self._counters["home-dir"] += 1
        return f"{prefix}[other-user #{self._counters['home-dir']}]"

    # -- scanning -----------------------------------------------------------------------------
    def _exact_pattern(self) -> re.Pattern[str] | None:
        """One regex for every value known at report time (longest first)."""
        self._exact_kinds = _exact_values(self.secrets)
        if not self._exact_kinds:
            return None
        alts = []
        for value in sorted(self._exact_kinds, key=len, reverse=True):
            esc = re.escape(value)
            kind = self._exact_kinds[value][0]
            if kind in ("user-name", "host-name"):  # a whole word: never inside another name
                alts.append(rf"(?<![\w-]){esc}(?![\w-]|\.\w)")
            elif kind == "node-name":  # gpu07.cluster.local's gpu07 too, not gpu070
                alts.append(rf"(?<![\w-]){esc}(?![\w-])")
            elif kind == "home-dir":
                alts.append(rf"{esc}(?![\w.-])")
            else:
                alts.append(esc)
        return re.compile("|".join(alts))

    def scan(self, text: str, key: str | None = None) -> list[Hit]:
        """All non-overlapping spans to redact in `text` (`key` is the field name, if any)."""
        cands: list[tuple[int, Hit]] = []
        add = cands.append
        for m in pat.PRIVATE_KEY.finditer(text):
            add((0, Hit(m.start(), m.end(), "private-key", m.group())))
        if self._exact is not None:
            for m in self._exact.finditer(text):
                kind, name = self._exact_kinds[m.group()]
                add((_PRIORITY[kind], Hit(m.start(), m.end(), kind, m.group(), name)))
        for rule in pat.TOKEN_RULES:
            for m in rule.regex.finditer(text):
                value = m.group(rule.group)
                if entropy(value) >= rule.min_entropy:
                    add(
                        (
                            _TOKEN_PRIORITY,
                            Hit(m.start(rule.group), m.end(rule.group), rule.kind, value),
                        )
                    )
        for m in pat.URL_CREDENTIALS.finditer(text):
            cred = m.group("cred")
            if ":" in cred or (len(cred) >= 16 and entropy(cred) >= 3.0):
                add((2, Hit(m.start("cred"), m.end("cred"), "url-credentials", cred)))
        for m in pat.GPU_UUID.finditer(text):
            add((3, Hit(m.start(), m.end(), "gpu-uuid", m.group())))
        for m in pat.HOME_PATH.finditer(text):
            add((4, Hit(m.start(), m.end(), "home-dir", m.group())))
        cands.extend((5, h) for h in self._assignments(text))
        cands.extend(self._identities(text, key))
        return _resolve(cands)

    def _assignments(self, text: str) -> Iterable[Hit]:
        for m in pat.ASSIGNMENT.finditer(text):
            name, value = m.group("name"), m.group("value")
            bare = name.rsplit(".", 1)[-1].replace("-", "_")
            if not is_secret_name(bare) or is_trivial(value) or _SECRET_LABEL.match(value):
                continue
            url_value = m.group("op") == ":" and "://" in value
            placeholder = entropy(value) < 1.5  # hf_xxxxxxxx, ********
            if value.startswith(("[REDACTED", "~", "$")) or url_value or placeholder:
                continue
            env_style = bare.isupper() and m.group("op") == "="
            quoted = bool(m.group("q"))
            random_enough = entropy(value) >= 3.5 and any(c.isdigit() for c in value)
            if env_style or quoted or random_enough:
                yield Hit(m.start("value"), m.end("value"), "generic-secret", value)

    def _identities(self, text: str, key: str | None) -> Iterable[tuple[int, Hit]]:
        for m in pat.EMAIL.finditer(text):
            in_url = re.search(r"://[^\s/@]*$", text[max(0, m.start() - 300) : m.start()])
            if not in_url and not m.group().lower().startswith("git@"):
                yield 6, Hit(m.start(), m.end(), "email", m.group())
        yield from ((9, h) for h in _remote_hosts(text))
        low = (key or "").lower()
        # version fields hold dotted numbers, never addresses; so do torch's pins
        # ("declared", {"nvidia-cudnn-cu13": "9.19.0.56"}: pip names are lower-case with "-")
        if low.endswith("version") or low in _VERSION_KEYS or _is_version_key(low):
            return
        for m in pat.IPV4.finditer(text):
            if _is_ipv4_address(text, m):
                yield 7, Hit(m.start(), m.end(), "ipv4", m.group())
        for m in pat.IPV6_CANDIDATE.finditer(text):
            if _is_ipv6_address(m.group()):
                yield 7, Hit(m.start(), m.end(), "ipv6", m.group())
        for m in pat.MAC.finditer(text):
            if m.group().replace(m.group(1), "").strip("0") and m.group().lower() != "ff" * 6:
                yield 7, Hit(m.start(), m.end(), "mac-address", m.group())

    # -- replacing ----------------------------------------------------------------------------
    def redact_text(
        self, text: str, key: str | None = None
    ) -> tuple[str, list[tuple[int, int, Hit, str]]]:
        """The redacted text and, per replacement, (start, end) in the OUTPUT, the hit, label."""
        hits = self.scan(text, key)
        out: list[str] = []
        spans: list[tuple[int, int, Hit, str]] = []
        pos = length = 0
        for hit in hits:
            out.append(text[pos : hit.start])
            length += hit.start - pos
            label = self.label(hit.kind, hit.value, hit.name)
            out.append(label)
            spans.append((length, length + len(label), hit, label))
            length += len(label)
            pos = hit.end
        out.append(text[pos:])
        return "".join(out), spans


def _remote_hosts(text: str) -> Iterable[Hit]:
    """Host names of other machines: dotted names with a real top-level domain (public
    services excepted), NCCL line prefixes, and single labels a network word or a port names."""
    for m in pat.HOST_FQDN.finditer(text):
        domain = m.group().lower()
        public = domain in pat.CLOUD_SUFFIXES or any(
            domain == d or domain.endswith("." + d) for d in pat.PUBLIC_DOMAINS
        )
        if not public and domain not in pat.COMMON_HOSTS:
            yield Hit(m.start(), m.end(), "remote-host", m.group())
    for m in pat.NCCL_PREFIX.finditer(text):
        if m.group(1).lower() not in pat.COMMON_HOSTS:
            yield Hit(m.start(1), m.end(1), "remote-host", m.group(1))
    for m in pat.HOST_LABEL.finditer(text):
        name = m.group()
        if "." in name or name.lower() in pat.COMMON_HOSTS:
            continue
        if not (any(c.isdigit() for c in name) or "-" in name):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        named = pat.HOST_CONTEXT.search(text[line_start : m.start()]) is not None
        port = re.match(r":\d{2,5}(?![\d:.])", text[m.end() : m.end() + 7]) is not None
        with_digits = any(c.isdigit() for c in name) and "-" in name
        if named or (port and with_digits):
            yield Hit(m.start(), m.end(), "remote-host", name)


def _is_version_key(low: str) -> bool:
    return low.startswith("declared") or low.startswith("nvidia-")


def _resolve(cands: list[tuple[int, Hit]]) -> list[Hit]:
    """Keep the longest span where candidates overlap (ties: lower priority number wins)."""
    cands.sort(key=lambda c: (-(c[1].end - c[1].start), c[0], c[1].start))
    taken: list[Hit] = []
    for _, hit in cands:
        if hit.end > hit.start and all(hit.end <= t.start or hit.start >= t.end for t in taken):
            taken.append(hit)
    return sorted(taken, key=lambda h: h.start)


def _is_ipv4_address(text: str, m: re.Match[str]) -> bool:
    """A dotted quad is an address unless its context says it is a version (9.19.0.56)."""
    addr = ipaddress.IPv4Address(m.group())
    if addr.is_loopback or addr.is_unspecified or m.group().startswith("0."):
        return False
    line_start = text.rfind("\n", 0, m.start()) + 1
    before = text[line_start : m.start()]
    sep = re.search(r"[\s:=@>~<,(\[\"']*$", before)
    seps = sep.group() if sep else ""
    if any(op in seps for op in ("==", ">=", "<=", "~=")):
        return False
    word_m = re.search(r"[\w.+-]*$", before[: len(before) - len(seps)])
    word = word_m.group() if word_m else ""
    if not word or pat.NETWORK_WORDS.search(word):
        return True
    if pat.VERSION_WORDS.search(word) or _is_version_key(word.lower()):
        return False
    # "name-cu13 9.1.0.5" (a package list) reads as a version; a plain English word does not.
    return not (seps.strip() == "" and any(c in word for c in "-_0123456789"))


def _is_ipv6_address(candidate: str) -> bool:
    if candidate.count(":") < 2 or not any(c.isalnum() for c in candidate):
        return False
    try:
        addr = ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return not (addr.is_loopback or addr.is_unspecified)
