"""Report details users read: the variant in every headline, witness query labels, folded search
histories, no raw nulls or JSON dicts in cells."""

from __future__ import annotations

import re

import algorithms
from audit import audit, audit_learner
from audit.budget import Budget
from audit.request import AuditRequest, run_request
from privaudit.resolve import build_target
from reports import render_html, render_markdown
from reports.context import short


def test_variant_in_console_headline_html_title_and_markdown():
    t = build_target("dp-rr", raw_params={"variant": "bv-rr-eps"})
    r = run_request(AuditRequest(t.obj, budget=Budget(explore_runs=1000, confirm_runs=1000),
                                 label=t.label, params=t.params))
    assert r.summary().startswith("dp-rr [bv-rr-eps]: ")
    html = render_html(r)
    assert re.search(r"<title>[^<]*dp-rr \[bv-rr-eps\]</title>", html)
    assert "dp-rr \\[bv-rr-eps\\]" in render_markdown(r).splitlines()[0]
    plain = audit(algorithms.get("dp-rr"), explore_runs=1000, confirm_runs=1000)
    assert plain.summary().startswith("dp-rr: ")


def test_witness_queries_are_labelled_by_their_index_in_the_query_list():
    r = audit_learner(algorithms.get("df-cor1"), explore_runs=2000, confirm_runs=2000, seed=0)
    t = next(t for t in r.confirmed if t.pair_index == r.witness.pair_index
             and t.event_text == r.witness.event_text)
    t.query_indices = [7]           # as if the event looked at query 7 of the pair's list
    html = render_html(r)
    i = html.find("Query point")
    assert i > 0 and '<td class="num">7</td>' in html[i:i + 400]


def test_long_search_history_is_sorted_and_folded():
    r = audit(algorithms.get("dp-rr"), explore_runs=1000, confirm_runs=1000)
    r.search = {"history": [{"round": i, "estimated_epsilon": i / 10, "note": None}
                            for i in range(40)]}
    html = render_html(r)
    assert "25 more row(s)" in html and "<details>" in html
    first = html[html.find("<th>estimated_epsilon</th>"):]
    assert re.search(r"<td class=\"mono\">39</td><td class=\"mono\">3\.9</td>", first)
    assert "null" not in html.split("Search")[1].split("Parameters")[0]


def test_cells_have_no_raw_nulls_or_json_dicts():
    assert short(None) == "—"
    assert short({"type": "codes", "codes": [1], "columns": None}) == "type = codes; codes = [1]; columns = —"


def test_plots_keep_the_ceiling_in_view_and_labels_off_the_claim_line(monkeypatch):
    import numpy as np

    import reports.plots as P
    from reports.context import witness_test
    r = audit(algorithms.get("dp-rr"), explore_runs=2000, confirm_runs=20000, seed=0)
    t = witness_test(r)
    figs = []
    monkeypatch.setattr(P, "_svg", lambda fig: figs.append(fig) or "")
    pts = P.budget_points(t, r.alpha_per_bound, r.claim.epsilon, r.claim.delta, t.n_p)
    P.budget_curve(pts, r.claim.epsilon, t.n_p, t.epsilon_lower, r.violation)
    ceiling = np.asarray(pts["ceiling"], dtype=float)
    assert figs[0].axes[0].get_ylim()[1] >= np.nanmax(ceiling[np.isfinite(ceiling)])
    P.intervals(t, r.claim.epsilon, r.claim.delta, r.alpha_per_bound)
    texts = {a.get_text(): a for a in figs[1].axes[0].texts}
    p_label = next(a for k, a in texts.items() if k.startswith("p_lo"))
    assert p_label.get_ha() in ("left", "right")          # beside the claim's line, not on it
    claim_label = next(a for k, a in texts.items() if k.startswith("claim allows"))
    assert claim_label.xy[1] < 0                            # below the q row, clear of p_lo's
