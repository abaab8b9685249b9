"""The KB entry model and the validation of one entry file (docs/kb-format.md)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from core.boundedio import MiB, read_bytes
from core.errors import InputError, KBError
from core.kb.fixes import Fix, code_variable, parse_fixes
from core.kb.saferegex import check_signature
from core.kb.scope import Scope, check_stack
from core.kb.tables import check_table, toml_fields
from core.kb.wizard_spec import WizardSpec, parse_wizard
from core.kb.wrapped import Wrapped, parse_wrapped

# cuda: CUDA runtime, driver and libraries; nccl: collectives; ext: third-party CUDA extensions
# and kernels (flash-attn, xformers, bitsandbytes, custom ops); triton: Triton and torch.compile's
# GPU toolchain.
DOMAINS = ("cuda", "nccl", "ext", "triton")
CATEGORIES = (
    "cudnn",
    "cublas",
    "loading",
    "driver",
    "install",
    "memory",
    "kernel-fault",
    "determinism",
    "rnn",
    "devices",
    "distributed",
    "performance",
    "toolchain",  # compilers and JIT: nvcc, ptxas, Triton's C and PTX builds
    "hardware",  # the GPU or its bus failed
    "crash",  # the process died without an error message (ranked below any other match)
)
CONFIDENCES = ("high", "medium", "low")
# `locates` is a diagnostic's verdict: it names the failing op or line, it does not fix the error.
VERDICTS = ("fixes", "partial", "locates", "does_not_fix", "not_applicable", "unverified")
CLAIM_VERDICTS = ("right", "partly_right", "wrong", "unverified")

ENTRY_MAX_BYTES = 1 * MiB  # the largest bundled entry is about 20 KB
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# A number followed by a percent sign ("85%", "70 %"); `x % 8` (modulo) has no digit before it.
_PERCENT = re.compile(r"\d(?:[\d.,]*\d)?\s?%")
_FENCE = re.compile(r"```.*?```", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")

_ENTRY_FIELDS: dict[str, type] = {
    "id": str,
    "title": str,
    "domain": str,
    "category": str,
    "summary": str,
    "error_codes": list,
    "signatures": list,
    "context_signatures": list,
    "masked_by": list,
    "affected_versions": str,
    "fixed_versions": str,
    "confidence": str,
    "scenario": str,
    "seed": str,
    "related": list,
    "workarounds": list,
    "dead_ends": list,
    "seed_claims": list,
    "citations": list,
    "fixes": list,
    "no_wizard": str,
    "wrapped": list,
    "wizard": dict,
}
_TABLE_LISTS = {"workarounds", "dead_ends", "seed_claims", "citations", "fixes", "wrapped"}
_REQUIRED = ("id", "title", "domain", "category", "summary", "signatures", "confidence")
# An evidence record under resources/: a wizard run's JSON (resources/evidence/README.md).
RUN_PATH = re.compile(r"evidence/[A-Za-z0-9_.-]+\.json")


@dataclass(frozen=True)
class Workaround:
    """A workaround or a dead end: what to try, what a source claims, and our verdict."""

    title: str
    verdict: str
    snippet: str = ""
    claimed_success: str = ""
    claim_source: str = ""
    evidence: tuple[str, ...] = ()
    step: str = ""
    notes: str = ""
    runs: tuple[str, ...] = ()  # evidence records (paths under resources/) that measured `step`
    scopes: tuple[Scope, ...] = ()  # derived on load: the stacks the verdict rests on


@dataclass(frozen=True)
class SeedClaim:
    """One claim of a seed document beside our verdict on it."""

    claim: str
    verdict: str
    claimed_success: str = ""
    evidence: str = ""
    scopes: tuple[Scope, ...] = ()  # derived on load: the stacks the verdict rests on


@dataclass(frozen=True)
class Citation:
    """An issue thread or document that an entry relies on, and the stack it reports on."""

    ref: str
    title: str = ""
    url: str = ""
    stack: dict[str, str] = field(default_factory=dict)  # torch, cuda, cudnn, gpu, date, ...


@dataclass(frozen=True)
class Entry:
    """One documented error: how to recognise it, why it happens, what fixes it."""

    id: str
    title: str
    domain: str
    category: str
    summary: str
    signatures: tuple[str, ...]
    confidence: str
    citations: tuple[Citation, ...]
    error_codes: tuple[str, ...] = ()
    context_signatures: tuple[str, ...] = ()
    masked_by: tuple[str, ...] = ()
    affected_versions: str = ""
    fixed_versions: str = ""
    scenario: str = ""
    seed: str = ""
    related: tuple[str, ...] = ()
    workarounds: tuple[Workaround, ...] = ()
    dead_ends: tuple[Workaround, ...] = ()
    seed_claims: tuple[SeedClaim, ...] = ()
    fixes: tuple[Fix, ...] = ()  # no-code fixes: env variables and torch switches
    no_wizard: str = ""  # why no wizard reproduces this entry here, in one line
    wrapped: tuple[Wrapped, ...] = ()  # apps' rewordings of this error (core/kb/wrapped.py)
    wizard: WizardSpec | None = None  # the repro wizard declared in the entry ([wizard])
    body: str = ""
    source: str = ""
    origin: str = "bundled"  # "bundled" | "user" (from a KB pack: the user's own entry)
    pack: str = ""  # the pack folder a user entry came from

    @property
    def is_user(self) -> bool:
        """Whether this entry is the user's own (from a `--kb-extra` pack), not a bundled one."""
        return self.origin == "user"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (tuples become lists; the wizard table as plain data)."""
        data = asdict(self)
        data["wizard"] = msgspec.to_builtins(self.wizard) if self.wizard else None
        for name in ("workarounds", "dead_ends", "seed_claims"):
            for item, obj in zip(data[name], getattr(self, name), strict=True):
                item["scopes"] = [s.to_dict() | {"text": s.text()} for s in obj.scopes]
        return data


# What each table of an entry file may hold: the record's fields, less those derived on load.
_WORKAROUND_FIELDS = toml_fields(Workaround, derived=("scopes",))
_CLAIM_FIELDS = toml_fields(SeedClaim, derived=("scopes",))
_CITATION_FIELDS = toml_fields(Citation)


class _Checker:
    """Raises KBError naming the file and the field; one instance per file."""

    def __init__(self, label: str) -> None:
        self.label = label

    def fail(self, field: str, problem: str) -> KBError:
        """The one-line error for `field` in this file."""
        return KBError(f"{self.label}: field '{field}': {problem}")

    def table(self, data: Any, fields: Mapping[str, type], prefix: str) -> dict[str, Any]:
        """Check that `data` is a table of known keys whose values have the right types."""
        return check_table(data, fields, prefix, self.fail, _TABLE_LISTS)

    def tables(
        self, items: list[Any], fields: Mapping[str, type], field: str, required: tuple[str, ...]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(prefix, table) for each table of the list `field`, type-checked, with every
        `required` key non-empty."""
        for i, raw in enumerate(items):
            prefix = f"{field}[{i}]."
            item = self.table(raw, fields, prefix)
            for name in required:
                if not item.get(name, "").strip():
                    raise self.fail(prefix + name, "is required")
            yield prefix, item

    def one_of(self, field: str, value: str, allowed: tuple[str, ...]) -> None:
        """Check an enumerated value."""
        if value not in allowed:
            raise self.fail(field, f"must be one of {', '.join(allowed)} (got {value!r})")

    def no_percent(self, field: str, text: str) -> None:
        """Reject a percentage outside a seed's or source's claim (no invented numbers)."""
        found = _PERCENT.search(text)
        if found:
            raise self.fail(
                field,
                f"percentage {found.group(0)!r} is only allowed as a quoted claim "
                "(claimed_success with claim_source, or a seed claim)",
            )


