"""Gather a report's parts from the producers: env detection, the KB matcher, the user database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.models import to_builtins
from core.report.door import Report
from core.report.fields import summary_rows
from core.report.model import build_report
from core.report.origin import compare
from core.report.redact import Secrets

if TYPE_CHECKING:
    from core.bench.model import Sweep
    from core.history_rows import StoredBench

LATEST_SCENARIOS = 5  # default report: the newest run of each of this many scenarios


def collect(
    *,
    python: str | None = None,
    deep: bool = False,
    environment: dict[str, object] | None = None,
    error_text: str | None = None,
    run_ids: Sequence[int] | None = None,
    bench_ids: Sequence[int] | None = None,
    try_ids: Sequence[int] | None = None,
    latest: bool = True,
    kb_extra: Sequence[str] = (),
    fleet: Mapping[str, Any] | None = None,
    secrets: Secrets | None = None,
    redact: bool = True,
    skipped: list[str] | None = None,
) -> Report:
    """Build a report from this machine: detect the env (unless given), match `error_text`,
    attach the chosen wizard/benchmark runs (or, with `latest`, the newest ones); `kb_extra`
    are the user's pack folders, matched too and labelled as the user's own; `fleet` is a
    fleet section. The model is redacted as it is built (`redact=False`: marked as not). A
    stored run that does not load is left out with a warning, its line added to `skipped`."""
    if environment is None:
        from core.env import detect

        environment = detect(python, deep=deep).to_dict()
    matches, answer = _match(error_text, kb_extra, environment) if error_text else (None, None)
    notes: list[str] = [] if skipped is None else skipped
    runs, benches = _history(run_ids, bench_ids, latest and not try_ids, notes)
    tries = _tries(try_ids or (), notes)
    charts = [c for bench in benches for c in bench_charts(bench)]
    # Without a pasted error, a `try` run made here is the error (and carries its answer).
    produced_here = error_text is None and any(t.get("answer") for t in tries)
    if produced_here:
        answer = next(t["answer"] for t in tries if t.get("answer"))
    log = error_text if error_text is not None else _try_log(tries)
    origin = compare(log, environment, produced_here=produced_here) if log else None
    return build_report(
        environment=environment,
        error_text=error_text,
        matches=matches,
        wizard_runs=[compact_run(r) for r in runs],
        try_runs=tries,
        benchmarks=benches,
        charts=charts,
        fleet=fleet,
        secrets=secrets,
        redact=redact,
        answer=answer,
        origin=origin,
    )


def _try_log(tries: Sequence[dict[str, Any]]) -> str:
    """The original run's log of the first `try` run that has one."""
    for run in tries:
        log = (run.get("original") or {}).get("log")
        if log:
            return str(log)
    return ""


def _match(
    text: str, kb_extra: Sequence[str], environment: dict[str, Any]
) -> tuple[dict[str, object], Any]:
    """The KB's matches for a pasted error and the answer (with this machine's runs)."""
    from core.answer import answer_for
    from core.kb import match, open_kb
    from core.kb.options import report_pack_errors
    from core.wizard.availability import Machine

    torch = environment.get("torch") or {}
    machine = Machine(
        torch=torch.get("version"),
        torch_cuda=torch.get("cuda"),
        gpus=len(environment.get("gpus") or []),
    )
    with open_kb(extra=list(kb_extra)) as kb:
        report_pack_errors(kb)
        found = match(text, kb).to_dict()
        return found, answer_for(text, found, kb, machine=machine)


def _tries(ids: Sequence[int], skipped: list[str]) -> list[dict[str, object]]:
    """The chosen `try` runs from the user database."""
    if not ids:
        return []
    from core.history import History
    from core.tryrun.model import TryResult

    with History.open() as history:
        tries = history.readable(lambda i: history.get_try(i, TryResult), ids)
        skipped += history.skipped
    return [to_builtins(t.settled()) for t in tries]


def _history(
    run_ids: Sequence[int] | None,
    bench_ids: Sequence[int] | None,
    latest: bool,
    skipped: list[str],
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    from core.bench.model import Sweep
    from core.history import History
    from core.wizard.record import WizardRun

    with History.open() as history:
        # A stored run that does not load is skipped with a warning naming its id.
        chosen = list(run_ids or ())
        if not run_ids and latest:
            newest: dict[str, int] = {}
            for row in history.runs(limit=200):
                if row.outcome == "skipped":  # nothing ran (older databases kept these)
                    continue
                newest.setdefault(row.scenario, row.id)
            chosen = list(newest.values())[:LATEST_SCENARIOS]
        runs = history.readable(lambda i: history.get_run(i, WizardRun), chosen)
        benches = list(bench_ids or ())
        if not bench_ids and latest and not run_ids:
            newest_bench: dict[str, int] = {}
            for bench in history.bench_runs(limit=50):
                newest_bench.setdefault(bench.kind, bench.id)
            benches = list(newest_bench.values())
        stored = history.readable(lambda i: history.get_bench(i, Sweep), benches)
        skipped += history.skipped
    return [to_builtins(r) for r in runs], [bench_payload(b) for b in stored]


def bench_payload(stored: StoredBench[Sweep]) -> dict[str, object]:
    """A stored benchmark run as the report carries it: its sweep, id, date, kind, where."""
    # A sweep keeps its own few environment facts (not the env JSON that compact_run
    # summarises, which would read "not found" for every row); "where" says them in words.
    from core.bench.recommend import environment_line

    return {
        **stored.payload.to_dict(),
        "id": stored.id,
        "created": stored.created,
        "kind": stored.kind,
        "where": environment_line(stored.payload),
    }


def bench_charts(payload: dict[str, object]) -> list[dict[str, object]]:
    """Chart entries (id, title, svg, data) for one benchmark payload, via core.bench.charts."""
    from core.bench.charts import build_charts
    from core.bench.model import Sweep
    from core.bench.svg import render_svg

    sweep = Sweep.from_dict(payload, name=f"benchmark run {payload.get('id')}")
    return [
        {"id": c.id, "title": c.title, "svg": render_svg(c), "data": c.to_dict()}
        for c in build_charts(sweep)
    ]


def compact_run(run: dict[str, object]) -> dict[str, object]:
    """A run without its full environment copy (the report has one); its key rows stay."""
    out = dict(run)
    env = out.pop("environment", None)
    if isinstance(env, dict):
        out["environment_summary"] = [list(row) for row in summary_rows(env)]
    return out
