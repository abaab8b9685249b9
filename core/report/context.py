"""Context rules: a value is secret because of what stands before it.

A secret-named key or variable (`HF_TOKEN=`, `"secret": "…"`, `password: …`), a secret-named
flag (`--api-key X`, `--password=X`), the words of a `.netrc` (`machine H login U password P`),
an `Authorization:` / `Cookie:` header with any scheme, credentials in a URL, and a
`login … -p X` command. Plus token-shaped strings by their entropy alone. Every pattern is RE2
(linear time); the Python checks after a match read a bounded window.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from core.report.hit import RANK_CONTEXT, RANK_ENTROPY, RANK_IDENTITY, Hit, glued
from core.report.names import is_secret_name, is_trivial
from core.report.rules import compile_re2, entropy

_WORDS = (
    r"(?:token|secret|passw|passphrase|passcode|pass|pwd|pw|credential|creds|auth|key|cookie|"
    r"session|signature|sig|bearer|jwt)"
)
# `name op`: only the name and the operator are consumed, so `step: db_password = "x"` still
# shows `db_password =` to the next match. The value is read in Python from a bounded window.
ASSIGN = compile_re2(
    r"(?i)([A-Za-z0-9_.-]{0,60}" + _WORDS + r"[A-Za-z0-9_.-]{0,60})[\"']?[ \t]*(:=|=>|=|:)"
)
# The flag's value follows `=`, blanks, or (a printed list: ['--api-key', 'X']) a quote and comma.
FLAG = compile_re2(
    r"(?i)(?:^|[\s\"'(\[,])(-{1,2}[A-Za-z0-9_.-]{0,60}" + _WORDS + r"[A-Za-z0-9_.-]{0,60})"
    r"(=|[\"'][ \t]*,[ \t]*|[ \t]+)"
)
BARE = compile_re2(
    r"(?i)\b(password|passwd|passphrase|passcode|token|secret|api[-_ ]?key|apikey)[ \t]+"
)
NETRC_MACHINE = compile_re2(
    r"(?i)\bmachine[ \t]+([A-Za-z0-9][A-Za-z0-9._-]{0,252})[ \t]*(?:\r?\n|[ \t]login\b)"
)
NETRC_LOGIN = compile_re2(r"(?i)\blogin[ \t]+([^\s\[-][^\s]{0,127})")
LOGIN_LINE = compile_re2(r"(?i)\b(?:login|curl)\b[^\r\n]{0,300}")
LOGIN_FLAG = compile_re2(r"[ \t](-u|--user|--username|-p|--password)(?:[ \t]+|=)")
HEADER = compile_re2(
    r"(?i)\b((?:proxy-)?authorization|(?:set-)?cookie)[\"']?[ \t]*[:=][ \t]*[\"']?"
)
BEARER = compile_re2(r"(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{8,})")
URL_USERINFO = compile_re2(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://([^\s/?#@\"'<>]{1,256})@")
# Runs of one character class cannot backtrack (nothing follows them that could fail), so the
# entropy pass reads them with Python's re, whose per-match cost is far below the RE2 wrapper's
# (a 1 MB URL holds 24,000 such runs). Every other pattern over report text is RE2.
TOKENISH = re.compile(r"[A-Za-z0-9_+-]{20,}={0,2}")
BASE64ISH = re.compile(r"[A-Za-z0-9+/]{32,}={0,2}")
HEXISH = re.compile(r"[0-9a-fA-F]{32,}")
_CHUNK = re.compile(r"[A-Z]?[a-z]+|[A-Z]+|[0-9]+")  # on one run of at most _RUN_MAX characters
_RUN_MAX = 256  # a longer unbroken run of token characters is a blob, not an identifier
_PROSE = compile_re2(r"^[A-Za-z][a-z]*[.,:;!?)]?$")
_HASH_WORDS = ("sha", "md5", "hash", "digest", "commit", "git", "rev", "checksum", "build")
COMMON_URL_USERS = frozenset({"git", "anonymous", "ftp", "guest", "oauth2", "x-access-token"})
_VALUE_MAX = 512
_END_BARE = frozenset(" \t\r\n\"',;()[]{}<>&|`")


def _value_at(text: str, pos: int) -> tuple[int, int, bool]:
    """The value that starts at `pos` after blanks: its span and whether it was quoted."""
    limit = min(len(text), pos + 64)
    while pos < limit and text[pos] in " \t":
        pos += 1
    if pos < len(text) and text[pos] in "\"'":
        quote = text[pos]
        close = text.find(quote, pos + 1, pos + 1 + _VALUE_MAX)
        newline = text.find("\n", pos + 1, pos + 1 + _VALUE_MAX)
        if close > pos and (newline < 0 or close < newline):
            return pos + 1, close, True
        pos += 1
    end = pos
    stop = min(len(text), pos + _VALUE_MAX)
    while end < stop and text[end] not in _END_BARE:
        end += 1
    return pos, end, False


def _codelike(text: str, start: int, end: int, name: str) -> bool:
    """An unquoted value that is code, not a secret: a call, an index, `args.token`, `x=x`."""
    value = text[start:end]
    after = text[end : end + 1]
    if after in ("(", "["):
        return True
    bare = name.strip("-\"' ").rsplit(".", 1)[-1]
    if value == bare or value.lstrip("$") == bare:
        return True
    return "." in value and all(p.isidentifier() and p.islower() for p in value.split("."))


def _secret_value(text: str, start: int, end: int, quoted: bool, name: str) -> bool:
    value = text[start:end]
    if end <= start or is_trivial(value) or value.startswith("-"):
        return False
    return quoted or not _codelike(text, start, end, name)


def assignments(text: str) -> Iterator[Hit]:
    """`NAME=value`, `name: value`, `"name": "value"`, `--flag=value`, `--flag value`."""
    for m in ASSIGN.finditer(text):
        name = m.group(1)
        if not is_secret_name(name):
            continue
        start, end, quoted = _value_at(text, m.end())
        value = text[start:end]
        if m.group(2) == ":" and value.startswith("//"):
            continue  # `url: https://...`: a URL's secrets are found in the URL
        if _secret_value(text, start, end, quoted, name):
            yield Hit(start, end, "secret-value", value, rank=RANK_CONTEXT)
    for m in FLAG.finditer(text):
        if not is_secret_name(m.group(1)):
            continue
        start, end, quoted = _value_at(text, m.end())
        if _secret_value(text, start, end, quoted, m.group(1)):
            yield Hit(start, end, "secret-value", text[start:end], rank=RANK_CONTEXT)


def spoken(text: str) -> Iterator[Hit]:
    """`password X` (.netrc, prose), the netrc's machine and login, `login -u U -p P`."""
    for m in BARE.finditer(text):
        start, end, quoted = _value_at(text, m.end())
        value = text[start:end]
        if not quoted and (_PROSE.match(value) or is_trivial(value)):
            continue  # "password is wrong", "token ids": prose, not a value
        if _secret_value(text, start, end, quoted, m.group(1)):
            yield Hit(start, end, "secret-value", value, rank=RANK_CONTEXT)
    for m in NETRC_MACHINE.finditer(text):
        if "login" in text[m.end(1) : m.end(1) + 200].lower():  # a .netrc entry
            yield Hit(m.start(1), m.end(1), "host-name", m.group(1), rank=RANK_CONTEXT)
    for m in NETRC_LOGIN.finditer(text):
        around = text[max(0, m.start() - 200) : m.end() + 200].lower()
        if "machine " in around or "password" in around:  # a .netrc, not `wandb login KEY`
            yield Hit(m.start(1), m.end(1), "user-name", m.group(1), rank=RANK_CONTEXT)
    for line in LOGIN_LINE.finditer(text):
        yield from _login_flags(text, line.start(), line.end())


