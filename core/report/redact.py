"""Redaction of one text: every detector's hits, merged, replaced by stable per-report labels.

Detectors, in the order of trust: values known at report time (this machine's secret env
values, home, user and host names, GPU UUIDs and serials, a fleet's nodes), the kept secret
rules (gitleaks' and ours, `core.report.rules`), context rules (`core.report.context`),
identities by position (`core.report.identity`, `core.report.hosts`) and entropy. Where hits
overlap they are merged, so no character any detector flagged survives.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from core.report import context, identity
from core.report import patterns as pat
from core.report.hit import RANK_CONTEXT, RANK_EXACT, RANK_RULE, WORD_CHARS, Hit
from core.report.names import is_host_name, is_secret_name, is_trivial
from core.report.rules import RuleSet, compile_re2, default_rules

JsonPath = tuple[str | int, ...]

SECRET_LABEL = re.compile(r"^\[REDACTED [^\]]+\]$")
# Identities get a short label; everything else is a secret: [REDACTED <kind> #n].
_IDENTITY_LABELS = {
    "user-name": "[user #{n}]",
    "host-name": "[host #{n}]",
    "node-list": "[nodes #{n}]",
    "ipv4": "[ipv4 #{n}]",
    "ipv6": "[ipv6 #{n}]",
    "mac-address": "[mac #{n}]",
    "email": "[email #{n}]",
    "uuid": "[uuid #{n}]",
    "gpu-serial": "GPU-SERIAL-{n}",
    "cloud-account": "[cloud-account #{n}]",
    "cloud-resource": "[cloud-resource #{n}]",
    "k8s-name": "[k8s #{n}]",
    "url-owner": "[owner #{n}]",
    "ssh-key": "[ssh-key #{n}]",
}
IDENTITY_KINDS = frozenset({*_IDENTITY_LABELS, "home-dir", "gpu-uuid", "node-name"})


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

    def to_dict(self, include_original: bool = False) -> dict[str, object]:
        """JSON form; the original value only when asked for (never in a shared report)."""
        out: dict[str, object] = {
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
    others: set[str] = field(default_factory=set)  # other machines the report names (MASTER_ADDR)

    @classmethod
    def from_system(cls, environ: Mapping[str, str] | None = None) -> Secrets:
        """Collect this machine's secret-looking env values, home, user name and host name."""
        environ = os.environ if environ is None else environ
        try:
            user: str | None = getpass.getuser()
        except (OSError, KeyError):
            user = None
        found = cls(home=str(Path.home()), user=user, hosts={socket.gethostname()} - {""})
        for name, value in environ.items():
            found.learn(name, value)
        return found

    def add_from(self, obj: Any) -> None:
        """Learn identifiers a report carries in known fields (uuid, serial, hostname, env vars);
        iterative, so any depth of nesting is fine."""
        stack = [obj]
        while stack:
            item = stack.pop()
            if isinstance(item, Mapping):
                for key, value in item.items():
                    if isinstance(value, str) and value:
                        self.learn(str(key), value)
                    elif isinstance(value, Mapping | list | tuple):
                        stack.append(value)
                name, value = item.get("name"), item.get("value")
                if isinstance(name, str) and isinstance(value, str):
                    self.learn(name, value)
            elif isinstance(item, list | tuple):
                stack.extend(v for v in item if isinstance(v, Mapping | list | tuple))

    def learn(self, key: str, value: str) -> None:
        """Remember `value` if `key` says what it is (a GPU's uuid, a host, a secret)."""
        low = key.lower()
        if low in ("uuid", "gpu_uuid"):
            self.gpu_uuids.add(value)
        elif low in ("serial", "serial_number", "board_serial"):
            self.gpu_serials.add(value)
        elif low in ("hostname", "host_name", "node_name"):
            self.hosts.add(value)
        elif low == "fleet_node" and value not in self.nodes:
            self.nodes.append(value)
        elif low in ("user", "username", "user_name", "login"):
            self.user = self.user or value
        elif is_secret_name(key) and not is_trivial(value) and not SECRET_LABEL.match(value):
            if len(value) <= 4096:
                self.env[key] = value
        elif is_host_name(key) and _hostish_value(value):
            self.others.update(v for v in re.split(r"[\s,]+", value) if _hostish_value(v))


