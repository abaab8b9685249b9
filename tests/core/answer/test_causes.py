"""The cause rules are valid data: each example fires its rule, each entry and workaround exists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.answer.causes import Found, find_cause, load_rules, parse_rules
from core.errors import KBError
from core.kb import KnowledgeBase, open_kb

RULES = load_rules()


@pytest.fixture(scope="module")
def kb() -> Iterator[KnowledgeBase]:
    with open_kb() as store:
        yield store


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.id}-{i}" for i, r in enumerate(RULES)])
def test_every_rule_fires_on_its_example(rule, kb: KnowledgeBase) -> None:  # type: ignore[no-untyped-def]
    for entry_id in rule.entries:
        entry = kb.get(entry_id)  # KBError if the rule names an unknown entry
        if rule.refines:
            assert any(rule.refines in (w.step, w.title) for w in entry.workarounds), rule.id
    functions = []
    if rule.frames is not None:
        functions = [rule.example.rsplit(" in ", 1)[-1].strip()]
    found = find_cause([rule.example], rule.entries[0], functions)
    assert found is not None and found.rule.id == rule.id
    text = found.fill(rule.text)
    assert "{" not in text and "[" not in text.replace("[0, 1]", "").replace("tensor[idx]", "")


def test_optional_parts_drop_when_their_value_is_missing() -> None:
    (rule,) = [r for r in RULES if r.id == "tensors-on-two-devices"]
    short = Found(rule, {"a": "cpu", "b": "cuda:0"}, 1, "")
    assert "(argument" not in short.fill(rule.text)
    full = Found(rule, {"a": "cpu", "b": "cuda:0", "arg": "mat2", "method": "wrapper_mm"}, 1, "")
    assert "(argument `mat2` of wrapper_mm)" in full.fill(rule.text)


def test_a_rule_of_another_entry_never_fires() -> None:
    line = "Assertion `srcIndex < srcSelectDimSize` failed."
    assert find_cause([line], "cuda/out-of-memory") is None


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"cause": [{"id": "x"}]}, "entries: is required"),
        (
            {"cause": [{"id": "x", "entries": ["a"], "text": "t", "example": "e"}]},
            "pattern or frames",
        ),
        (
            {"cause": [{"id": "x", "entries": ["a"], "text": "t", "example": "e", "pattern": "("}]},
            "not a valid regex",
        ),
        ({"cause": [{"id": "x", "colour": "red"}]}, "unknown field 'colour'"),
    ],
)
def test_bad_rules_are_one_line_errors(data: dict, problem: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(KBError, match=problem) as err:
        parse_rules(data, "causes.toml")
    assert "\n" not in str(err.value) and str(err.value).startswith("causes.toml: cause[0]")