def split_front_matter(text: str, checker: _Checker) -> tuple[str, str]:
    """Split a file into its TOML front matter and its Markdown body."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "+++":
        raise checker.fail("front matter", "file must start with a '+++' line")
    for end in range(1, len(lines)):
        if lines[end].strip() == "+++":
            return "".join(lines[1:end]), "".join(lines[end + 1 :]).strip() + "\n"
    raise checker.fail("front matter", "no closing '+++' line")


def parse_entry(path: Path, root: Path, label: str | None = None, user: bool = False) -> Entry:
    """Read and validate one entry file; `root` is the KB directory (for the id-path rule);
    `user`: a file of the user's pack (its signatures run on RE2 where RE2 can run them)."""
    check = _Checker(label or str(path))
    try:  # bounded: a pack may hold a FIFO or a huge file under an .md name
        text = read_bytes(path, what="KB entry", max_bytes=ENTRY_MAX_BYTES).decode("utf-8")
    except InputError as exc:
        raise check.fail("file", f"cannot be read: {str(exc).split(': ', 1)[-1]}") from None
    except UnicodeDecodeError as exc:
        raise check.fail("file", f"cannot be read: {exc}") from None
    front, body = split_front_matter(text, check)
    try:
        data = tomllib.loads(front)
    except tomllib.TOMLDecodeError as exc:
        raise check.fail("front matter", f"invalid TOML: {exc}") from None
    check.table(data, _ENTRY_FIELDS, "")
    for name in _REQUIRED:
        value = data.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise check.fail(name, "is required")
    _check_identity(check, data, path, root)
    check.one_of("category", data["category"], CATEGORIES)
    check.one_of("confidence", data["confidence"], CONFIDENCES)
    _check_signatures(check, "signatures", data["signatures"], required=True, user=user)
    _check_signatures(check, "context_signatures", data.get("context_signatures", []), user=user)
    for name in ("title", "summary", "affected_versions", "fixed_versions"):
        check.no_percent(name, data.get(name, ""))
    check.no_percent("body", _INLINE_CODE.sub("", _FENCE.sub("", body)))
    workarounds = _workarounds(check, data.get("workarounds", []), "workarounds")
    dead_ends = _workarounds(check, data.get("dead_ends", []), "dead_ends")
    claims = _seed_claims(check, data.get("seed_claims", []))
    if claims and not data.get("seed"):
        raise check.fail("seed", "is required when seed_claims are given")
    citations = _citations(check, data.get("citations"))
    fixes = parse_fixes(data.get("fixes", []), check.fail)
    if user:
        _check_pack_fixes(check, fixes)
    wrapped = parse_wrapped(data.get("wrapped", []), check.fail)
    wizard = _wizard(check, data, fixes, workarounds, dead_ends)
    scenario = data["id"] if wizard is not None else data.get("scenario", "")
    if scenario and data.get("no_wizard"):
        raise check.fail("no_wizard", "must be empty when a scenario is given")
    return Entry(
        id=data["id"],
        title=data["title"].strip(),
        domain=data["domain"],
        category=data["category"],
        summary=data["summary"].strip(),
        signatures=tuple(data["signatures"]),
        confidence=data["confidence"],
        citations=citations,
        error_codes=tuple(data.get("error_codes", [])),
        context_signatures=tuple(data.get("context_signatures", [])),
        masked_by=tuple(data.get("masked_by", [])),
        affected_versions=data.get("affected_versions", ""),
        fixed_versions=data.get("fixed_versions", ""),
        scenario=scenario,
        seed=data.get("seed", ""),
        related=tuple(data.get("related", [])),
        workarounds=workarounds,
        dead_ends=dead_ends,
        seed_claims=claims,
        fixes=fixes,
        no_wizard=data.get("no_wizard", "").strip(),
        wrapped=wrapped,
        wizard=wizard,
        body=body,
        source=path.relative_to(root).as_posix(),
    )


