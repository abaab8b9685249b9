"""The repo carries no package-registry host name (a rule of the project's brief).

Fix commands and fixtures name an index by a placeholder instead (`<pytorch-wheel-index>`,
`<pyg-wheel-index>`, `<package-index>`, `<container-registry>`). The patterns are written with
escaped dots, so this file does not match itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Hosts of package registries and wheel/container indexes. Each is a regex source; the
# planted-line test below spells each one out from its pattern.
HOSTS = (
    r"pypi\.org",
    r"pypi\.python\.org",
    r"pythonhosted\.org",
    r"pypi\.nvidia\.com",
    r"pypi\.ngc\.nvidia\.com",
    r"download\.pytorch\.org",
    r"data\.pyg\.org",
    r"anaconda\.org",
    r"repo\.anaconda\.com",
    r"registry\.npmjs\.org",
    r"registry\.yarnpkg\.com",
    r"crates\.io",
    r"proxy\.golang\.org",
    r"rubygems\.org",
    r"repo1?\.maven\.org",
    r"repo\.maven\.apache\.org",
    r"nuget\.org",
    r"packagist\.org",
    r"developer\.download\.nvidia\.com",
    r"nvcr\.io",
    r"ghcr\.io",
    r"quay\.io",
    r"registry-1\.docker\.io",
    r"index\.docker\.io",
    r"hub\.docker\.com",
)
# A host name, alone or as the tail of a longer one (files.<host>, conda.<host>), not part of
# a longer label on either side.
PATTERN = re.compile(
    r"(?<![A-Za-z0-9-])(?:[A-Za-z0-9-]+\.)*(?:" + "|".join(HOSTS) + r")(?![A-Za-z0-9-])",
    re.IGNORECASE,
)


def offending_lines(text: str) -> list[tuple[int, str]]:
    """(line number, host) for each registry host in `text`."""
    return [
        (number, match.group(0))
        for number, line in enumerate(text.splitlines(), 1)
        for match in PATTERN.finditer(line)
    ]


def _tracked_files() -> list[Path]:
    out = subprocess.run(
        # safe.directory: a CI checkout owned by another user than the one running the tests
        ["git", "-c", "safe.directory=*", "ls-files", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    return [ROOT / name for name in out.decode().split("\0") if name]


def _spelled(pattern: str) -> str:
    """A host as written, from its pattern (`repo1?` gives `repo1`)."""
    return pattern.replace("\\.", ".").replace("1?", "1")


def test_no_tracked_file_names_a_package_registry_host() -> None:
    files = _tracked_files()
    assert len(files) > 100, "git ls-files listed almost nothing: not the repo's checkout?"
    found = []
    for path in files:
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="replace")
        rel = path.relative_to(ROOT)
        found += [f"{rel}:{n}: {host}" for n, host in offending_lines(text)]
    assert not found, "package-registry host names in tracked files (use a placeholder):\n" + (
        "\n".join(found)
    )


def test_each_host_is_caught_in_a_planted_line() -> None:
    for pattern in HOSTS:
        host = _spelled(pattern)
        for line in (
            f"pip install torch --index-url https://{host}/whl/cu130",
            f"Downloading https://files.{host}/packages/x.whl (12 MB)",
            f"docker pull {host}/org/image:tag",
            host.upper(),
        ):
            assert offending_lines("ok\n" + line), line


def test_project_sites_and_placeholders_pass() -> None:
    clean = (
        "see pytorch.org/get-started and https://github.com/pyg-team/pytorch_geometric\n"
        "pip install torch --index-url <pytorch-wheel-index>/cu130\n"
        "apt install docker.io; mypypi.organic.example; notcrates.iox\n"
        "https://docs.nvidia.com/cuda/ and https://discuss.pytorch.org/t/1\n"
    )
    assert offending_lines(clean) == []
