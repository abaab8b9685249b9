"""Long single lines for the redaction's linear-time test and benchmark (seeded, built here)."""

from __future__ import annotations

import random
import string

from tests.planting import campaign

MB = 1_000_000


def url_line(size: int, seed: int = 1) -> str:
    """https://host/path?k=v&k=v... of `size` characters (the 188 KB line of issue 19)."""
    rng = random.Random(seed)
    parts = ["https://storage.corp.example.com/datasets/train.tar?"]
    length = len(parts[0])
    while length < size:
        key = "".join(rng.choices(string.ascii_lowercase, k=rng.randrange(3, 9)))
        value = "".join(rng.choices(string.ascii_letters + string.digits + "%-_", k=24))
        parts.append(f"{key}={value}&")
        length += len(key) + len(value) + 2
    return "".join(parts)[:size]


def token_run(size: int) -> str:
    """One unbroken run of base64 characters."""
    rng = random.Random(2)
    return "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=size))


def secret_pairs(size: int) -> str:
    """`api_key=... password: ... --token ...` over and over: every context rule fires."""
    rng = random.Random(3)
    out: list[str] = []
    length = 0
    while length < size:
        value = "".join(rng.choices(string.ascii_letters + string.digits, k=16))
        piece = rng.choice(["api_key={} ", "password: {} ", "--token {} ", '"secret": "{}", '])
        out.append(piece.format(value))
        length += len(out[-1])
    return "".join(out)[:size]


def addresses(size: int) -> str:
    """Dotted quads, host:port pairs and user@host, over and over."""
    rng = random.Random(4)
    out: list[str] = []
    length = 0
    while length < size:
        quad = ".".join(str(rng.randrange(10, 250)) for _ in range(4))
        piece = (
            f"gpu{rng.randrange(100)} {quad} node-{rng.randrange(999)}:29500 u@h{rng.randrange(9)} "
        )
        out.append(piece)
        length += len(piece)
    return "".join(out)[:size]


def planted_log(size: int) -> str:
    """Realistic log lines with planted values (the test generator's campaign)."""
    text = ""
    seed = 0
    while len(text) < size:
        text += "\n".join(campaign(seed).lines) + "\n"
        seed += 1
    return text[:size]