def _wizard(
    check: _Checker,
    data: dict[str, object],
    fixes: tuple[Fix, ...],
    workarounds: tuple[Workaround, ...],
    dead_ends: tuple[Workaround, ...],
) -> WizardSpec | None:
    """The `[wizard]` table, validated against the entry's fixes and its items' `step` names."""
    if "wizard" not in data:
        return None
    if data.get("scenario", data["id"]) not in ("", data["id"]):
        raise check.fail("scenario", "must be the entry's own id (or empty) when it has a wizard")
    refs = [
        (f"{field}[{i}].step", item.step)
        for field, items in (("workarounds", workarounds), ("dead_ends", dead_ends))
        for i, item in enumerate(items)
        if item.step
    ]
    return parse_wizard(data["wizard"], {fix.id for fix in fixes}, refs, check.fail)


def _check_identity(check: _Checker, data: dict[str, Any], path: Path, root: Path) -> None:
    """The id is `<domain>/<slug>` and equals the file's path under the KB directory."""
    check.one_of("domain", data["domain"], DOMAINS)
    rel = path.relative_to(root).with_suffix("").as_posix()
    domain, _, slug = data["id"].partition("/")
    if domain not in DOMAINS or not _SLUG.fullmatch(slug):
        raise check.fail(
            "id", f"must be '<domain>/<slug>' with a lowercase-hyphen slug (got {data['id']!r})"
        )
    if data["id"] != rel:
        raise check.fail("id", f"must equal the file's path {rel!r} (got {data['id']!r})")
    if domain != data["domain"]:
        raise check.fail("domain", f"must match the id's domain {domain!r}")


