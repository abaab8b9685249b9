"""`try` reads the user's KB packs like `match` does (--kb-extra, $CUDA_CLINIC_KB_EXTRA), runs a
pack's fixes only once confirmed (--yes, or a terminal's answer), and never loads a pack fix
that sets a variable changing which code runs (PYTHONPATH, LD_PRELOAD, BASH_ENV, ...)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.core.clirun import run_core

ENTRY = """+++
id = "cuda/{slug}"
title = "Lab: the boom job fails without LAB_FLAG"
domain = "cuda"
category = "memory"
summary = "Our boom job needs LAB_FLAG=1."
signatures = [
  'LABTRYBOOM failure \\d+',
]
confidence = "high"

[[workarounds]]
title = "Set LAB_FLAG=1"
verdict = "unverified"

[[fixes]]
id = "lab-flag"
title = "Set LAB_FLAG=1"
env = {{ {env} }}

[[citations]]
ref = "lab wiki"
+++

Body.
"""
SCRIPT = (
    "import os, sys\n"
    "if os.environ.get('LAB_FLAG') != '1':\n"
    "    print('LABTRYBOOM failure 42', flush=True)\n"
    "    sys.exit(1)\n"
    "print('trained', flush=True)\n"
)


def pack_with(root: Path, env: str, slug: str = "lab-try-boom") -> Path:
    (root / "cuda").mkdir(parents=True)
    (root / "cuda" / f"{slug}.md").write_text(ENTRY.format(slug=slug, env=env))
    return root


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_core(*args, env=env)


def try_json(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    script = tmp_path / "boom.py"
    script.write_text(SCRIPT)
    done = run_cli(
        "try", "--json", "--no-save", *options, "--", sys.executable, str(script), env=env
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_try_matches_pack_entries_like_match_does(tmp_path: Path) -> None:
    pack = pack_with(tmp_path / "pack", 'LAB_FLAG = "1"')
    _code, plain = try_json(tmp_path)
    assert (plain.get("entry") or {}).get("id") != "cuda/lab-try-boom"
    _code, with_pack = try_json(tmp_path, "--kb-extra", str(pack))
    assert with_pack["entry"]["id"] == "cuda/lab-try-boom"
    (tmp_path / "log").write_text("LABTRYBOOM failure 42\n")
    matched = run_cli("match", "--json", "--kb-extra", str(pack), str(tmp_path / "log"))
    assert json.loads(matched.stdout)["matches"][0]["id"] == "cuda/lab-try-boom"
    by_env = {**os.environ, "CUDA_CLINIC_KB_EXTRA": str(pack)}
    _code, from_env = try_json(tmp_path, env=by_env)
    assert from_env["entry"]["id"] == "cuda/lab-try-boom"


def test_a_pack_fix_runs_only_once_confirmed(tmp_path: Path) -> None:
    pack = pack_with(tmp_path / "pack", 'LAB_FLAG = "1"')
    code, unconfirmed = try_json(tmp_path, "--fixes", "--kb-extra", str(pack))
    [fix] = unconfirmed["fixes"]
    assert fix["verdict"] == "cancelled" and fix["outcome"] is None
    assert "pass --yes" in fix["reason"] and "LAB_FLAG=1" in fix["reason"]
    assert unconfirmed["status"] == "failed" and code == 1  # the original result is kept
    code, confirmed = try_json(tmp_path, "--fixes", "--yes", "--kb-extra", str(pack))
    [fix] = confirmed["fixes"]
    assert fix["verdict"] == "fixed" and fix["env_changes"] == {"LAB_FLAG": "1"}
    assert code == 0


def test_a_pack_fix_that_changes_which_code_runs_is_never_loaded(tmp_path: Path) -> None:
    injected = tmp_path / "injected"
    injected.mkdir()
    marker = tmp_path / "ran-injected-code"
    (injected / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('owned')\n")
    pack = pack_with(tmp_path / "pack", f'LAB_FLAG = "1", PYTHONPATH = "{injected}"')
    checked = run_cli("kb", "validate", "--pack", str(pack))
    said = checked.stdout + checked.stderr
    assert checked.returncode == 2
    assert "fixes[0].env.PYTHONPATH" in said and "changes which code runs" in said
    script = tmp_path / "boom.py"
    script.write_text(SCRIPT)
    done = run_cli(
        "try", "--json", "--no-save", "--fixes", "--yes", "--kb-extra", str(pack), "--",
        sys.executable, str(script),
    )  # fmt: skip
    result = json.loads(done.stdout)
    skipped = [ln for ln in done.stderr.splitlines() if "lab-try-boom.md" in ln]
    assert len(skipped) == 1 and "PYTHONPATH" in skipped[0]
    assert (result.get("entry") or {}).get("id") != "cuda/lab-try-boom"
    assert not marker.exists()
    for name in ("LD_PRELOAD", "BASH_ENV", "PYTHONSTARTUP", "DYLD_INSERT_LIBRARIES", "ENV"):
        other = pack_with(tmp_path / f"pack-{name}", f'{name} = "/tmp/x"')
        refused = run_cli("kb", "validate", "--pack", str(other))
        assert refused.returncode == 2 and f"env.{name}" in refused.stdout + refused.stderr
