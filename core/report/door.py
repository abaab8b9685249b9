"""The door of the report model: whatever enters a report is redacted there, once.

`build_report` (the one place a report is made) and `load_report` (a saved one) hand the model
to `admit`, so every string of every field — the pasted log, collected variables, a `try`
run's argv, folder and output, fleet host names, wizard logs, keys as well as values — has been
through the redactor before any renderer sees it. The model that comes out is a `Report`: the
same JSON-ready dict, plus, in memory only, the log of what was removed (`report.redactions`,
with the originals, for the preview's reveal; never serialised).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from core.report.redact import Secrets
from core.report.scrub import RedactionLog, redact_report


class Report(dict[str, Any]):
    """A report model that went through the door; `redactions` says what was removed where."""

    redactions: RedactionLog

    def __init__(self, data: Mapping[str, Any], redactions: RedactionLog | None = None) -> None:
        super().__init__(data)
        self.redactions = redactions if redactions is not None else RedactionLog()


def admit(
    report: Mapping[str, Any], secrets: Secrets | None = None, *, redact: bool = True
) -> Report:
    """The model redacted (`redact=False`: marked as NOT redacted, loudly, by every renderer).

    `secrets` defaults to this machine's (secret-looking variables, home, user, host name); the
    identifiers the report itself carries (GPU UUIDs and serials, fleet nodes) are always added.
    A model that went through the door already is redacted again (a field may have been added
    since); its earlier redactions are kept and counted with the new ones."""
    if not redact:
        return Report({**report, "redaction": {"enabled": False, "total": 0, "counts": {}}})
    shared, items = redact_report(report, secrets)
    earlier = report.redactions if isinstance(report, Report) else RedactionLog()
    log = RedactionLog([*earlier, *_renumbered(items, len(earlier))])
    merged = Counter(log.counts())
    before = report.get("redaction") or {}
    if before.get("enabled") and not earlier:  # a saved report redacted before it was saved
        merged.update(before.get("counts") or {})
    shared["redaction"] = {
        "enabled": True,
        "total": sum(merged.values()),
        "counts": dict(merged.most_common()),
    }
    return Report(shared, log)


def _renumbered(items: RedactionLog, offset: int) -> list[Any]:
    """New redactions numbered after the earlier ones (ids stay unique within one report)."""
    if not offset:
        return list(items)
    from dataclasses import replace

    return [replace(r, id=f"r{offset + i}") for i, r in enumerate(items, 1)]
