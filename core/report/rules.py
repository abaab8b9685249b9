"""Secret rules kept as data: gitleaks' rule set (vendored) and ours, in its TOML format.

Each rule is a Go RE2 regular expression, compiled here with google-re2 (linear time in the
input, whatever the input), a list of keywords (a rule runs only on text that holds one of them,
case-insensitively, as gitleaks does), an optional Shannon-entropy floor for the secret, the
capture group that holds the secret, and allowlists (regexes and stop words that mark a finding
as a false positive). The semantics follow gitleaks' `detect/detect.go`: the secret is the rule's
`secretGroup`, else the first non-empty group, else the whole match; a finding whose entropy is
not above the floor, or that an allowlist matches, is dropped.
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from core.errors import UsageError

RULE_FILES = ("gitleaks.toml", "extra.toml")
# The rule files travel with the code that reads them (a copy of `core` redacts anywhere).
RULES_DIR = Path(__file__).resolve().parent / "rulesets"
_LINE_WINDOW = 256  # an allowlist that reads "the line" reads at most this much either side


def options() -> Any:
    """RE2 options for every pattern: a bounded DFA memory (RE2 falls back to its NFA, still
    linear, when a pattern's DFA would need more)."""
    opts = re2.Options()
    opts.max_mem = 32 << 20
    opts.log_errors = False  # a bad pattern raises re2.error; nothing is printed
    return opts


def compile_re2(pattern: str) -> Any:
    """One RE2 pattern with the shared options."""
    return re2.compile(pattern, options())


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (gitleaks' `shannonEntropy`)."""
    if not text:
        return 0.0
    n = len(text)
    # log2(n) - sum(c log2 c) / n: one table lookup per distinct character
    weighted = sum(_C_LOG_C[c] if c < _TABLE else c * math.log2(c) for c in Counter(text).values())
    return math.log2(n) - weighted / n


_TABLE = 1024
_C_LOG_C = [0.0] + [c * math.log2(c) for c in range(1, _TABLE)]


@dataclass(frozen=True)
class Allow:
    """One allowlist: regexes read `target` (secret, match or line); stop words the secret."""

    target: str
    regexes: tuple[Any, ...]
    stopwords: Any  # one RE2 alternation of the lower-cased stop words, or None
    both: bool  # condition AND: every kind of check given must say "allowed"

    def allows(self, secret: str, match: str, line: str) -> bool:
        """Whether this allowlist marks the finding as not a secret."""
        subject = {"match": match, "line": line}.get(self.target, secret)
        checks = []
        if self.regexes:
            checks.append(any(r.search(subject) for r in self.regexes))
        if self.stopwords is not None:
            checks.append(self.stopwords.search(secret.lower()) is not None)
        return bool(checks) and (all(checks) if self.both else any(checks))


@dataclass(frozen=True)
class Rule:
    """One secret rule: its id names the kind of every value it finds."""

    id: str
    regex: Any
    keywords: tuple[str, ...]
    entropy: float
    group: int
    allows: tuple[Allow, ...]


@dataclass(frozen=True)
class Finding:
    """A secret a rule found: [start, end) in the text."""

    start: int
    end: int
    rule: str
    secret: str


class RuleSet:
    """Rules plus the global allowlist; `find(text)` yields every finding."""

    def __init__(self, rules: Sequence[Rule], global_allows: Sequence[Allow]) -> None:
        self.rules = tuple(rules)
        self.global_allows = tuple(global_allows)
        self.ids = frozenset(r.id for r in self.rules)
        self.keywords = sorted({k for r in self.rules for k in r.keywords})
        # One pass finds every keyword present (RE2::Set: gitleaks' Aho-Corasick prefilter).
        self._keyword_set = re2.Set.SearchSet(options())
        for keyword in self.keywords:
            self._keyword_set.Add(re2.escape(keyword))
        self._keyword_set.Compile()

    def find(self, text: str) -> Iterator[Finding]:
        """Every finding of every rule whose keywords occur in `text`."""
        hits = self._keyword_set.Match(text.lower()) or []
        present = {self.keywords[i] for i in hits}
        for rule in self.rules:
            if rule.keywords and present.isdisjoint(rule.keywords):
                continue
            yield from self._run(rule, text)

    def _run(self, rule: Rule, text: str) -> Iterator[Finding]:
        for m in rule.regex.finditer(text):
            start, end = m.span()
            raw = m.group()
            stripped = raw.strip("\n")
            if stripped != raw:  # gitleaks trims newlines the match took at either end
                start += len(raw) - len(raw.lstrip("\n"))
                end = start + len(stripped)
            s_start, s_end = _secret_span(m, rule.group, start, end)
            secret = text[s_start:s_end]
            if not secret or (rule.entropy and entropy(secret) <= rule.entropy):
                continue
            match = text[start:end]
            line = _line(text, start, end) if self._needs_line(rule) else ""
            allows = (*self.global_allows, *rule.allows)
            if any(a.allows(secret, match, line) for a in allows):
                continue
            yield Finding(s_start, s_end, rule.id, secret)

    def _needs_line(self, rule: Rule) -> bool:
        return any(a.target == "line" for a in (*self.global_allows, *rule.allows))


def _secret_span(m: Any, group: int, start: int, end: int) -> tuple[int, int]:
    """gitleaks' choice: `secretGroup`, else the first non-empty group, else the match."""
    count = len(m.groups())
    if count and group and group <= count:
        return (m.start(group), m.end(group)) if m.start(group) >= 0 else (start, end)
    for i in range(1, count + 1):
        if m.start(i) >= 0 and m.end(i) > m.start(i):
            return m.start(i), m.end(i)
    return start, end


def _line(text: str, start: int, end: int) -> str:
    """The line around [start, end), at most _LINE_WINDOW characters either side."""
    lo = text.rfind("\n", max(0, start - _LINE_WINDOW), start) + 1 or max(0, start - _LINE_WINDOW)
    hi = text.find("\n", end, end + _LINE_WINDOW)
    return text[lo : hi if hi >= 0 else min(len(text), end + _LINE_WINDOW)]


def _allow(data: dict[str, Any], where: str) -> Allow | None:
    """An allowlist from TOML; None where it needs a file path or commit (we scan text)."""
    both = str(data.get("condition", "OR")).upper() == "AND"
    if both and (data.get("paths") or data.get("commits")):
        return None  # it can only allow a finding in a matching file: never here
    patterns = [str(p) for p in data.get("regexes", ())]
    for pattern in patterns:
        _compile(pattern, where)  # a bad one is named on its own
    # one alternation per allowlist: one search per finding instead of one per regex
    regexes = (_compile("|".join(f"(?:{p})" for p in patterns), where),) if patterns else ()
    words = [str(w).lower() for w in data.get("stopwords", ())]
    stop = compile_re2("|".join(re2.escape(w) for w in words)) if words else None
    if not regexes and stop is None:
        return None
    return Allow(str(data.get("regexTarget", "secret")), regexes, stop, both)


def _compile(pattern: str, where: str) -> Any:
    try:
        return compile_re2(pattern)
    except re2.error as exc:
        raise UsageError(f"{where}: the regex does not compile in RE2: {exc}") from exc


def load_rules(paths: Sequence[Path]) -> RuleSet:
    """Rules from gitleaks-format TOML files; a later file's rule replaces one with its id."""
    rules: dict[str, Rule] = {}
    global_allows: list[Allow] = []
    for path in paths:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"cannot read redaction rules {path}: {exc}") from exc
        for key in ("allowlist", "allowlists"):
            entries = data.get(key) or []
            for entry in [entries] if isinstance(entries, dict) else entries:
                allow = _allow(entry, f"{path.name} [{key}]")
                if allow is not None:
                    global_allows.append(allow)
        for raw in data.get("rules", []):
            if "regex" not in raw:
                continue  # a file-name-only rule (pkcs12-file): there is no file here
            where = f"{path.name} rule {raw.get('id')}"
            allows = [_allow(a, where) for a in raw.get("allowlists", [])]
            rules[str(raw["id"])] = Rule(
                id=str(raw["id"]),
                regex=_compile(str(raw["regex"]), where),
                keywords=tuple(str(k).lower() for k in raw.get("keywords", [])),
                entropy=float(raw.get("entropy", 0.0)),
                group=int(raw.get("secretGroup", 0)),
                allows=tuple(a for a in allows if a is not None),
            )
    return RuleSet(list(rules.values()), global_allows)


@functools.cache
def default_rules() -> RuleSet:
    """gitleaks' rules and ours, from core/report/rulesets/ (loaded once per process)."""
    return load_rules([RULES_DIR / name for name in RULE_FILES])
