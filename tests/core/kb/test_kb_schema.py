"""Entry validation: a malformed entry fails with one line naming the file, field and problem."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import KBError
from core.kb.loader import load_dir, load_entries
from core.kb.schema import parse_entry
from tests.core.kb.sample import sample_entry

GOOD = sample_entry(
    """{extra}

[[workarounds]]
title = "Try this"
verdict = "fixes"
evidence = ["pytorch/pytorch#1"]
""",
    body="## What happens\n{body}",
)


def _write(root: Path, text: str, rel: str = "cuda/sample.md") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _entry(extra: str = "", body: str = "Plain words.") -> str:
    return GOOD.format(extra=extra, body=body)


def test_good_entry_parses(tmp_path: Path) -> None:
    path = _write(tmp_path, _entry('related = []\nerror_codes = ["CUDNN_STATUS_SAMPLE"]'))
    entry = parse_entry(path, tmp_path)
    assert entry.id == "cuda/sample"
    assert entry.workarounds[0].verdict == "fixes"
    assert entry.body.startswith("## What happens")
    assert entry.to_dict()["citations"][0]["ref"] == "pytorch/pytorch#1"


FIX = '\n[[fixes]]\nid = "one"\ntitle = "One fix"\n{body}'
WRAP = "\n[[wrapped]]\n{body}"
WRAP_OK = 'app = "An app"\npattern = \'App says: GPU gone\'\nmeans = "m"\nsource = "o/r#1"'

BAD_CASES = [
    # (description, text, expected field, expected words in the problem)
    ("missing title", _entry().replace('title = "Sample error"\n', ""), "title", "required"),
    ("bad category", _entry().replace('"cudnn"', '"gpu"'), "category", "must be one of"),
    ("bad confidence", _entry().replace('"medium"', '"sure"'), "confidence", "must be one of"),
    (
        "bad regex",
        _entry().replace("'CUDNN_STATUS_SAMPLE'", "'(unclosed'"),
        "signatures[0]",
        "regex",
    ),
    (
        "match-all regex",
        _entry().replace("'CUDNN_STATUS_SAMPLE'", "'.*'"),
        "signatures[0]",
        "empty",
    ),
    (
        "no signatures",
        _entry().replace("['CUDNN_STATUS_SAMPLE']", "[]"),
        "signatures",
        "at least one",
    ),
    ("wrong id", _entry().replace('id = "cuda/sample"', 'id = "cuda/other"'), "id", "path"),
    ("domain mismatch", _entry().replace('domain = "cuda"', 'domain = "nccl"'), "domain", "id"),
    ("unknown field", _entry('root_cause = "x"'), "root_cause", "unknown field"),
    (
        "bad verdict",
        _entry().replace('verdict = "fixes"', 'verdict = "works"'),
        "workarounds[0].verdict",
        "one of",
    ),
    (
        "verdict without evidence",
        _entry().replace('evidence = ["pytorch/pytorch#1"]\n', ""),
        "workarounds[0].evidence",
        "at least one",
    ),
    (
        "claim without source",
        _entry().replace('verdict = "fixes"', 'verdict = "fixes"\nclaimed_success = "85%"'),
        "workarounds[0].claim_source",
        "required",
    ),
    (
        "invented percentage in summary",
        _entry().replace("One sentence.", "Works 85% of the time."),
        "summary",
        "percentage",
    ),
    (
        "invented percentage in body",
        _entry(body="This fixes it 100 % of the time."),
        "body",
        "percentage",
    ),
    (
        "seed claims without seed",
        _entry('\n[[seed_claims]]\nclaim = "x"\nverdict = "wrong"\nevidence = "y"'),
        "seed",
        "required",
    ),
    ("no citations", _entry().split("[[citations]]")[0] + "+++\n", "citations", "at least one"),
    (
        "wrapped without app",
        _entry(WRAP.format(body=WRAP_OK.replace('app = "An app"\n', ""))),
        "wrapped[0].app",
        "required",
    ),
    (
        "wrapped bad regex",
        _entry(WRAP.format(body=WRAP_OK.replace("App says: GPU gone", "App says: ("))),
        "wrapped[0].pattern",
        "regex",
    ),
    (
        "wrapped match-all regex",
        _entry(WRAP.format(body=WRAP_OK.replace("App says: GPU gone", "(x)?"))),
        "wrapped[0].pattern",
        "empty",
    ),
    (
        "wrapped unknown field",
        _entry(WRAP.format(body=WRAP_OK + '\nurl = "https://example.org"')),
        "wrapped[0].url",
        "unknown field",
    ),
    ("unknown domain", _entry().replace('domain = "cuda"', 'domain = "rocm"'), "domain", "one of"),
    (
        "bad toml",
        _entry().replace('title = "Sample error"', "title = Sample"),
        "front matter",
        "TOML",
    ),
    ("no front matter", "## Just markdown\n", "front matter", "+++"),
    ("list of non-strings", _entry("error_codes = [1]"), "error_codes[0]", "string"),
    (
        "fix with an unknown switch",
        _entry(FIX.format(body='switches = ["cudnn-of"]')),
        "fixes[0].switches[0]",
        "unknown switch",
    ),
    (
        "fix that changes nothing",
        _entry(FIX.format(body="")),
        "fixes[0].env",
        "at least one",
    ),
    (
        "fix with a lower-case variable",
        _entry(FIX.format(body='env = { cuda_launch_blocking = "1" }')),
        "fixes[0].env.cuda_launch_blocking",
        "upper-case",
    ),
    (
        "fix with a number for a value",
        _entry(FIX.format(body="env = { CUDA_LAUNCH_BLOCKING = 1 }")),
        "fixes[0].env.CUDA_LAUNCH_BLOCKING",
        "string",
    ),
    (
        "fix with a bad kind",
        _entry(FIX.format(body='kind = "cure"\nswitches = ["cudnn-off"]')),
        "fixes[0].kind",
        "one of",
    ),
    (
        "no_wizard beside a scenario",
        _entry('scenario = "cuda/sample"\nno_wizard = "needs an older GPU"'),
        "no_wizard",
        "empty",
    ),
]


@pytest.mark.parametrize(
    ("text", "field", "words"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES]
)
def test_malformed_entry_names_file_and_field(
    tmp_path: Path, text: str, field: str, words: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(KBError) as info:
        parse_entry(path, tmp_path, "resources/kb/cuda/sample.md")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"resources/kb/cuda/sample.md: field '{field}': ")
    assert words.lower() in message.lower()


def test_fixes_parse_with_their_shim_lines(tmp_path: Path) -> None:
    fixes = FIX.format(body='kind = "diagnose"\nenv = { CUDA_LAUNCH_BLOCKING = "1" }')
    fixes += FIX.replace('"one"', '"two"').format(body='switches = ["cudnn-off", "tf32-off"]')
    entry = parse_entry(_write(tmp_path, _entry(fixes)), tmp_path)
    first, second = entry.fixes
    assert (first.kind, first.env, first.describe()) == (
        "diagnose",
        {"CUDA_LAUNCH_BLOCKING": "1"},
        "CUDA_LAUNCH_BLOCKING=1",
    )
    assert second.kind == "fix"
    assert "torch.backends.cudnn.enabled = False" in second.shim_code()
    assert "allow_tf32 = False" in second.shim_code()


def test_wrapped_messages_parse(tmp_path: Path) -> None:
    path = _write(tmp_path, _entry(WRAP.format(body=WRAP_OK)))
    (wrapped,) = parse_entry(path, tmp_path).wrapped
    assert (wrapped.app, wrapped.pattern, wrapped.source) == (
        "An app",
        "App says: GPU gone",
        "o/r#1",
    )
    assert wrapped.note() == "reworded by An app: m"


@pytest.mark.parametrize("domain", ["ext", "triton"])
def test_extension_and_triton_domains_load(tmp_path: Path, domain: str) -> None:
    text = _entry().replace('id = "cuda/sample"', f'id = "{domain}/sample"')
    text = text.replace('domain = "cuda"', f'domain = "{domain}"')
    entry = parse_entry(_write(tmp_path, text, f"{domain}/sample.md"), tmp_path)
    assert (entry.id, entry.domain) == (f"{domain}/sample", domain)


def test_percentages_allowed_in_code_and_claims(tmp_path: Path) -> None:
    body = "Use `batch % 8 == 0`.\n```python\nx = 128 % 8\n```"
    path = _write(tmp_path, _entry(body=body))
    assert parse_entry(path, tmp_path).id == "cuda/sample"


def test_links_to_unknown_entries_fail(tmp_path: Path) -> None:
    _write(tmp_path, _entry('masked_by = ["cuda/missing"]'))
    result = load_dir(tmp_path)
    assert result.entries == []
    assert result.errors == [
        f"{tmp_path / 'cuda/sample.md'}: field 'masked_by[0]': unknown entry id 'cuda/missing'"
    ]
    with pytest.raises(KBError, match="masked_by"):
        load_entries(tmp_path)


def test_unregistered_scenario_fails(tmp_path: Path) -> None:
    _write(tmp_path, _entry('scenario = "no-such-scenario"'))
    assert "scenario" in load_dir(tmp_path, scenario_ids={"rnn-double-backward"}).errors[0]
    assert load_dir(tmp_path, scenario_ids=None).errors == []


def test_every_fixture_entry_is_valid(repo_root: Path) -> None:
    result = load_dir(repo_root / "tests/data/kb")
    assert result.errors == []
    assert len(result.entries) == 7


def _validate(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core", "kb", "validate", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_validate_command_reports_every_bad_file(tmp_path: Path, repo_root: Path) -> None:
    shutil.copytree(repo_root / "tests/data/kb", tmp_path / "kb")
    good = _validate(tmp_path / "kb")
    assert good.returncode == 0, good.stderr
    assert "7 entries OK" in good.stdout
    _write(tmp_path / "kb", _entry().replace('"cudnn"', '"gpu"'), "cuda/bad-one.md")
    _write(tmp_path / "kb", "no front matter\n", "nccl/bad-two.md")
    bad = _validate(tmp_path / "kb")
    assert bad.returncode == 2
    lines = bad.stdout.splitlines()
    assert len(lines) == 2
    assert "bad-one.md: field 'id'" in lines[0]  # the id check runs before the category check
    assert "bad-two.md: field 'front matter'" in lines[1]
    assert "Traceback" not in bad.stderr
