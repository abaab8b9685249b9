"""Network addresses by position: IPv4 (not where the words before it say "version"), IPv6
(also glued to an interface name as NCCL prints it), MAC addresses (also Cisco's dotted form),
e-mail. RE2 patterns; every check after a match reads a bounded window."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from core.report import patterns as pat
from core.report.hit import RANK_IDENTITY, WORD_CHARS, Hit
from core.report.rules import compile_re2

IPV4 = compile_re2(
    r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b"
)
IPV6 = compile_re2(r"(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[A-Za-z0-9]{1,16})?")
MAC = compile_re2(
    r"\b(?:(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}|(?:[0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}|"
    r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})\b"
)
EMAIL = compile_re2(r"[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b")
_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:")
_INTERFACES = ("eth", "ens", "enp", "eno", "ib", "em", "bond")


def _word_before(text: str, start: int) -> tuple[str, str]:
    """The word before a match and the separators between them (64 characters at most)."""
    window = text[max(0, start - 64) : start]
    cut = len(window)
    while cut and window[cut - 1] in " \t:=@>~<,([\"'/`*|":
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
    longer = text[end : end + 1] == "." and text[end + 1 : end + 2].isdigit()
    if text[start - 1 : start] == "." or longer:
        return False  # part of a longer dotted number: 1.2.3.4.5
    word, seps = _word_before(text, start)
    if any(op in seps for op in ("==", ">=", "<=", "~=")):
        return False
    said = _word_says(word)
    if said is not None:
        return said
    return not (seps.strip() == "" and any(c in word for c in "-_0123456789"))


def _word_says(word: str) -> bool | None:
    """True where the word before a quad names a network thing, False a version, else None."""
    low = word.lower().rstrip(".:")
    last = low.replace("-", "_").rsplit("_", 1)[-1]
    if not low or low in pat.NETWORK_WORDS or last in pat.NETWORK_WORDS:
        return True
    if low.startswith(_INTERFACES) and low[-1:].isdigit():
        return True  # an interface: eth0 10.1.2.3
    versioned = low in pat.VERSION_WORDS or last in pat.VERSION_WORDS or "version" in low
    if "." in low and low.rsplit(".", 1)[-1] in ("json", "txt", "toml", "yaml", "yml", "log"):
        versioned = True  # h200.json: 9.19.0.56, a diff of two saved reports
    if versioned or low.startswith(("nvidia-", "lib", "declared")):
        return False
    return True if _hostlike_word(word) else None  # gpu07 10.44.5.6 joined rendezvous


def find(text: str, key: str | None = None) -> Iterator[Hit]:
    """IPv4 (not versions), IPv6, MAC addresses, e-mail."""
    low_key = (key or "").lower()
    version_field = low_key.endswith("version") or low_key.startswith(("declared", "nvidia-"))
    for m in IPV4.finditer(text):
        said = _word_before(text, m.start())[0]
        if version_field and not (said and _word_says(said) is True):
            continue  # a version field's dotted numbers are versions, unless a network word
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


def _ipv6(text: str, start: int, end: int) -> Hit | None:
    """A real IPv6 address from `start` (glued interface names cut away), or None."""
    stop = min(len(text), start + 64)
    while end < stop and text[end] in _IPV6_CHARS:
        end += 1  # the pattern stops at 8 groups; eth0:2001:... holds one more in front
    end = len(text[start:end].rstrip(":")) + start
    for _ in range(3):  # eth0:2001:db8::1 -> the address after the interface
        if start < end and start and (text[start - 1] in WORD_CHARS or text[start - 1] == "."):
            cut = text.find(":", start, end)
            start = cut + 1 if cut >= 0 else end
    candidate = text[start:end]
    glued_after = end < len(text) and (text[end] in WORD_CHARS or text[end] in ":.")
    if glued_after or candidate.count(":") < 2:
        return None
    try:
        addr = ipaddress.IPv6Address(candidate.split("%", 1)[0])
    except ValueError:
        return None
    if addr.is_loopback or addr.is_unspecified:
        return None
    return Hit(start, end, "ipv6", candidate, rank=RANK_IDENTITY)
