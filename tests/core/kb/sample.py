"""A hand-written sample KB entry (`cuda/sample`) for the tests that build one in a folder."""

from __future__ import annotations

from pathlib import Path

# The sample entry's front matter up to the fields each test adds (workarounds, fixes, ...).
SAMPLE_HEAD = """+++
id = "cuda/sample"
title = "Sample error"
domain = "cuda"
category = "cudnn"
summary = "One sentence."
signatures = ['CUDNN_STATUS_SAMPLE']
confidence = "medium"
"""

CITATION = 'ref = "pytorch/pytorch#1"'


def sample_entry(fields: str, citation: str = CITATION, body: str = "Body.") -> str:
    """The sample entry's text: its front matter with `fields` (what a test checks), one
    [[citations]] table holding `citation`, then the Markdown `body`."""
    return f"{SAMPLE_HEAD}{fields}\n[[citations]]\n{citation}\n+++\n\n{body}\n"


def sample_kb(tmp_path: Path, text: str) -> Path:
    """A KB folder under `tmp_path` holding `text` as resources/kb/cuda/sample.md; its root."""
    root = tmp_path / "kb"
    (root / "cuda").mkdir(parents=True)
    (root / "cuda/sample.md").write_text(text, encoding="utf-8")
    return root
