"""Compact Markdown summaries for pull-request comments and CI job summaries.

Every string taken from a result is escaped for GitHub-flavoured Markdown: HTML-special
characters become entities (so raw HTML never reaches the page) and Markdown punctuation is
backslash-escaped (so a name cannot break the table or inject a link).
"""

from __future__ import annotations

from audit.errors import PrivauditError
from audit.result import AuditResult
from audit.suite import SuiteResult

from .context import fmt, short, witness_test

_MD_SPECIAL = "\\`*_[]|~"


def md_escape(text: object, limit: int = 200) -> str:
    """One line of user text, safe inside Markdown (also inside a table cell)."""
    s = short(text, limit) if not isinstance(text, str) else text[:limit]
    s = " ".join(s.split())   # no newlines: one table row stays one row
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in s)


def _verdict(r: AuditResult) -> str:
    return "❌ **VIOLATION**" if r.violation else "✅ **PASS**"


def _audit_lines(r: AuditResult, heading: str = "###") -> list[str]:
    c = r.claim
    lines = [f"{heading} privaudit: {_verdict(r)} — {md_escape(r.display_name)}", ""]
    if r.violation:
        lines.append(f"The claim **{md_escape(c.describe())}** is refuted: realized ε ≥ "
                     f"**{fmt(r.epsilon_lower)}** at confidence {fmt(r.confidence)}.")
    else:
        lines.append(f"No violation of **{md_escape(c.describe())}** found: ε lower bound "
                     f"{fmt(r.epsilon_lower)}; this budget could certify at most ε = "
                     f"{fmt(r.max_certifiable_epsilon)}.")
    lines += ["", "| | |", "|---|---|",
              f"| claimed (ε, δ) | ({fmt(c.epsilon)}, {fmt(c.delta)}) |",
              f"| ε lower bound | {fmt(r.epsilon_lower)} |",
              f"| δ lower bound at claimed ε | {fmt(r.delta_lower)} |",
              f"| ceiling (certifiable ε) | {fmt(r.max_certifiable_epsilon)} |",
              f"| confidence, correction | {fmt(r.confidence)}, {md_escape(r.correction)} over "
              f"{r.tests} test(s) |",
              f"| runs per side (explore / confirm) | {fmt(r.explore_runs)} / {fmt(r.confirm_runs)} |",
              f"| seed | {r.seed} |"]
    seq = getattr(r, "sequential", None)
    if seq:
        if seq.get("anytime_valid", True):
            how, valid = "anytime-valid", "confidence-sequence bounds, valid at any stopping time"
        else:
            how, valid = ("final analysis", "bounds of the final fixed-n analysis, valid at the "
                          "planned budget only")
        lines.append(f"| sequential ({how}) | stopped ({md_escape(seq.get('stopped'))}) after "
                     f"{fmt(seq.get('runs_per_side'))} of {fmt(seq.get('budget_per_side'))} runs per "
                     f"side; {valid} |")
    if getattr(r, "group", 1) > 1:
        lines.append(f"| group distance | k = {r.group}: the claim above is the group claim (k ε, δ_k); "
                     f"per individual ε ≥ {fmt(r.epsilon_lower / r.group)} |")
    pk = r.search.get("packing") if isinstance(r.search, dict) else None
    if isinstance(pk, dict):
        lines.append(f"| packing family | {md_escape(pk.get('name'))}: {pk.get('datasets')} datasets, "
                     f"up to {pk.get('k_max')} moves apart; via dataset {pk.get('pivot')}: "
                     f"Σ p_j ≥ {fmt(pk.get('sum_other_p_lo'))}, 1 − p_i ≤ "
                     f"{fmt(pk.get('one_minus_p_pivot_hi'))} |")
    t = witness_test(r)
    w = r.witness
    if w is not None:
        where = f"pair #{w.pair_index}, {md_escape(w.direction)}, event {md_escape(w.event_text, 120)}"
        if w.differing:
            where += f", differing record(s) {', '.join(str(i) for i in w.differing[:5])}"
        lines.append(f"| witness | {where} |")
    if t is not None:
        lines.append(f"| counts (p side / q side) | {fmt(t.k_p)}/{fmt(t.n_p)} vs "
                     f"{fmt(t.k_q)}/{fmt(t.n_q)} → p_lo = {fmt(t.p_lo)}, q_hi = {fmt(t.q_hi)} |")
    commit = r.versions.get("git_commit") if isinstance(r.versions, dict) else None
    if not commit and isinstance(r.versions, dict) and r.versions.get("code_sha256"):
        commit = f"none (source sha256 {r.versions['code_sha256']})"
    pv = r.versions.get("privaudit") if isinstance(r.versions, dict) else None
    if commit or pv:
        lines.append(f"| provenance | privaudit {md_escape(pv or '?')}"
                     f"{', commit ' + md_escape(commit) if commit else ''} |")
    if r.notes:
        lines += [""] + [f"- note: {md_escape(n, 400)}" for n in r.notes]
    return lines


def _suite_lines(s: SuiteResult) -> list[str]:
    failed = sum(not e.ok for e in s.entries)
    head = "✅ **OK**" if s.ok else "❌ **FAILED**"
    lines = [f"### privaudit suite: {head} — {md_escape(s.name)}", "",
             f"{len(s.entries)} audit(s), {failed} expectation(s) not met; suite-wide confidence "
             f"{fmt(s.confidence)} ({md_escape(s.correction)}), seed {s.seed}.", "",
             "| | name | algorithm | expected | found | claimed ε | ε lower | ceiling |",
             "|---|---|---|---|---|---|---|---|"]
    for e in s.entries:
        mark = "✅" if e.ok else "❌"
        if e.regression:
            mark += " regression"
        if e.result is None:
            nums = f"error: {md_escape(e.error or 'did not run', 120)} | | "
        else:
            r = e.result
            nums = (f"{fmt(r.claim.epsilon)} | {fmt(r.epsilon_lower)} | "
                    f"{fmt(r.max_certifiable_epsilon)}")
        lines.append(f"| {mark} | {md_escape(e.name)} | {md_escape(e.algorithm)} | {e.expect} | "
                     f"{e.status} | {nums} |")
    bad = [e for e in s.entries if not e.ok and e.result is not None and e.result.witness is not None]
    for e in bad[:5]:
        w = e.result.witness
        lines += ["", f"- **{md_escape(e.name)}**: pair #{w.pair_index}, {md_escape(w.direction)}, "
                      f"event {md_escape(w.event_text, 120)}"]
    return lines


def render_markdown(obj: AuditResult | SuiteResult) -> str:
    """A compact Markdown summary of an audit result or a suite (ends with a newline)."""
    if isinstance(obj, AuditResult):
        return "\n".join(_audit_lines(obj)) + "\n"
    if isinstance(obj, SuiteResult):
        return "\n".join(_suite_lines(obj)) + "\n"
    raise PrivauditError(f"expected an AuditResult or a SuiteResult, got {type(obj).__name__}")


__all__ = ["render_markdown", "md_escape"]
