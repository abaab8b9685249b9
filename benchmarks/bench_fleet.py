"""Fleet at scale: collection wall time against the node count, and the Fleet page at 256 nodes.

A simulated cluster (tests/data/fleet/make_nodes.py: eight H200s per node, five kinds of
deviation) answers through the fake `ssh` and `srun` of tests/data/fleet/bin, each node's
`cuda-clinic env --json` printing its recorded env JSON. One node in 8 is slow (sleeps
--slow seconds), one in 32 unreachable, one in 64 answers garbage. Each size runs the real CLI
(`python -m core fleet --ssh HOSTS` and `--srun -N n`) --repeats times; the table gives the
median wall time, the sum of the nodes' own times (what one-after-another would cost), and the
growth against the smallest size. A last collection adds two hung nodes to show the per-node
timeout bounds the run.

The GUI rows open the saved 256-node run in the real Fleet page (offscreen): from the
fleet.json that `fleet --save` wrote (analysis included), and from the folder of env JSONs (the
analysis then runs on the worker thread); timed from `open_path` to the table painted.

Usage: python benchmarks/bench_fleet.py [--sizes 16,64,256] [--repeats 3] [--slow 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FLEET = REPO / "tests" / "data" / "fleet"


def make_cluster(root: Path, count: int, slow: float, hung: int = 0) -> tuple[Path, list[str]]:
    """A simulated cluster of `count` nodes under `root`; returns it and the node names."""
    shutil.copytree(FLEET / "bin", root / "bin")
    shutil.copytree(FLEET / "node-bin", root / "node-bin")
    subprocess.run(
        [sys.executable, str(FLEET / "make_nodes.py"), str(root / "nodes"), "--count", str(count)],
        check=True,
    )
    names = sorted(p.stem for p in (root / "nodes").glob("*.json"))
    lines = []
    for i, name in enumerate(names, 1):
        if i % 64 == 0:
            lines.append(f"{name} garbage")
        elif i % 32 == 0:
            lines.append(f"{name} unreachable")
        elif i % 8 == 0:
            lines.append(f"{name} sleep {slow}")
    lines += [f"{name} hang" for name in names[1 : 1 + hung]]
    (root / "behaviour.txt").write_text("\n".join(lines) + "\n")
    return root, names


def collect(
    cluster: Path, names: list[str], n: int, launcher: str, timeout: float
) -> dict[str, Any]:
    """One `fleet` run over the first `n` nodes; wall seconds and the parsed fleet JSON."""
    hosts = cluster / f"hosts-{n}"
    hosts.write_text("\n".join(names[:n]) + "\n")
    env = {
        **os.environ,
        "PATH": f"{cluster / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "FLEET_FAKE_DIR": str(cluster),
        "PYTHONPATH": str(REPO),
    }
    source = ["--ssh", str(hosts)] if launcher == "ssh" else ["--srun", "-N", str(n), "--"]
    cmd = [sys.executable, "-m", "core", "fleet", *source, "--json", "--timeout", str(timeout)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, env=env)
    wall = time.perf_counter() - start
    data = json.loads(proc.stdout)
    return {"wall": wall, "data": data}


def simulator_alone(cluster: Path, n: int) -> float:
    """Wall seconds of the fake srun running the n simulated nodes' env, output discarded: what
    simulating the nodes costs on this machine, before any collection."""
    env = {
        **os.environ,
        "FLEET_FAKE_DIR": str(cluster),
        "PATH": f"{cluster / 'node-bin'}{os.pathsep}{os.environ['PATH']}",
    }
    start = time.perf_counter()
    subprocess.run(
        [
            str(cluster / "bin" / "srun"),
            "--label",
            "-N",
            str(n),
            "sh",
            "-c",
            "cuda-clinic env --json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env=env,
    )
    return time.perf_counter() - start


def scaling(args: argparse.Namespace, cluster: Path, names: list[str]) -> list[dict[str, Any]]:
    """Median wall time per size and launcher."""
    rows = []
    for launcher in ("ssh", "srun"):
        base = None
        for n in args.sizes:
            runs = [collect(cluster, names, n, launcher, args.timeout) for _ in range(args.repeats)]
            walls = [r["wall"] for r in runs]
            data = runs[-1]["data"]
            own = sum(x.get("seconds") or 0 for x in data["nodes"])
            alone = None
            if launcher == "srun":  # its nodes all run at once on this machine's CPUs
                alone = statistics.median(simulator_alone(cluster, n) for _ in range(args.repeats))
            median = statistics.median(walls)
            base = base or (n, median)
            rows.append(
                {
                    "launcher": launcher,
                    "nodes": n,
                    "ok": data["counts"]["ok"],
                    "failed": n - data["counts"]["ok"],
                    "median_s": median,
                    "min_s": min(walls),
                    "max_s": max(walls),
                    "node_sum_s": own if launcher == "ssh" else None,
                    "simulator_s": alone,
                    "nodes_x": n / base[0],
                    "time_x": median / base[1],
                }
            )
            extra = "" if alone is None else f" (fake srun alone {alone:.2f} s)"
            print(f"  {launcher} {n}: {median:.2f} s{extra}", file=sys.stderr)
    return rows


def gui_open(saved: Path) -> dict[str, float]:
    """Seconds from FleetPage.open_path to the 256-row table painted (offscreen, real page)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(REPO))
    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from gui.context import AppContext, TargetInterpreter
    from gui.data import DataService
    from gui.errors import ErrorReporter
    from gui.pages.fleet import FleetPage
    from gui.settings import Settings
    from gui.tasks import TaskRunner
    from gui.theme import ThemeManager

    app = QApplication.instance() or QApplication(["bench"])
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        reporter = ErrorReporter(interactive=False)
        tasks = TaskRunner(on_error=reporter.report)
        settings = Settings(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        ctx = AppContext(
            settings=settings,
            tasks=tasks,
            errors=reporter,
            theme=ThemeManager(app, "light"),  # type: ignore[arg-type]
            target=TargetInterpreter(None),
            data=DataService(tasks),
        )
        for what, path in (("fleet.json", saved / "fleet.json"), ("folder", saved)):
            page = FleetPage(ctx)
            page.resize(1280, 800)
            page.show()
            loop = QEventLoop()  # an idle event loop, as the app's: no busy polling for the GIL
            page.model.modelReset.connect(loop.quit)
            QTimer.singleShot(60_000, loop.quit)
            start = time.perf_counter()
            page.open_path(str(path))
            loop.exec()
            if page.model.rowCount() == 0:
                raise RuntimeError(f"the page did not open {path}")
            page.table.viewport().grab()
            out[what] = time.perf_counter() - start
            out[f"{what} rows"] = page.model.rowCount()
            page.close()
        tasks.shutdown()
    return out


def main() -> None:
    """Run everything and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,256")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slow", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        cluster, names = make_cluster(Path(tmp) / "c", max(args.sizes), args.slow)
        rows = scaling(args, cluster, names)
        print(
            "\n| launcher | nodes | answered | failed | median s | min s | max s | "
            "sum of node times s | fake srun alone s | nodes x | time x |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            own = "—" if r["node_sum_s"] is None else f"{r['node_sum_s']:.1f}"
            alone = "—" if r["simulator_s"] is None else f"{r['simulator_s']:.2f}"
            print(
                f"| {r['launcher']} | {r['nodes']} | {r['ok']} | {r['failed']} | "
                f"{r['median_s']:.2f} | {r['min_s']:.2f} | {r['max_s']:.2f} | "
                f"{own} | {alone} | {r['nodes_x']:.0f} | {r['time_x']:.2f} |"
            )
        hung_root, hung_names = make_cluster(Path(tmp) / "h", max(args.sizes), args.slow, hung=2)
        hung = collect(hung_root, hung_names, max(args.sizes), "ssh", 3.0)
        counts = hung["data"]["counts"]
        print(
            f"\nwith 2 hung nodes, --timeout 3, {max(args.sizes)} nodes over ssh: "
            f"{hung['wall']:.2f} s wall, {counts['timeout']} timed out, {counts['ok']} answered"
        )
        saved = Path(tmp) / "saved"
        env = {
            **os.environ,
            "PATH": f"{cluster / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "FLEET_FAKE_DIR": str(cluster),
            "PYTHONPATH": str(REPO),
        }
        hosts = cluster / f"hosts-{max(args.sizes)}"
        subprocess.run(
            [sys.executable, "-m", "core", "fleet", "--ssh", str(hosts), "--save", str(saved)],
            capture_output=True,
            check=False,
            env=env,
        )
        gui = gui_open(saved)
        print("\n| Fleet page opens (offscreen) | nodes | open_path to table painted s |")
        print("|---|---:|---:|")
        for what in ("fleet.json", "folder"):
            print(f"| saved {what} | {gui[what + ' rows']:.0f} | {gui[what]:.3f} |")


if __name__ == "__main__":
    main()
