"""KB test fixtures: the bundled KB, opened once per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.kb import KnowledgeBase, open_kb

# The labelled sets' shared checks assert inside that module: show the values when one fails.
pytest.register_assert_rewrite("tests.core.kb.labelled")


@pytest.fixture(scope="module")
def bundled_kb() -> Iterator[KnowledgeBase]:
    """The bundled KB, built from resources/kb if needed."""
    with open_kb() as kb:
        yield kb