def _login_flags(text: str, lo: int, hi: int) -> Iterator[Hit]:
    """`docker login -u U -p P`, `curl -u user:password`: the user and the password."""
    for m in LOGIN_FLAG.finditer(text[lo:hi]):
        start, end, _ = _value_at(text, lo + m.end())
        value = text[start:end]
        if end <= start or value.startswith("-"):
            continue
        if m.group(1) in ("-p", "--password"):
            yield Hit(start, end, "secret-value", value, rank=RANK_CONTEXT)
            continue
        name, colon, secret = value.partition(":")
        yield Hit(start, start + len(name), "user-name", name, rank=RANK_CONTEXT)
        if colon and secret:
            at = start + len(name) + 1
            yield Hit(at, end, "secret-value", secret, rank=RANK_CONTEXT)


def headers(text: str) -> Iterator[Hit]:
    """`Authorization: <any scheme> X`, `Cookie: …`, `Bearer X`, `scheme://user:pass@host`."""
    for m in HEADER.finditer(text):
        start = m.end()
        stop = min(len(text), start + 4096)
        end = start
        while end < stop and text[end] not in "\"'\r\n":
            end += 1
        if m.group(1).lower().endswith("authorization"):
            space = text.find(" ", start, end)
            scheme = text[start:space] if space > start else ""
            if scheme.isalpha() or scheme.replace("-", "").isalnum():
                start = space + 1  # keep the scheme word: "Basic", "Bearer", "Digest"
        value = text[start:end].strip()
        if len(value) >= 4 and not is_trivial(value):
            start += len(text[start:end]) - len(text[start:end].lstrip())
            yield Hit(start, start + len(value), "auth-header", value, rank=RANK_CONTEXT)
    for m in BEARER.finditer(text):
        yield Hit(m.start(1), m.end(1), "auth-header", m.group(1), rank=RANK_CONTEXT)
    for m in URL_USERINFO.finditer(text):
        cred = m.group(1)
        if ":" in cred or (len(cred) >= 16 and entropy(cred) >= 3.0):
            yield Hit(m.start(1), m.end(1), "url-credentials", cred, rank=RANK_CONTEXT)
        elif cred.lower() not in COMMON_URL_USERS:
            yield Hit(m.start(1), m.end(1), "user-name", cred, rank=RANK_IDENTITY)


