"""`cuda-clinic try` end to end on the CPU: real scripts, the real CLI, real child processes."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from core.history import History
from tests.core.tryrun.helpers import as_json, run_try, script

PY = sys.executable


def test_fp16_into_fp32_lstm_has_no_no_code_fix_and_shows_the_code_change() -> None:
    proc = run_try("--fixes", "--python", PY, "--", "python", script("lstm_fp16_into_fp32.py"))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "cuda/rnn-dtype-mismatch" in out
    assert (
        "no no-code fix: cuda/rnn-dtype-mismatch has no fix that works without changing code" in out
    )
    assert "x = x.to(dtype=p.dtype, device=p.device)" in out  # the KB's verified code change
    # The frame is the user's own line, not torch's.
    assert "lstm_fp16_into_fp32.py:15 in forward: out, _ = self.rnn(x)" in out
    assert "[fix:" not in out  # nothing was re-run


def test_torch_not_compiled_with_cuda_is_matched_and_saved() -> None:
    proc = run_try("--json", "--python", PY, "--", "python", script("torch_not_compiled_cuda.py"))
    data = as_json(proc)
    assert data["status"] == "failed"
    assert data["entry"]["id"] == "cuda/torch-not-compiled-with-cuda"
    assert data["entry"]["confidence"] >= 0.5
    assert any(
        "Torch not compiled with CUDA enabled" in e["text"] for e in data["entry"]["evidence"]
    )
    assert data["frame"]["code"] == "model = model.cuda()"
    assert data["time_to_failure_s"] > 0
    with History.open() as history:
        stored = history.get_try(data["id"])
    assert stored["entry"]["id"] == "cuda/torch-not-compiled-with-cuda"
    assert stored["command"][-1].endswith("torch_not_compiled_cuda.py")


def test_a_hang_is_stopped_at_the_timeout_with_the_helper_it_detached() -> None:
    started = time.monotonic()
    proc = run_try("--json", "--timeout", "4", "--", PY, script("hang.py"))
    elapsed = time.monotonic() - started
    data = as_json(proc)
    assert proc.returncode == 1
    assert data["status"] == "timed_out"
    assert data["original"]["status"] == "timed_out"
    assert elapsed < 30
    helper = int(data["original"]["log"].split("helper ", 1)[1].split()[0])
    # The helper left the process group (start_new_session); it must be gone all the same.
    alive = True
    try:
        os.kill(helper, 0)
        state = Path(f"/proc/{helper}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        alive = state != "Z"
    except ProcessLookupError:
        alive = False
    if alive:
        os.kill(helper, signal.SIGKILL)
    assert not alive, f"helper {helper} survived the timeout"
    assert data["original"]["strays_killed"] >= 1


def test_a_flood_of_output_is_bounded_and_its_error_still_found() -> None:
    proc = run_try("--json", "--", PY, script("flood.py"))
    data = as_json(proc)
    original = data["original"]
    assert original["lines_total"] >= 300_000
    assert original["lines_dropped"] > 290_000
    assert len(original["log"]) < 1_000_000  # ~19 MB printed
    assert "step 0 loss" in original["log"]  # the head is kept...
    assert "Torch not compiled with CUDA enabled" in original["log"]  # ...and the tail
    assert data["entry"]["id"] == "cuda/torch-not-compiled-with-cuda"
    assert data["frame"]["file"].endswith("flood.py")


def test_deterministic_error_is_fixed_by_a_switch_and_the_rerun_is_shown(tmp_path: Path) -> None:
    # The user's own sitecustomize (first on PYTHONPATH) must still run under the shim.
    user_site = tmp_path / "usersite"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text(
        "import sys\nsys.stderr.write('user sitecustomize ran\\n')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(user_site))
    work = tmp_path / "project"
    work.mkdir()
    before = sorted(p.name for p in work.iterdir())
    proc = run_try(
        "--fixes", "--json", "--cwd", str(work), "--", PY, script("deterministic_put.py"), env=env
    )
    data = as_json(proc)
    assert proc.returncode == 0, proc.stderr
    assert data["entry"]["id"] == "cuda/nondeterministic-op"
    runs = {r["fix"]["id"]: r for r in data["fixes"]}
    warn = runs["deterministic-warn-only"]
    assert warn["verdict"] == "fixed"
    assert "clean exit" in warn["reason"]
    assert "warn_only=True" in warn["shim"]  # the exact shim is saved with the result
    assert warn["env_changes"]["PYTHONPATH"].startswith("<shim folder>")
    log = warn["outcome"]["log"]
    assert "[cuda-clinic try] applied: deterministic-warn-only" in log
    assert "user sitecustomize ran" in log  # chained
    assert "training finished" in log
    assert data["recommendation"]["kind"] == "fix"
    assert data["recommendation"]["fix"] == "deterministic-warn-only"
    assert sorted(p.name for p in work.iterdir()) == before  # nothing written into the project


def test_until_marker_earns_fixed_and_measures_the_cost(tmp_path: Path) -> None:
    proc = run_try(
        "--fixes", "--json", "--until", r"step 1 done", "--", PY, script("deterministic_put.py")
    )
    data = as_json(proc)
    off = next(r for r in data["fixes"] if r["fix"]["id"] == "deterministic-off")
    assert off["verdict"] == "fixed"
    assert "--until marker" in off["reason"]
    assert off["outcome"]["marker_line"] == "step 1 done"
    # The original printed 'deterministic mode on' before failing: that marker proves nothing.
    early = as_json(
        run_try("--json", "--until", "deterministic mode", "--", PY, script("deterministic_put.py"))
    )
    assert "printed the --until marker before failing" in early["message"]


def test_command_not_found_not_executable_and_quick_exit_get_one_line(tmp_path: Path) -> None:
    proc = run_try("--", "no-such-program-xyz")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "cuda-clinic: error: try: no-such-program-xyz: command not found on PATH"
    )
    plain = tmp_path / "train.sh"
    plain.write_text("echo hi\n")
    proc = run_try("--cwd", str(tmp_path), "--", "./train.sh")
    assert proc.returncode == 2
    assert "not executable" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = run_try("--", "true")
    assert proc.returncode == 0
    assert "exited 0 at once" in proc.stdout and "nothing to diagnose" in proc.stdout
    proc = run_try("--cwd", str(tmp_path / "missing"), "--", "true")
    assert proc.returncode == 2 and "no such folder" in proc.stderr
    proc = run_try("--")
    assert proc.returncode == 2 and "no command given" in proc.stderr


def test_launch_blocking_locates_an_asynchronous_error_at_its_real_line() -> None:
    data = as_json(run_try("--fixes", "--json", "--", PY, script("async_error_sim.py")))
    assert data["entry"]["id"] == "cuda/device-side-assert"
    assert data["frame"]["function"] == "synchronize"  # where the error surfaced
    runs = {r["fix"]["id"]: r for r in data["fixes"]}
    blocking = runs["launch-blocking"]
    assert blocking["verdict"] == "located"
    assert blocking["env_changes"] == {"CUDA_LAUNCH_BLOCKING": "1"}
    assert blocking["frame"]["function"] == "lookup"
    assert blocking["frame"]["code"] == "raise RuntimeError(ERROR)"
    assert "the original run pointed at" in blocking["reason"]
    # TORCH_USE_CUDA_DSA changes nothing here: same error at the same line is not "located".
    assert runs["device-side-assertions"]["verdict"] == "still_fails"
    assert data["recommendation"]["kind"] == "located"
    assert data["recommendation"]["fix"] == "launch-blocking"
