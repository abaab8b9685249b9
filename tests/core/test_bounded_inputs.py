"""Every reader is bounded: special files, endless pipes, huge logs and deep JSON, as a hostile
or unlucky user hands them over. Each case runs the real `cuda-clinic` in a child process and
checks the one error line (exit 2) or the kept tail, the time, and the child's peak memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.boundedio import json_path, loads_json, size_text
from core.errors import InputError

REPO = Path(__file__).resolve().parents[2]
ENV_JSON = REPO / "tests" / "data" / "fleet" / "nodes" / "gpu01.json"
ERROR = "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR"


# Run the command from a small wrapper and take its child's peak RSS there: a child forked from
# pytest itself inherits pytest's high-water mark into ru_maxrss (Linux records the old memory's
# peak at exec), which would measure pytest, not cuda-clinic.
MEASURE = r"""
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


def run_measured(
    *args: str, stdin: int | None = None, timeout: float = 180
) -> tuple[int, str, str, float, int]:
    """(exit code, stdout, stderr, seconds, peak RSS in MB) of `python -m core ARGS`."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".peak") as peak_file:
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    MEASURE,
                    peak_file.name,
                    sys.executable,
                    "-m",
                    "core",
                    *args,
                ],
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{args} ran past {timeout} s")
        seconds = time.perf_counter() - start
        peak_kb = int(Path(peak_file.name).read_text() or 0)
    return (
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        seconds,
        peak_kb // 1024,
    )


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert "Traceback" not in err, err[-2000:]
    assert len(lines) == 1, err[-2000:]
    assert lines[0].startswith("cuda-clinic: error: ")
    return lines[0]


def test_devices_are_named_as_devices_not_missing_files() -> None:
    for argv in (
        ["match", "/dev/zero"],
        ["report", "--quick", "--error", "/dev/zero"],
        ["report", "diff", "/dev/zero", "/dev/zero"],
        ["env", "--from", "/dev/zero"],
        ["report", "--from", "/dev/zero"],
    ):
        code, _out, err, seconds, peak = run_measured(*argv, timeout=60)
        line = one_error_line(err)
        assert code == 2 and "/dev/zero: is a device" in line, (argv, line)
        assert "no such file" not in line
        assert seconds < 30 and peak < 300, (argv, seconds, peak)


def test_an_endless_pipe_on_stdin_keeps_its_tail_in_bounded_memory(tmp_path: Path) -> None:
    producer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sys\nline = b'{ERROR}\\n' * 4096\nwhile True: sys.stdout.buffer.write(line)",
        ],
        stdout=subprocess.PIPE,
    )
    assert producer.stdout is not None
    try:
        out = tmp_path / "r.json"
        code, _o, err, seconds, peak = run_measured(
            "report", "--quick", "--error", "-", "-o", str(out), stdin=producer.stdout.fileno()
        )
    finally:
        producer.kill()
        producer.wait()
        producer.stdout.close()
    assert code == 0, err[-2000:]
    assert "it had not ended; reading stopped there" in err
    report = json.loads(out.read_text())
    assert report["error"]["text"].startswith("[cuda-clinic: standard input is more than")
    assert ERROR in report["error"]["text"]
    assert peak < 500, peak  # the run reached 10.5 GB in 15 s
    assert seconds < 120


def test_a_huge_log_keeps_its_tail_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    with log.open("wb") as handle:
        handle.write(b"epoch 1 loss 0.5 step ok\n" * 1_200_000)  # 30 MB of progress
        handle.write(f"Traceback (most recent call last):\n{ERROR}\n".encode())
    out = tmp_path / "r.json"
    code, _o, err, _seconds, peak = run_measured(
        "report", "--quick", "--error", str(log), "-o", str(out)
    )
    assert code == 0, err[-2000:]
    said = f"{log} is {size_text(log.stat().st_size)}; kept its last 1 MB"
    assert said in err
    text = json.loads(out.read_text())["error"]["text"]
    assert text.startswith(f"[cuda-clinic: {said}]")
    assert text.rstrip().endswith(ERROR) and len(text) < 1_100_000
    assert peak < 400, peak
    matched = run_measured("match", str(log))
    assert matched[0] == 0 and "cudnn" in matched[1].lower()


def deep_files(tmp_path: Path) -> dict[str, Path]:
    brackets = tmp_path / "brackets.json"
    brackets.write_text("[" * 10_000)  # the 10 KB file
    report = json.loads(run_measured("report", "--quick", "--format", "json")[1])
    report["extra_notes"] = {"deep": json.loads("[" * 900 + "]" * 900)}
    deep_report = tmp_path / "deep-report.json"
    deep_report.write_text(json.dumps(report))
    return {"brackets": brackets, "deep_report": deep_report}


def test_deep_json_is_one_line_naming_the_file_and_the_place(tmp_path: Path) -> None:
    files = deep_files(tmp_path)
    brackets, deep_report = str(files["brackets"]), str(files["deep_report"])
    for argv, where in (
        (["env", "--from", brackets], "$[0][0][0][0][0][0]…"),
        (["report", "--from", brackets], "$[0][0][0][0][0][0]…"),
        (["report", "diff", brackets, brackets], "$[0][0][0][0][0][0]…"),
        (["report", "--from", deep_report], "$.extra_notes.deep[0][0][0][0]…"),
        (["report", "diff", deep_report, deep_report], "$.extra_notes.deep[0][0][0][0]…"),
        (["env", "--from", deep_report], "$.extra_notes.deep[0][0][0][0]…"),
    ):
        code, _o, err, _s, _p = run_measured(*argv)
        line = one_error_line(err)
        assert code == 2 and argv[-1] in line and "nests deeper than 64 levels" in line, line
        assert where in line, line


def test_json_path_and_depth_check_agree_on_random_nestings() -> None:
    import random

    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    for _ in range(200):
        depth = rng.randrange(1, 130)
        leaf: object = rng.choice([1, "x", None, []])
        value = leaf
        keys: list[str] = []
        for _level in range(depth):
            if rng.random() < 0.5:
                value = [0, value] if rng.random() < 0.5 else [value]
                keys.append("list")
            else:
                value = {"k": value}
                keys.append("dict")
        text = json.dumps({"top": value})
        total = depth + 1 + (leaf == [])  # the top object, the levels, an empty list leaf
        try:
            assert loads_json(text, name="x", what="t") == {"top": value}
            assert total <= 64, (seed, depth)
        except InputError as exc:
            assert total > 64, (seed, depth, str(exc))
            assert "at $.top" in str(exc), (seed, str(exc))
    assert json_path(b'{"a": [1, {"b c": [[[', 3) == '$.a[1]["b c"]'


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_and_a_deep_node_in_a_fleet_folder_cost_one_node_each(tmp_path: Path) -> None:
    folder = tmp_path / "fleet"
    folder.mkdir()
    for name in ("gpu01", "gpu02"):
        shutil.copy(ENV_JSON, folder / f"{name}.json")
    os.mkfifo(folder / "gpu03.json")  # no writer: opening it would wait forever
    (folder / "gpu04.json").write_text("[" * 10_000)
    (folder / "gpu05.json").write_text(
        '{"python": {}, "findings": [' + "[" * 900 + "]" * 900 + "]}"
    )
    code, out, err, seconds, _p = run_measured("fleet", "--from", str(folder), "--json", timeout=60)
    assert seconds < 50 and "Traceback" not in err, err[-2000:]
    nodes = {n["fleet_node"]: n for n in json.loads(out)["nodes"]}
    assert {nodes["gpu01"]["status"], nodes["gpu02"]["status"]} == {"ok"}
    assert nodes["gpu03"]["status"] == "garbage" and "is a pipe" in nodes["gpu03"]["reason"]
    for name in ("gpu04", "gpu05"):
        assert nodes[name]["status"] == "garbage"
        assert "nests deeper than 64 levels" in nodes[name]["reason"]
    assert code in (0, 1)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_log_is_streamed_like_stdin(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", f"printf 'noise\\n{ERROR}\\n' > {fifo}"],
    )
    code, out, err, _s, _p = run_measured("match", str(fifo), timeout=60)
    writer.wait(10)
    assert code == 0, err
    assert "mapping" in out.lower()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_pack_with_a_fifo_and_a_huge_entry_is_checked_in_bounded_time(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    (pack / "cuda").mkdir(parents=True)
    os.mkfifo(pack / "cuda" / "stuck.md")  # no writer: opening it would wait forever
    (pack / "cuda" / "huge.md").write_bytes(b"+++\n" + b"x" * (2 << 20))
    code, out, err, seconds, _p = run_measured("kb", "validate", "--pack", str(pack), timeout=90)
    said = out + err
    assert seconds < 80 and "Traceback" not in said, said[-2000:]
    assert "stuck.md" in said and "is a pipe" in said
    assert "huge.md" in said and "larger than 1 MB" in said
    assert code == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_host_files_and_rank_logs_are_bounded(tmp_path: Path) -> None:
    from core.fleet.collect import _run, read_hostfile
    from core.nccl.launch import read_ranks

    os.mkfifo(tmp_path / "hosts")
    with pytest.raises(InputError, match="is a pipe"):
        read_hostfile(tmp_path / "hosts")
    with pytest.raises(InputError, match="is a device"):
        read_hostfile("/dev/zero")
    # a node that floods its output: the first 16 MB are kept, the rest drained, memory bounded
    flood = (
        "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(40): sys.stdout.buffer.write(block)"
    )
    rc, out, _err, _s = _run([sys.executable, "-c", flood], timeout=60)
    assert rc == 0 and out == "[output larger than 16 MB; not read]"
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    good = json.dumps({"event": "start", "rank": 0})
    (ranks / "rank0.jsonl").write_text(f"{good}\n{'[' * 50_000}\n{good}\n")
    assert [event.event for event in read_ranks(ranks)[0]] == ["start", "start"]