# CUDA-stack stems that read as words in identifiers although they are short of vowels.
_STEMS = frozenset({"cudnn", "nvml", "nccl", "nvrtc", "nvjit", "mkl", "blas", "cublas", "cufft"})


def _plausible(word: str) -> bool:
    """A chunk that reads as a word or an acronym: it has vowels where words have them."""
    if word.lower() in _STEMS:
        return True
    n = len(word)
    vowels = sum(c in "aeiouyAEIOUY" for c in word)
    if n <= 2 or (word.isupper() and n <= 4):
        return True  # nn, v2, CUDA, NCCL, GEMM
    return vowels > 0 and (n < 6 or vowels * 5 >= n)


def _wordlike(run: str) -> bool:
    """An identifier made of words (`CudnnConvolutionBackward0`, `Model2Final_v3`), not a token.

    Random base62 rarely reads as words: of 100,000 random strings of each length, 0.28 % of
    20-character, 0.045 % of 32-character and 0.006 % of 40-character ones were taken for
    identifiers; of torch's own source, 1.5 % of the 31,677 runs of 20+ such characters are
    taken for tokens (benchmarks/entropy_check.py)."""
    words = [c for c in _CHUNK.findall(run) if c.isalpha()]
    if not words:
        return False
    if sum(map(len, words)) < 3.2 * len(words) or not all(map(_plausible, words)):
        return False
    tiny = sum(1 for w in words if len(w) <= 2 and not w.isupper())
    return tiny * 4 <= len(words)


def _mixed(run: str) -> bool:
    """Capitals, small letters and digits all present (str methods run in C)."""
    return run != run.lower() and run != run.upper() and run.translate(_NO_DIGITS) != run


_NO_DIGITS = str.maketrans("", "", "0123456789")


def entropic(text: str, key: str | None = None) -> Iterator[Hit]:
    """Token-shaped strings by entropy alone: mixed-case-and-digit runs, base64, long hex."""
    for m in TOKENISH.finditer(text):
        run = m.group()
        if glued(text, m.start(), m.end()) or run.startswith("_Z") or not _mixed(run):
            continue
        if len(run) > _RUN_MAX:
            yield Hit(m.start(), m.end(), "token-entropy", run, rank=RANK_ENTROPY)
            continue
        floor = 0.78 * math.log2(min(len(run), 62))  # random base62 sits above 0.79 (measured)
        if entropy(run) >= floor and not _wordlike(run):
            yield Hit(m.start(), m.end(), "token-entropy", run, rank=RANK_ENTROPY)
    for m in BASE64ISH.finditer(text):
        run = m.group()
        if glued(text, m.start(), m.end()) or not _mixed(run) or not ("/" in run or "+" in run):
            continue
        segments = [s for s in run.split("/") if s]
        if len(run) > _RUN_MAX or (
            entropy(run) >= 4.5 and sum(map(_wordlike, segments)) * 2 < len(segments)
        ):
            yield Hit(m.start(), m.end(), "token-entropy", run, rank=RANK_ENTROPY)
    low_key = (key or "").lower()
    if any(w in low_key for w in _HASH_WORDS):
        return
    for m in HEXISH.finditer(text):
        run = m.group()
        if glued(text, m.start(), m.end()) or run.isdigit() or run.isalpha():
            continue
        before = text[max(0, m.start() - 32) : m.start()].lower()
        words = "".join(c if c.isalpha() else " " for c in before[before.rfind("\n") + 1 :])
        hashed = any(w.startswith(_HASH_WORDS) for w in words.split())
        if not hashed and entropy(run) >= 3.0:
            yield Hit(m.start(), m.end(), "hex-token", run, rank=RANK_ENTROPY)


def find(text: str, key: str | None = None) -> Iterator[Hit]:
    """Every context and entropy hit in `text` (`key`: the field name it sits under)."""
    yield from assignments(text)
    yield from spoken(text)
    yield from headers(text)
    yield from entropic(text, key)
