---------------------------------- MODULE QoS ----------------------------------
(***************************************************************************)
(* The QoS-preserving totally ordered multicast of Bar-Joseph, Keidar,    *)
(* Anker and Lynch (shared/papers/003_cc1bbd4efae17007.txt): its ordering *)
(* layer in discrete time, after the paper's sections on the static case  *)
(* and on process failures, joins and leaves (the OCR loses the section   *)
(* numbers, so they are cited by title; the reading aid                   *)
(* shared/briefs/001-003.md, part 2.2, reconstructs the lost symbols and  *)
(* numbers its decisions B1-B8; docs/qos.md lists those the Python model  *)
(* took).                                                                  *)
(*                                                                         *)
(* Time. `now` is real time in integer ticks. Process p's clock reads     *)
(* now + off[p], off[p] in 0..Eps, so two clocks differ by at most Eps    *)
(* (the paper's eps: each clock within eps/2 of a real time shifted by    *)
(* eps/2, which changes nothing since only clock differences and slot     *)
(* boundaries matter). Slot s covers local times [s*SlotLen,               *)
(* (s+1)*SlotLen). Delay is delta, the bound on every message's delay.     *)
(*                                                                         *)
(* The protocol, as modelled:                                              *)
(*  - End of slot (static case): when p's clock reads (s+1)*SlotLen, the  *)
(*    ordering layer calls FEC-end-slot; the slot's last block, with the   *)
(*    EOS bit, leaves then. FEC abstraction: a sender's slot-s messages   *)
(*    and its EOS travel as one batch per receiver, which arrives whole   *)
(*    within Delay of the end of slot, or, only if the sender crashes,    *)
(*    never. The application hands at most one message to a slot, <<p, s>>.*)
(*  - Delivery (static case): slot by slot; within slot s the senders in   *)
(*    index order 1..N; q delivers sender k's slot-s messages when k's    *)
(*    batch is in, then moves to k+1; a sender q does not wait for in s  *)
(*    is skipped.                                                          *)
(*  - Failure: q times k out when its clock reads (s+1)*SlotLen + Delay + *)
(*    Eps and k's slot-s batch is not surely in ("waits more than         *)
(*    delta+eps": a batch due at time t arrives before a timer firing at  *)
(*    t); q skips k in slot s and in every later slot until k rejoins.    *)
(*  - Join (B2): r wakes, computes s_j = floor(C_r/SlotLen) +             *)
(*    ceil((Delay+Eps)/SlotLen) + 1 and multicasts join(r, s_j) to the    *)
(*    processes in the group; each records it on receipt and waits for r  *)
(*    in every slot >= s_j. r sends and delivers from s_j on, and in its  *)
(*    join window treats every process of the universe as active (until   *)
(*    its EOS or a timeout).                                               *)
(*  - B5 [FIX], the join window: read literally the window is [s_j] only, *)
(*    and a joiner r whose clock is ahead, joining just before p wakes,   *)
(*    gets a slot s_r > s_j(p) that p neither hears of nor waits for:     *)
(*    QoS_LiteralJoin.tla. The safe window, as in model/slots.py, is      *)
(*    [s_j, s_j + ceil(Eps/SlotLen) + 1]; a timeout inside it does not    *)
(*    exclude a process from the window's later slots.                     *)
(*                                                                         *)
(* Decisions where the paper is silent:                                    *)
(*  - a join reaches the processes in the group when it is sent (a       *)
(*    process that wakes later does not get it: the adversarial reading);  *)
(*  - a crash may lose the crashed sender's batches still in flight, to   *)
(*    any subset of the receivers (a crashing sender escapes the burst-   *)
(*    loss bound, B4), so correct processes may disagree on its messages;  *)
(*  - `faulty` is the environment's choice, made at the start, of the     *)
(*    process that may crash (a prophecy: the refinement mapping below    *)
(*    hides a faulty sender's messages, which 003 lets processes disagree *)
(*    on, and must not change its mind when the crash comes);             *)
(*  - process steps are urgent: time advances only when no process has an *)
(*    end of slot, a join message due, a delivery of a batch surely in, a *)
(*    skip or a timeout to do. A batch arrives within [0, Delay] (Early)   *)
(*    or takes Delay exactly; its arrival is observable only when its     *)
(*    receiver waits for it, so it is not a step of its own.               *)
(***************************************************************************)
EXTENDS Naturals, Integers, Sequences, FiniteSets

CONSTANTS
    N,           \* processes 1..N, the universe; the index gives the delivery order
    Members,     \* the processes in the group at time 0 (joined before the run)
    Joiners,     \* the processes that may join during the run
    MaxJoins,    \* how many of them may
    MayCrash,    \* the processes that may crash
    MaxCrashes,  \* how many may (that many are chosen as faulty at the start)
    LastSlot,    \* slots 0..LastSlot
    SlotLen,     \* the paper's slot length, in ticks
    Delay,       \* delta: every message arrives within Delay ticks
    Eps,         \* eps: two clocks differ by at most Eps ticks
    Sends,       \* whether a sender has a message in a slot: {TRUE} (always) or BOOLEAN
    Early        \* may a batch arrive before its bound (TRUE), or does each take Delay exactly

ASSUME /\ N \in Nat \ {0} /\ SlotLen \in Nat \ {0} /\ Delay \in Nat \ {0} /\ Eps \in Nat
       /\ Members \subseteq 1..N /\ Joiners \subseteq (1..N) \ Members
       /\ MayCrash \subseteq 1..N /\ LastSlot \in Nat
       /\ Sends \subseteq BOOLEAN /\ Sends # {} /\ Early \in BOOLEAN

Proc == 1..N
Slot == 0..LastSlot
Msg == Proc \X Slot          \* <<p, s>>: the message p multicasts in slot s
Sender(m) == m[1]
SlotOf(m) == m[2]
Inf == LastSlot + 1          \* "never" as a slot number
None == -1

CeilDiv(a, b) == (a + b - 1) \div b

\* the join slot of a process whose clock reads c (003 section 3.3, joins; B2)
JoinSlot(c) == c \div SlotLen + CeilDiv(Delay + Eps, SlotLen) + 1
\* the failure timeout after the local end of a slot (003 section 3.3, process failures)
TimeoutLen == Delay + Eps
\* the join windows (B5)
SafeWindow(sj) == sj .. sj + CeilDiv(Eps, SlotLen) + 1
LiteralWindow(sj) == sj .. sj

\* real time runs until every process can have finished the last slot
Horizon == (LastSlot + 1) * SlotLen + Delay + Eps + 1

(* One instant of real time: first the ends of slot due (lowest index    *)
(* first) and the join messages due; then the processes' steps, lowest    *)
(* index first; then time may advance (Tick). Joins and crashes happen at *)
(* the end of an instant (a crash also just before an end of slot). The  *)
(* processes' steps are independent of one another (each reads the       *)
(* network and writes only its own variables), so taking them in index   *)
(* order loses no behaviour and spares TLC their interleavings.            *)
VARIABLES
    now,         \* real time
    off,         \* off[p]: p's clock reads now + off[p]
    faulty,      \* the processes that may crash in this run (chosen at the start)
    crashed,     \* the processes that crashed
    awake,       \* the processes that are or were in the group (Members, joiners once joined)
    start,       \* start[p]: p's first slot (0 for Members, s_j for a joiner)
    nextEnd,     \* nextEnd[p]: the next slot p ends (calls FEC-end-slot for)
    broadcast,   \* the messages multicast so far
    sentAt,      \* sentAt[k][s]: the real time k's slot-s batch left (None: not yet)
    net,         \* net[k][s][q]: k's slot-s batch to q: "none" (not sent to q), "fly", "lost"
    jsent,       \* jsent[r]: when r's join left (None: not joined)
    jnet,        \* jnet[r][q]: r's join message to q: "none", "fly", "got"
    from,        \* from[q][k]: q waits for k in every slot >= from[q][k] (Inf: never)
    cs,          \* cs[q]: the slot q is delivering
    ct,          \* ct[q]: the sender whose turn it is in slot cs[q]
    delivered    \* delivered[q]: q's delivery sequence

vars == <<now, off, faulty, crashed, awake, start, nextEnd, broadcast, sentAt,
          net, jsent, jnet, from, cs, ct, delivered>>

Local(p) == now + off[p]
Alive(p) == p \in awake /\ p \notin crashed
\* q is still delivering
Running(q) == Alive(q) /\ cs[q] <= LastSlot

TypeOK ==
    /\ now \in 0..Horizon
    /\ off \in [Proc -> 0..Eps]
    /\ faulty \subseteq MayCrash /\ crashed \subseteq faulty
    /\ awake \subseteq Proc
    /\ start \in [Proc -> 0..Inf]
    /\ nextEnd \in [Proc -> 0..Inf]
    /\ broadcast \subseteq Msg
    /\ sentAt \in [Proc -> [Slot -> {None} \cup 0..Horizon]]
    /\ net \in [Proc -> [Slot -> [Proc -> {"none", "fly", "lost"}]]]
    /\ jsent \in [Proc -> {None} \cup 0..Horizon]
    /\ jnet \in [Proc -> [Proc -> {"none", "fly", "got"}]]
    /\ from \in [Proc -> [Proc -> 0..Inf]]
    /\ cs \in [Proc -> 0..Inf]
    /\ ct \in [Proc -> Proc]
    /\ delivered \in [Proc -> Seq(Msg)]

Init ==
    /\ now = 0
    \* only clock differences matter: the least offset is 0
    /\ off \in {o \in [Proc -> 0..Eps] : \E p \in Proc : o[p] = 0}
    /\ faulty \in {F \in SUBSET MayCrash : Cardinality(F) = MaxCrashes}
    /\ crashed = {}
    /\ awake = Members
    /\ start = [p \in Proc |-> IF p \in Members THEN 0 ELSE Inf]
    /\ nextEnd = start
    /\ broadcast = {}
    /\ sentAt = [k \in Proc |-> [s \in Slot |-> None]]
    /\ net = [k \in Proc |-> [s \in Slot |-> [q \in Proc |-> "none"]]]
    /\ jsent = [r \in Proc |-> None]
    /\ jnet = [r \in Proc |-> [q \in Proc |-> "none"]]
    /\ from = [q \in Proc |-> [k \in Proc |->
                 IF q \in Members /\ k \in Members THEN 0 ELSE Inf]]
    /\ cs = start
    /\ ct = [q \in Proc |-> 1]
    /\ delivered = [q \in Proc |-> <<>>]

-----------------------------------------------------------------------------
(* When things are due.                                                   *)

EndDue(p) == Alive(p) /\ nextEnd[p] <= LastSlot /\ Local(p) >= (nextEnd[p] + 1) * SlotLen

\* A join message arrives at the bound: when it arrives is unobservable (every
\* process has it before its clock reaches the join slot: JoinBeforeSlot), so the
\* latest arrival stands for all.
JoinDue(r, q) == jnet[r][q] = "fly" /\ jsent[r] + Delay <= now

\* k's slot-s batch is surely at q: it left at least Delay ago and was not lost
Arrived(k, s, q) == net[k][s][q] = "fly" /\ sentAt[k][s] + Delay <= now
\* ... or may be: it left, less than Delay ago
InFlight(k, s, q) == net[k][s][q] = "fly" /\ now < sentAt[k][s] + Delay

\* q waits for k in slot s: in q's join window every process, else those q knows
Waits(q, k, s, Win(_)) ==
    \/ q \in Joiners /\ s \in Win(start[q])
    \/ from[q][k] <= s

\* after sender ct[q]'s turn: the next sender, or the next slot
Advance(q) ==
    IF ct[q] = N
    THEN /\ cs' = [cs EXCEPT ![q] = @ + 1]
         /\ ct' = [ct EXCEPT ![q] = 1]
    ELSE /\ ct' = [ct EXCEPT ![q] = @ + 1]
         /\ UNCHANGED cs

\* q's timer for k in slot s fires at local (s+1)*SlotLen + to if k's batch is not
\* surely in ("waits more than delta+eps": a batch due now arrives first)
TimeoutDue(q, to, Win(_)) ==
    LET k == ct[q]
        s == cs[q]
    IN /\ Running(q)
       /\ Waits(q, k, s, Win)
       /\ ~Arrived(k, s, q)
       /\ Local(q) >= (s + 1) * SlotLen + to

\* q has a step it must take now (skip, a batch surely in, a timeout)
Forced(q, to, Win(_)) ==
    /\ Running(q)
    /\ \/ ~Waits(q, ct[q], cs[q], Win)
       \/ Arrived(ct[q], cs[q], q)
       \/ TimeoutDue(q, to, Win)

\* the environment is done for this instant
EnvDone == (\A p \in Proc : ~EndDue(p)) /\ \A r, q \in Proc : ~JoinDue(r, q)

\* q may step: the environment is done, and so are the processes before q
MyTurn(q, to, Win(_)) ==
    /\ EnvDone
    /\ \A p \in 1..(q - 1) : ~Forced(p, to, Win)

\* the end of the instant: nothing is due
Quiet(to, Win(_)) == EnvDone /\ \A q \in Proc : ~Forced(q, to, Win)

-----------------------------------------------------------------------------
(* The environment: ends of slot, joins, crashes.                         *)

\* p's end of slot s (003 section 3.2, static case): its batch, with its message if it has one, leaves
\* for every process in the group (a joiner discards the slots before its join
\* slot, so they are not sent to it). Lowest index first.
EndSlot(p) ==
    LET s == nextEnd[p] IN
    /\ EndDue(p)
    /\ \A p2 \in 1..(p - 1) : ~EndDue(p2)
    /\ \E withMsg \in Sends :
          broadcast' = IF withMsg THEN broadcast \cup {<<p, s>>} ELSE broadcast
    /\ sentAt' = [sentAt EXCEPT ![p][s] = now]
    /\ net' = [net EXCEPT ![p][s] = [q \in Proc |->
                 IF Alive(q) /\ start[q] <= s THEN "fly" ELSE "none"]]
    /\ nextEnd' = [nextEnd EXCEPT ![p] = s + 1]
    /\ UNCHANGED <<now, off, faulty, crashed, awake, start, jsent, jnet, from, cs, ct,
                   delivered>>

\* r wakes and joins at slot s_j, computed from its own clock (B2), multicasting
\* join(r, s_j) to the processes in the group; joins whose slot lies beyond the
\* model's last slot are not modelled
Join(r, to, Win(_), JS(_)) ==
    LET sj == JS(Local(r)) IN
    /\ Quiet(to, Win)
    /\ r \in Joiners /\ r \notin awake
    /\ Cardinality(awake \cap Joiners) < MaxJoins
    /\ sj <= LastSlot
    /\ awake' = awake \cup {r}
    /\ start' = [start EXCEPT ![r] = sj]
    /\ nextEnd' = [nextEnd EXCEPT ![r] = sj]
    /\ cs' = [cs EXCEPT ![r] = sj]
    /\ jsent' = [jsent EXCEPT ![r] = now]
    /\ jnet' = [jnet EXCEPT ![r] = [q \in Proc |-> IF Alive(q) /\ q # r THEN "fly" ELSE "none"]]
    /\ UNCHANGED <<now, off, faulty, crashed, broadcast, sentAt, net, from, ct,
                   delivered>>

\* q records r's join: it waits for r from slot start[r] on (003 section 3.3, joins)
JoinArrive(r, q) ==
    /\ JoinDue(r, q)
    /\ jnet' = [jnet EXCEPT ![r][q] = "got"]
    /\ from' = [from EXCEPT ![q][r] = start[r]]
    /\ UNCHANGED <<now, off, faulty, crashed, awake, start, nextEnd, broadcast,
                   sentAt, net, jsent, cs, ct, delivered>>

\* p crashes; its batches still in flight are lost to the receivers in L (a
\* crashing sender escapes the burst-loss bound). Only at an end of slot of p:
\* before it (no batch for the slot) or after it (a batch in flight). A crash at
\* another time is seen by the others exactly as one at p's next end of slot, and
\* only shortens p's own delivery sequence, a prefix of what it would deliver.
Crash(p, to, Win(_)) ==
    /\ p \in faulty /\ Alive(p)
    /\ \/ EndDue(p) /\ \A p2 \in 1..(p - 1) : ~EndDue(p2)
       \/ Quiet(to, Win) /\ \E s \in Slot, q \in Proc : InFlight(p, s, q)
    /\ crashed' = crashed \cup {p}
    /\ \E L \in SUBSET Proc :
          net' = [k \in Proc |-> [s \in Slot |-> [q \in Proc |->
                    IF k = p /\ q \in L /\ InFlight(k, s, q) THEN "lost" ELSE net[k][s][q]]]]
    /\ UNCHANGED <<now, off, faulty, awake, start, nextEnd, broadcast, sentAt, jsent,
                   jnet, from, cs, ct, delivered>>

-----------------------------------------------------------------------------
(* The processes: delivery, parameterised by the timeout and the join     *)
(* window so that the broken variants reuse them (so are Join and Crash,  *)
(* which wait for the end of the instant).                                 *)

\* k's slot-s batch is in at q (surely, or it happens to be early): deliver k's
\* message, if it sent one; q now knows k is active (what a joiner learns in its
\* window). The batch's arrival is not a step of its own: it is observable only
\* here, when q waits for it.
DeliverTurn(q, to, Win(_)) ==
    LET k == ct[q]
        s == cs[q]
    IN /\ MyTurn(q, to, Win)
       /\ Running(q)
       /\ Waits(q, k, s, Win)
       /\ Arrived(k, s, q) \/ (Early /\ InFlight(k, s, q))
       /\ delivered' = IF <<k, s>> \in broadcast
                       THEN [delivered EXCEPT ![q] = Append(@, <<k, s>>)]
                       ELSE delivered
       /\ from' = [from EXCEPT ![q][k] = IF @ <= s THEN @ ELSE s]
       /\ Advance(q)
       /\ UNCHANGED <<now, off, faulty, crashed, awake, start, nextEnd, broadcast,
                      sentAt, net, jsent, jnet>>

\* k is detected failed: skipped in s and, outside the join window, in later slots
\* until it rejoins (a join recorded for a later slot stands)
TimeoutTurn(q, to, Win(_)) ==
    LET k == ct[q]
        s == cs[q]
    IN /\ MyTurn(q, to, Win)
       /\ TimeoutDue(q, to, Win)
       /\ from' = [from EXCEPT ![q][k] = IF @ <= s THEN Inf ELSE @]
       /\ Advance(q)
       /\ UNCHANGED <<now, off, faulty, crashed, awake, start, nextEnd, broadcast,
                      sentAt, net, jsent, jnet, delivered>>

\* q does not wait for k in this slot
SkipTurn(q, to, Win(_)) ==
    /\ MyTurn(q, to, Win)
    /\ Running(q)
    /\ ~Waits(q, ct[q], cs[q], Win)
    /\ Advance(q)
    /\ UNCHANGED <<now, off, faulty, crashed, awake, start, nextEnd, broadcast,
                   sentAt, net, jsent, jnet, from, delivered>>

Tick(to, Win(_)) ==
    /\ Quiet(to, Win)
    /\ now < Horizon
    /\ now' = now + 1
    /\ UNCHANGED <<off, faulty, crashed, awake, start, nextEnd, broadcast, sentAt, net,
                   jsent, jnet, from, cs, ct, delivered>>

\* the horizon: the run is over
Done ==
    /\ now = Horizon
    /\ UNCHANGED vars

ProtocolNext(to, Win(_), JS(_)) ==
    \/ \E p \in Proc : EndSlot(p) \/ Join(p, to, Win, JS) \/ Crash(p, to, Win)
    \/ \E r, q \in Proc : JoinArrive(r, q)
    \/ \E q \in Proc : \/ DeliverTurn(q, to, Win) \/ TimeoutTurn(q, to, Win)
                       \/ SkipTurn(q, to, Win)
    \/ Tick(to, Win)
    \/ Done

Next == ProtocolNext(TimeoutLen, SafeWindow, JoinSlot)
Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties: 003's definition of totally ordered multicast (Total    *)
(* Order, Integrity, Liveness) and its latency bounds.                    *)

\* the whole run, for the properties 003 promises of every delivered message
Raw == INSTANCE TotalOrderBroadcast WITH Proc <- Proc, Correct <- Proc \ MayCrash

Integrity == Raw!Integrity
\* 003's Total Order is pairwise: two processes deliver the messages they both
\* deliver in the same order
WeakTotalOrder == Raw!WeakTotalOrder
\* the gap-free form: holds only in static crash-free runs (a joiner lacks the
\* earlier slots; a faulty sender's last messages may reach some processes only)
GapFreeTotalOrder == Raw!GapFreeTotalOrder

\* "the order is the key (slot, index)": every process delivers in key order
Key(m) == SlotOf(m) * (N + 1) + Sender(m)
KeyOrder ==
    \A q \in Proc : \A i, j \in DOMAIN delivered[q] :
        i < j => Key(delivered[q][i]) < Key(delivered[q][j])

\* what 003 makes p and q agree on: the messages of senders that have not
\* crashed, from the slots both are members in
Owed(p, q, m) == Sender(m) \notin crashed /\ SlotOf(m) >= start[p] /\ SlotOf(m) >= start[q]
OwedPrefix(p, q, s, i) == SelectSeq(SubSeq(s, 1, i), LAMBDA m : Owed(p, q, m))

\* gap-free order among members: if q delivers m before m2 and m is owed to p,
\* p delivers m before m2 too. Implies 003's Liveness for the messages p and q
\* both deliver, and is what the broken variants break.
MemberGapFreeOrder ==
    \A p, q \in Proc :
        \A i \in DOMAIN delivered[p], j \in DOMAIN delivered[q] :
            delivered[p][i] = delivered[q][j] =>
                OwedPrefix(p, q, delivered[p], i) = OwedPrefix(p, q, delivered[q], j)

\* 003's Liveness within the horizon: at the end, every process alive delivered
\* every message of a sender that did not crash, from the slots it was a member in
HorizonAgreement ==
    now = Horizon =>
        \A q \in Proc : Alive(q) =>
            \A m \in broadcast :
                Owed(q, q, m) /\ SlotOf(m) >= start[q] =>
                    \E i \in DOMAIN delivered[q] : delivered[q][i] = m

(* The latency bounds (003, static case, Figure 3: Delta + delta + eps;    *)
(* failures, Figure 4: Delta + delta + 2 eps; reading aid 2.3). Discrete   *)
(* time: "by time t" means by the end of the instant t, so each bound is   *)
(* read in the quiescent state that ends an instant (nothing due).         *)
Quiescent == Quiet(TimeoutLen, SafeWindow)

\* every process alive has finished slot s by its local (s+1)*SlotLen + b
LatencyLocalBy(b) ==
    Quiescent =>
        \A q \in Proc : Alive(q) =>
            \A s \in Slot : s >= start[q] /\ Local(q) >= (s + 1) * SlotLen + b => cs[q] > s

\* the earliest real time at which k can multicast in slot s: k's clock reads
\* s*SlotLen, and the run has started
SlotStart(k, s) == LET t == s * SlotLen - off[k] IN IF t < 0 THEN 0 ELSE t

\* a message multicast in slot s is delivered by every process alive within b of
\* real time
LatencyRealBy(b) ==
    Quiescent =>
        \A m \in broadcast, q \in Proc :
            Alive(q) /\ SlotOf(m) >= start[q]
            /\ now >= SlotStart(Sender(m), SlotOf(m)) + b
            => cs[q] > SlotOf(m)

NoFailureRun == crashed = {} /\ awake = Members

\* local time: (s+1)*SlotLen + delta + eps, with or without failures
LatencyLocal == LatencyLocalBy(Delay + Eps)
\* real time: Delta + delta + 2 eps with failures (and joins), Delta + delta + eps without
LatencyReal == LatencyRealBy(SlotLen + Delay + 2 * Eps)
LatencyRealNoFailure == NoFailureRun => LatencyRealBy(SlotLen + Delay + Eps)
\* one tick less: TLC finds runs that need the full bound (the bounds are tight)
LatencyLocalTight == LatencyLocalBy(Delay + Eps - 1)
LatencyRealTight == LatencyRealBy(SlotLen + Delay + 2 * Eps - 1)
LatencyRealNoFailureTight == NoFailureRun => LatencyRealBy(SlotLen + Delay + Eps - 1)

\* the paper's join argument (B2): every process in the group when r joined has
\* r's join before its clock reaches the start of r's join slot
JoinBeforeSlot ==
    \A r, q \in Proc :
        jnet[r][q] # "none" /\ Alive(q) /\ Local(q) >= start[r] * SlotLen =>
            jnet[r][q] = "got"

\* the refinement of TotalOrderBroadcast: hide the messages of the faulty
\* process (003 promises no agreement on them) and compare the members of the
\* group at time 0 (a joiner's sequence starts at its join slot, so it is no
\* prefix of theirs: MemberGapFreeOrder covers joiners)
Visible(m) == Sender(m) \notin faulty
TOB == INSTANCE TotalOrderBroadcast
          WITH Proc <- Members, Correct <- Members \ MayCrash,
               broadcast <- {m \in broadcast : Visible(m)},
               delivered <- [q \in Members |-> SelectSeq(delivered[q], Visible)]
RefinesTOB == TOB!SafetySpec
=============================================================================
