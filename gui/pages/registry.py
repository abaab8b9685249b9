"""The sidebar's pages as data: key, title, one-line description, icon and class (no Qt here)."""

from __future__ import annotations

from typing import NamedTuple


class PageSpec(NamedTuple):
    """A sidebar entry and its page's header; the page class is imported when first shown."""

    key: str
    title: str
    subtitle: str
    icon: str
    target: str  # "module:Class"


PAGES: tuple[PageSpec, ...] = (
    PageSpec(
        "environment",
        "Environment",
        "Is this GPU stack sane? What is installed, and what torch actually loads.",
        "environment",
        "gui.pages.environment:EnvironmentPage",
    ),
    PageSpec(
        "diagnose",
        "Diagnose",
        "Paste your error, or drop a log file. Signatures decide; the lines that matched are "
        "highlighted. CUDA errors are asynchronous: when the headline error usually masks an "
        "earlier one, you are told.",
        "diagnose",
        "gui.pages.diagnose:DiagnosePage",
    ),
    PageSpec(
        "knowledge",
        "Knowledge base",
        "Documented cuDNN/CUDA errors: why they happen, which workarounds really fix them "
        "(verified, with evidence), and what the sources got wrong.",
        "knowledge",
        "gui.pages.knowledge:KnowledgePage",
    ),
    PageSpec(
        "wizard",
        "Fix wizard",
        "Reproduce a documented error on this machine in an isolated process, try each "
        "workaround, and see which ones really fix it and what they cost.",
        "wizard",
        "gui.pages.wizard:WizardPage",
    ),
    PageSpec(
        "benchmarks",
        "Benchmarks",
        "Time cuDNN and ATen kernels on this machine (median and spread of many repeats, after "
        "warm-up) and see which settings make them fast. Hover a bar for its value.",
        "benchmarks",
        "gui.pages.benchmarks:BenchmarksPage",
    ),
    PageSpec(
        "fleet",
        "Fleet",
        "Works on node 3, fails on node 7: open a run saved by `cuda-clinic fleet --save DIR` "
        "(or any folder of env JSONs, one per node) to see the majority configuration and "
        "every node and GPU that differs.",
        "fleet",
        "gui.pages.fleet:FleetPage",
    ),
    PageSpec(
        "report",
        "Report",
        "A diagnostic report that is safe to paste publicly: secrets, user and host names, "
        "paths under your home and GPU serials are redacted and highlighted below.",
        "report",
        "gui.pages.report:ReportPage",
    ),
)

PAGE_KEYS: tuple[str, ...] = tuple(spec.key for spec in PAGES)


def page_spec(key: str) -> PageSpec:
    """The registry entry of page `key` (KeyError if there is none)."""
    for spec in PAGES:
        if spec.key == key:
            return spec
    raise KeyError(key)
