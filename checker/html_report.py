"""The check report as one self-contained HTML page.

What people would rather see than read: the verdict, the table of properties (holds,
violated, unknown per property), the table of guarantee profiles (``profiles.py``), the
space-time diagram of each witness drawn (``pictures.py``, inline SVG), and the latency
distribution (the PNG of ``report.plot_latency``, embedded). No scripts and no external
resources, so the file can be mailed or attached to a bug as it is.
"""

from __future__ import annotations

import base64
import os
import tempfile
from html import escape

from tomkit.checker.engine import CheckReport
from tomkit.checker.report import overall, plot_latency
from tomkit.checker.result import Verdict

__all__ = ["render"]

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: left; }
td.n { text-align: right; }
.violated { color: #b00020; font-weight: bold; }
.satisfied, .holds { color: #1b7f3b; }
.unknown { color: #8a6d00; }
figure { margin: 1.5em 0; }
figcaption { font-weight: bold; margin-bottom: 0.4em; }
"""


def render(report: CheckReport, pictures: list[tuple[str, str, str]]) -> str:
    """The page: ``pictures`` are (trace, property, SVG text) of the witnesses drawn."""
    verdict = overall(report)
    cls = "violated" if report.violated else "holds"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>tomkit check report</title>", f"<style>{STYLE}</style></head><body>",
           "<h1>tomkit check</h1>",
           f'<p id="verdict" class="{cls}">verdict: {escape(verdict)}</p>',
           f"<p>{len(report.files)} file(s), {len(report.outcomes)} trace(s), "
           f"{report.n_accepted:,} records accepted, {report.n_rejected:,} rejected.</p>"]
    if report.guarantee:
        out.append(f"<p>guarantee judged: <b>{escape(report.guarantee)}</b></p>")
    out.append('<h2>Properties</h2><table id="properties"><tr><th>property</th>'
               "<th>holds</th><th>violated</th><th>unknown</th></tr>")
    for name in report.properties:
        c = report.counts[name]
        judged = report.judged is None or name in report.judged
        label = escape(name) + ("" if judged else " <small>(for the profile table)</small>")
        out.append(f"<tr><td>{label}</td><td class=n>{c[Verdict.HOLDS]}</td>"
                   f'<td class="n{" violated" if c[Verdict.VIOLATED] else ""}">'
                   f"{c[Verdict.VIOLATED]}</td><td class=n>{c[Verdict.UNKNOWN]}</td></tr>")
    out.append("</table>")
    if report.profiles:
        out.append('<h2>Guarantees (strongest first)</h2><table id="profiles"><tr>'
                   "<th>profile</th><th>verdict</th><th>ruled out by</th></tr>")
        for r in report.profiles:
            why = ""
            if r.verdict == "violated":
                why = (f"{escape(r.property)} in trace {escape(r.trace)}: "
                       f"{escape(r.explanation)}")
            mark = " (judged)" if r.profile.name == report.guarantee else ""
            out.append(f'<tr><td title="{escape(r.profile.title)}">'
                       f"{escape(r.profile.name)}{mark}</td>"
                       f'<td class="{r.verdict}">{r.verdict}</td><td>{why}</td></tr>')
        out.append("</table>")
    if pictures:
        out.append("<h2>Witnesses</h2>")
        for trace, prop, svg in pictures:
            body = svg.split("\n", 1)[1] if svg.startswith("<?xml") else svg
            out.append(f'<figure data-trace="{escape(trace)}" data-property="{escape(prop)}">'
                       f"<figcaption>{escape(prop)} in trace {escape(trace)}</figcaption>"
                       f"{body}</figure>")
    png = _latency_png(report)
    if png is not None:
        out.append('<h2>Latency</h2><img id="latency" alt="latency distribution" '
                   f'src="data:image/png;base64,{png}">')
    if report.rejected:
        out.append(f"<h2>Rejected records ({report.n_rejected:,})</h2><ul>")
        out += [f"<li>{escape(str(e))}</li>" for e in report.rejected[:50]]
        out.append("</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _latency_png(report: CheckReport) -> str | None:
    fd, path = tempfile.mkstemp(suffix=".png")
    os.close(fd)
    try:
        if not plot_latency(report, path):
            return None
        with open(path, "rb") as f:
            return base64.b64encode(f.read()).decode()
    finally:
        os.remove(path)