def _check_pack_fixes(check: _Checker, fixes: tuple[Fix, ...]) -> None:
    """A pack's fix may not set a variable that changes which code runs (core/kb/fixes.py)."""
    for i, fix in enumerate(fixes):
        for name in fix.env:
            what = code_variable(name)
            if what:
                raise check.fail(
                    f"fixes[{i}].env.{name}",
                    f"changes which code runs ({what}); a fix from your own pack may not set it",
                )


def _check_signatures(
    check: _Checker, field: str, sigs: list[str], required: bool = False, user: bool = False
) -> None:
    """Every signature compiles, cannot match an empty line (it would match everything), and
    matches in bounded time (core/kb/saferegex.py; `user`: a pack's, run on RE2 when it can)."""
    if required and not sigs:
        raise check.fail(field, "needs at least one regex")
    for i, sig in enumerate(sigs):
        try:
            pattern = re.compile(sig, re.IGNORECASE)
        except re.error as exc:
            raise check.fail(f"{field}[{i}]", f"is not a valid regex: {exc}") from None
        if pattern.search("") is not None:
            raise check.fail(f"{field}[{i}]", "matches an empty line, so it would match any text")
        risk = check_signature(sig, user)
        if risk:
            raise check.fail(f"{field}[{i}]", f"could make matching hang: {risk}")


def _workarounds(check: _Checker, items: list[Any], field: str) -> tuple[Workaround, ...]:
    """Validate workarounds or dead ends (same shape)."""
    result = []
    for prefix, item in check.tables(items, _WORKAROUND_FIELDS, field, ("title", "verdict")):
        check.one_of(prefix + "verdict", item["verdict"], VERDICTS)
        if item["verdict"] != "unverified" and not item.get("evidence"):
            raise check.fail(
                prefix + "evidence", f"needs at least one item for verdict {item['verdict']!r}"
            )
        if item.get("claimed_success") and not item.get("claim_source", "").strip():
            raise check.fail(prefix + "claim_source", "is required when claimed_success is given")
        for name in ("title", "notes"):
            check.no_percent(prefix + name, item.get(name, ""))
        _check_runs(check, prefix, item)
        result.append(
            Workaround(
                **{
                    **item,
                    "evidence": tuple(item.get("evidence", [])),
                    "runs": tuple(item.get("runs", [])),
                }
            )
        )
    return tuple(result)


def _check_runs(check: _Checker, prefix: str, item: dict[str, Any]) -> None:
    """Run records are `evidence/<name>.json` and belong to a wizard step."""
    runs = item.get("runs", [])
    for i, run in enumerate(runs):
        if not RUN_PATH.fullmatch(run):
            raise check.fail(
                f"{prefix}runs[{i}]",
                f"must be 'evidence/<name>.json' under resources/ (got {run!r})",
            )
    if runs and not item.get("step", "").strip():
        raise check.fail(prefix + "step", "is required when runs are given (the measured step)")


def _seed_claims(check: _Checker, items: list[Any]) -> tuple[SeedClaim, ...]:
    """Validate the seed's claims, each beside our verdict."""
    result = []
    for prefix, item in check.tables(items, _CLAIM_FIELDS, "seed_claims", ("claim", "verdict")):
        check.one_of(prefix + "verdict", item["verdict"], CLAIM_VERDICTS)
        if item["verdict"] != "unverified" and not item.get("evidence", "").strip():
            raise check.fail(prefix + "evidence", f"is required for verdict {item['verdict']!r}")
        result.append(SeedClaim(**item))
    return tuple(result)


def _citations(check: _Checker, items: list[Any] | None) -> tuple[Citation, ...]:
    """At least one citation, each with a ref."""
    if not items:
        raise check.fail("citations", "needs at least one citation")
    result = []
    for prefix, item in check.tables(items, _CITATION_FIELDS, "citations", ("ref",)):
        stack = check_stack(item["stack"], check.fail, prefix + "stack.") if "stack" in item else {}
        result.append(Citation(**{**item, "stack": stack}))
    return tuple(result)