def _hostish_value(value: str) -> bool:
    """A machine name worth replacing everywhere: gpu07, worker-3, a.corp.example.com."""
    v = value.strip()
    if len(v) < 3 or len(v) > 253 or v.lower() in pat.COMMON_HOSTS or not v[0].isalpha():
        return False
    return all(c.isalnum() or c in "-._" for c in v) and any(c.isdigit() or c in "-." for c in v)


def _glued_path(char: str) -> bool:
    return bool(char) and (char in WORD_CHARS or char in ".-")


def _norm_uuid(value: str) -> str:
    return re.sub(r"^(?:GPU-|MIG-)+", "", value, flags=re.IGNORECASE).lower()


class Redactor:
    """Finds and replaces sensitive spans; one instance per report keeps labels stable."""

    def __init__(self, secrets: Secrets | None = None, rules: RuleSet | None = None) -> None:
        self.secrets = secrets if secrets is not None else Secrets()
        self.rules = rules if rules is not None else default_rules()
        self._labels: dict[tuple[str, str], str] = {}
        self._counters: Counter[str] = Counter()
        self._own_hosts = {h.lower() for h in self.secrets.hosts if h}
        self._exact_kinds = self._exact_values()
        self._exact = self._exact_pattern()
        self._label_nodes()

    # -- labels -------------------------------------------------------------------------------
    def _label_nodes(self) -> None:
        """node-01, node-02, ... in the nodes' natural order, whatever order text mentions them."""
        nodes = sorted(
            {n for n in self.secrets.nodes if len(n) >= 2},
            key=lambda n: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", n)],
        )
        width = max(2, len(str(len(nodes))))
        for i, node in enumerate(nodes, 1):
            self._labels[("node-name", node)] = f"node-{i:0{width}d}"

    def label(self, kind: str, value: str, name: str = "") -> str:
        """The stable placeholder for `value` (same value -> same label within this report)."""
        if kind == "env-secret":
            return f"[REDACTED env:{name}]" if name else "[REDACTED env-secret]"
        norm = value
        if kind == "gpu-uuid":
            norm = _norm_uuid(value)
        elif kind in ("host-name", "home-dir", "email"):
            norm = value.lower().rstrip("/\\")
        key = (kind, norm)
        if key not in self._labels:
            self._labels[key] = self._new_label(kind, value)
        return self._labels[key]

    def _new_label(self, kind: str, value: str) -> str:
        if kind == "home-dir":
            return "~"
        if kind == "user-name" and value == self.secrets.user:
            return "[user]"
        if kind == "host-name" and value.lower() in self._own_hosts:
            return "[host]"
        self._counters[kind] += 1
        n = self._counters[kind]
        if kind == "gpu-uuid":
            return f"{'MIG' if value.upper().startswith('MIG-') else 'GPU'}-UUID-{n}"
        return _IDENTITY_LABELS.get(kind, "[REDACTED {kind} #{n}]").format(kind=kind, n=n)

    # -- exact values -------------------------------------------------------------------------
    def _exact_values(self) -> dict[str, tuple[str, str]]:
        """value -> (kind, env var name) for everything the secrets know."""
        s = self.secrets
        kinds: dict[str, tuple[str, str]] = {}
        for name, value in s.env.items():
            kinds[value] = ("env-secret", name)
        for uuid in s.gpu_uuids:
            for form in {uuid, _norm_uuid(uuid), f"GPU-{_norm_uuid(uuid)}"}:
                kinds[form] = ("gpu-uuid", "")
        kinds.update({v: ("gpu-serial", "") for v in s.gpu_serials if len(v) >= 4})
        if s.home and len(s.home.rstrip("/\\")) > 2:
            kinds[s.home.rstrip("/\\")] = ("home-dir", "")
        if s.user and len(s.user) >= 2 and s.user.lower() not in pat.COMMON_USERS:
            kinds.setdefault(s.user, ("user-name", ""))
        for host in s.hosts | s.others:
            if len(host) >= 2 and host.lower() not in pat.COMMON_HOSTS:
                kinds.setdefault(host, ("host-name", ""))
        kinds.update({node: ("node-name", "") for node in s.nodes if len(node) >= 2})
        return kinds

    def _exact_pattern(self) -> Any:
        """One RE2 alternation of every known value, longest first."""
        if not self._exact_kinds:
            return None
        ordered = sorted(self._exact_kinds, key=len, reverse=True)
        return compile_re2("|".join(re2.escape(v) for v in ordered))

    def _exact_hits(self, text: str) -> Iterable[Hit]:
        if self._exact is None:
            return
        for m in self._exact.finditer(text):
            start, end = m.span()
            kind, name = self._exact_kinds[m.group()]
            before, after = text[start - 1 : start], text[end : end + 2]
            if kind in ("user-name", "host-name", "node-name"):
                if (before and (before in WORD_CHARS or before == "-")) or (
                    after[:1] and (after[:1] in WORD_CHARS or after[:1] == "-")
                ):
                    continue  # inside another name: never replace part of a word
                if kind != "node-name" and after[:1] == "." and after[1:2] in WORD_CHARS:
                    continue
            elif kind == "home-dir" and (_glued_path(before) or _glued_path(after[:1])):
                continue  # /home/al inside /home/alice, or /root inside /tmp/x/root
            yield Hit(start, end, kind, m.group(), name, rank=RANK_EXACT)

    def known(self, value: str) -> str | None:
        """The kind of a value known at report time (a fleet node, this host), else None."""
        found = self._exact_kinds.get(value)
        return found[0] if found else None

    # -- scanning -----------------------------------------------------------------------------
    def scan(self, text: str, key: str | None = None) -> list[Hit]:
        """All spans to redact in `text` (`key` is the field name, if any), merged."""
        hits: list[Hit] = list(self._exact_hits(text))
        for f in self.rules.find(text):
            # gitleaks' generic-api-key is a context rule: a specific rule names the value better
            rank = RANK_CONTEXT if f.rule.startswith("generic") else RANK_RULE
            hits.append(Hit(f.start, f.end, f.rule, f.secret, rank=rank))
        hits.extend(context.find(text, key))
        hits.extend(identity.find(text, key))
        return merge(text, hits)

    def redact_text(
        self, text: str, key: str | None = None
    ) -> tuple[str, list[tuple[int, int, Hit, str]]]:
        """The redacted text and, per replacement, (start, end) in the OUTPUT, the hit, label."""
        out: list[str] = []
        spans: list[tuple[int, int, Hit, str]] = []
        pos = length = 0
        for hit in self.scan(text, key):
            out.append(text[pos : hit.start])
            length += hit.start - pos
            label = self.label(hit.kind, hit.value, hit.name)
            out.append(label)
            spans.append((length, length + len(label), hit, label))
            length += len(label)
            pos = hit.end
        out.append(text[pos:])
        return "".join(out), spans


def merge(text: str, hits: list[Hit]) -> list[Hit]:
    """Overlapping hits become one: its span is their union, its kind the longest hit's (ties:
    the more trusted). No character a detector flagged is left out."""
    hits = [h for h in hits if h.end > h.start]
    hits.sort(key=lambda h: (h.start, -h.end))
    merged: list[Hit] = []
    group: list[Hit] = []
    end = -1
    for hit in hits:
        if group and hit.start >= end:
            merged.append(_one(text, group, end))
            group = []
        group.append(hit)
        end = max(end, hit.end) if len(group) > 1 else hit.end
    if group:
        merged.append(_one(text, group, end))
    return merged


def _one(text: str, group: list[Hit], end: int) -> Hit:
    best = min(group, key=lambda h: (-(h.end - h.start), h.rank, h.start))
    start = group[0].start
    if best.start == start and best.end == end:
        return best
    return Hit(start, end, best.kind, text[start:end], best.name, best.rank)
