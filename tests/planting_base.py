"""The pieces every planted kind is made of: a Plant and random names, hosts, passwords.

Each kind makes, from a seeded random generator, a fresh value in the shape the world gives it
(a token with its real prefix and length, a user name in a cluster path, a host in a SLURM line)
and says which substrings must vanish. No token-shaped string is written in this file: every
one is built at test time from random characters (the gitleaks way), so pushing it trips no
secret scanner.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
PW_CHARS = ALNUM + "!#%*+-_="


@dataclass(frozen=True)
class Plant:
    """One planted value: `text` as a log line carries it, `secrets` the parts that must go.

    `env` are variables to set for the process that builds the report (names the environment
    probe collects), `argv` the same value as separate command-line items, `path` a folder."""

    text: str
    secrets: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    path: str = ""


Make = Callable[[random.Random], Plant]


def r(rng: random.Random, n: int, chars: str = ALNUM) -> str:
    """`n` random characters from `chars`."""
    return "".join(rng.choice(chars) for _ in range(n))


def user(rng: random.Random) -> str:
    """A person's login: nine random letters and a digit (too rare to collide with text)."""
    return r(rng, 8, LOWER) + r(rng, 1, "23456789")


def host(rng: random.Random) -> str:
    """A cluster node name such as gpu-qzxw-417."""
    stem = rng.choice(["gpu", "node", "dgx", "trn", "worker", "cn"])
    return f"{stem}-{r(rng, 4, LOWER)}-{rng.randrange(100, 999)}"


def fqdn(rng: random.Random) -> str:
    """A private fully qualified host name."""
    tld = rng.choice(["example.com", "internal", "corp", "cluster.local", "hpc.example.edu"])
    return f"{host(rng)}.{r(rng, 6, LOWER)}.{tld}"


def password(rng: random.Random) -> str:
    """A password with letters, digits and symbols."""
    return r(rng, 6, string.ascii_letters) + r(rng, 3, string.digits) + r(rng, 5, PW_CHARS)


def ipv4(rng: random.Random) -> str:
    """A private address whose octets have at least two digits (no accidental matches)."""
    return f"10.{rng.randrange(10, 250)}.{rng.randrange(10, 250)}.{rng.randrange(10, 250)}"


def uuid(rng: random.Random) -> str:
    """A random UUID (8-4-4-4-12 hex)."""
    return "-".join(r(rng, n, HEX) for n in (8, 4, 4, 4, 12))


def token(fn: Callable[[random.Random], str], line: str = "{}") -> Make:
    """A kind whose whole value is the secret, shown in `line`."""

    def make(rng: random.Random) -> Plant:
        value = fn(rng)
        return Plant(line.format(value), (value,))

    return make


def mixed(rng: random.Random, n: int, chars: str = ALNUM) -> str:
    """`n` random characters with at least one capital, one small letter and one digit."""
    picks = [rng.choice(string.ascii_uppercase), rng.choice(LOWER), rng.choice(string.digits)]
    picks += [rng.choice(chars) for _ in range(n - 3)]
    rng.shuffle(picks)
    return "".join(picks)
