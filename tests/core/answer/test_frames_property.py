"""The user's frame in pasted logs, on fresh random tracebacks each run (hypothesis prints the
failing example and its seed): the last frame outside installed libraries, whatever decorates
the lines (rank prefixes, timestamps, Windows paths, frames glued on one line)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.tryrun.locate import is_library, pasted_frame

LIBRARY_DIRS = st.sampled_from(
    [
        "/usr/lib/python3.10/site-packages/torch/nn/modules",
        "/home/u/.local/lib/python3.8/site-packages/transformers",
        "/opt/conda/envs/x/lib/python3.11/site-packages/accelerate",
        "/usr/local/lib/python3.10/dist-packages/torch",
        "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python39\\Lib\\site-packages\\torch",
        "/usr/lib/python3.12",
        "<frozen importlib._bootstrap>",
    ]
)
USER_DIRS = st.sampled_from(
    ["", "src", "/home/u/project", "/data/run/exp-3/code", "D:\\work\\proj", "./tools"]
)
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
CODE = st.from_regex(r"[a-z_]{1,8} = [a-z_]{1,8}\([a-z_, ]{0,12}\)", fullmatch=True)
PREFIXES = st.sampled_from(["", "[rank3]: ", "2024-05-01 10:02:03 [ERROR] ", "[default0]:"])


def _path(folder: str, name: str) -> str:
    if folder.startswith("<"):
        return folder
    sep = "\\" if "\\" in folder else "/"
    return f"{folder}{sep}{name}.py" if folder else f"{name}.py"


frame = st.tuples(st.booleans(), LIBRARY_DIRS, USER_DIRS, NAMES, st.integers(1, 9999), NAMES, CODE)


@settings(max_examples=300, deadline=None)
@given(st.lists(frame, min_size=1, max_size=12), PREFIXES, st.booleans(), st.booleans())
def test_pasted_frame_is_the_last_user_frame(frames, prefix, header, glued) -> None:  # type: ignore[no-untyped-def]
    lines = [f"{prefix}Traceback (most recent call last):"] if header else []
    expected = None
    items = []
    for user, lib, folder, name, number, func, code in frames:
        path = _path(folder, name) if user else _path(lib, name)
        items.append((f'  File "{path}", line {number}, in {func}', code))
        if not is_library(path):
            expected = (path, number, func, code)
    if glued:  # a log that lost its newlines: every frame and its code on one line
        lines.append(prefix + "  ".join(f"{text}    {code}" for text, code in items))
    else:
        for text, code in items:
            lines += [f"{prefix}{text}", f"{prefix}    {code}"]
    lines.append(f"{prefix}RuntimeError: CUDA error: device-side assert triggered")
    found = pasted_frame("\n".join(lines))
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert (found["file"], found["line"], found["function"], found["code"]) == expected


def test_only_the_last_traceback_counts() -> None:
    log = (
        'Traceback (most recent call last):\n  File "old.py", line 1, in <module>\n    a()\n'
        "ValueError: x\n\nDuring handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "new.py", line 9, in step\n    b = c(d)\n'
        '  File "/usr/lib/python3/dist-packages/torch/nn/functional.py", line 2546, in embedding\n'
        "RuntimeError: CUDA error: device-side assert triggered\n"
    )
    assert pasted_frame(log) == {
        "file": "new.py",
        "line": 9,
        "function": "step",
        "code": "b = c(d)",
    }
