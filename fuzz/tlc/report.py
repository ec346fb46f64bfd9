"""What ``tomkit tlc`` prints of a TLC run, and the counterexample trace it writes and has
the trace checker confirm (:mod:`~tomkit.fuzz.tlc.trace`)."""

from __future__ import annotations

__all__ = ["behaviour_lines", "render", "write_and_check"]


def write_and_check(result, trace_path: str):
    """Write the counterexample trace and run the trace checker on it."""
    from tomkit.fuzz.tlc.trace import check_counterexample, write_counterexample

    write_counterexample(result, trace_path)
    return check_counterexample(trace_path, result.violated)


def render(result, trace_path: str | None, confirmation) -> str:
    """The text report: header, counts, verdict, the behaviour's deliveries, the trace."""
    lines = [f"tomkit tlc: {result.spec} with {result.config} (TLC {result.version})"]
    lines.append(result.summary())
    if result.status == "violation" and result.behaviour:
        lines.append("behaviour (delivery sequences after each step):")
        lines.extend("  " + s for s in behaviour_lines(result))
        if result.loops_to is not None:
            lines.append(f"  ... then loops back to state {result.loops_to} forever")
    if trace_path is not None:
        lines.append(f"counterexample trace written to {trace_path}")
    if confirmation is not None:
        if confirmation.confirmed:
            lines.append(f"tomkit check on it: {confirmation.property} violated: "
                         f"{confirmation.explanation}")
        elif confirmation.property is None:
            lines.append(f"tomkit check on it: no checker property states {result.violated}; "
                         f"violated: {', '.join(confirmation.violated) or 'none'}")
        else:
            lines.append(f"tomkit check on it: {confirmation.property} NOT violated "
                         f"(violated: {', '.join(confirmation.violated) or 'none'})")
            if result.violated == "StrongTotalOrder":
                lines.append("  (the prefix form fails as soon as two delivery sequences "
                             "diverge, before a finite trace shows an inversion or a gap; "
                             "check GapFreeTotalOrder for a trace-checkable counterexample)")
    return "\n".join(lines)


def behaviour_lines(result) -> list[str]:
    from tomkit.fuzz.tlc.trace import message_name, process_name
    from tomkit.fuzz.tlc.values import Function

    out = []
    for st in result.behaviour:
        d = st.values.get("delivered")
        if isinstance(d, tuple):
            items = [(process_name(i + 1), s) for i, s in enumerate(d)]
        elif isinstance(d, Function):
            items = [(process_name(k), s) for k, s in d.items()]
        else:
            items = []
        text = " ".join(f"{p}=[{','.join(message_name(m) for m in s)}]" for p, s in items)
        out.append(f"{st.index:>3} {st.action:<22} {text}")
    return out
