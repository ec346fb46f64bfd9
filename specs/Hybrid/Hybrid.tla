--------------------------------- MODULE Hybrid --------------------------------
(***************************************************************************)
(* The dynamic hybrid token-site / symmetric total-order multicast of      *)
(* Rodrigues, Fonseca and Verissimo (shared/papers/001_0f6a44dd38ba5101,  *)
(* sections 4.1, 5 and Figure 4): its switching protocol.                  *)
(*                                                                         *)
(* Active processes (sequencers) issue tickets <<issuer, number, (p, c)>> *)
(* for their own messages and for the messages of the passive processes   *)
(* assigned to them; tickets are ordered by number, then issuer (4.1);    *)
(* every process delivers messages in ticket order once a ticket is       *)
(* stable. A process switches role by a goingToActive / goingToPassive    *)
(* message ordered like data (5.3.2, 5.3.3); a passive process changes    *)
(* sequencer after its own messages are delivered (5.3.4) or, when its    *)
(* sequencer goes passive or crashes, reassigns its pending range         *)
(* ]l_p, c_p] (5.2, 5.3.1, 5.3.4); a view change after a crash promotes   *)
(* the highest process when no active one is left and discards the        *)
(* un-ticketed messages of the crashed process (5.2, 5.3.1).              *)
(*                                                                         *)
(* Names follow Figure 4: c, l, t, state, S (sequencer descriptor), C     *)
(* (configuration: role and role number of every process), Q (pending     *)
(* messages), UT (received tickets).                                       *)
(*                                                                         *)
(* What is abstracted (README.md says why):                                *)
(*  - The view-synchronous reliable multicast: each process's multicasts   *)
(*    form one log (net[s]) that every process reads in order (FIFO       *)
(*    links, section 3), a process receives its own messages at once      *)
(*    ("A process receives its own messages immediately", 3). A crash     *)
(*    stops a process; the view change that excludes it is one step at   *)
(*    every survivor, taken after the flush: when every message sent in   *)
(*    the old view has reached every survivor (the vs-multicast property  *)
(*    of section 5). A crashed process's messages are not lost (one of    *)
(*    the behaviours VS allows: see README.md on uniformity).             *)
(*  - Timing, rates and delays: when to switch, to whom, and which active *)
(*    process is "closest" are nondeterministic choices (sections 4.3 and *)
(*    6 decide them from measurements; no ordering argument uses them).   *)
(*  - Rate synchronisation (ref. [19], not available): a ticket number is *)
(*    the issuer's counter t plus one; every message carries the sender's *)
(*    t and a receiver raises its t to the largest number it sees (the    *)
(*    reading aid's model with R = 0, Lamport numbering). Only the two    *)
(*    facts safety needs are kept: an issuer's numbers increase, and a    *)
(*    process's future tickets exceed every number it has received.       *)
(*                                                                         *)
(* Decisions on the text (cited; the literal readings that TLC rejects    *)
(* are the Hybrid_*.tla variants):                                         *)
(*  D1 Stability (reading aid A1). Figure 4 moves tickets "in order from  *)
(*     UT to OT" when they are received and delivers from OT. We judge    *)
(*     a ticket stable at the moment of its delivery, against the          *)
(*     configuration in force there: from every active process b other   *)
(*     than the issuer we have seen a number >= the ticket's (b's later    *)
(*     tickets are then larger, by FIFO and increasing numbers). The      *)
(*     literal OT: Hybrid_LiteralOT.tla, a total-order violation.         *)
(*  D2 A process that becomes active by goingToActive has delivered that  *)
(*     message's ticket, so its later tickets exceed its number: the       *)
(*     number counts as seen from it (reading aid, deliverMessage).        *)
(*  D3 Duplicate tickets (A2): a reassigned message may hold two tickets; *)
(*     the first in ticket order delivers it, the others are dropped      *)
(*     (Figure 4's "T(M) = head(OT) /\ M in Q" would stop at the second). *)
(*  D4 Eager delivery: as in Figure 4's main loop, which ends every       *)
(*     receipt with deliverInOrder, a process delivers what is            *)
(*     deliverable before it handles its next event (receipt, send,       *)
(*     switch, view). Deliveries are still one step each (one message per  *)
(*     step, as TotalOrderBroadcast's Deliver).                            *)
(*  D5 Tickets are multicast as soon as they are issued (on the data      *)
(*     message of an active sender, else on a null carrier): the          *)
(*     reading aid's heartbeat A4 with no delay, so LT is always empty    *)
(*     between steps. An active process also multicasts a null carrying   *)
(*     its t when t has grown past the last number it sent (rate          *)
(*     synchronisation keeps actives sending; without it a silent active  *)
(*     blocks every delivery).                                             *)
(*  D6 Reassign (A3): every non-active process (passive, chgseq,          *)
(*     toactive) whose sequencer is no longer valid in its configuration  *)
(*     (gone passive, crashed, or a stale role number) picks an active    *)
(*     process and multicasts reassign ]l, c] with its own l, the text of *)
(*     5.3.1 and 5.3.4. Figure 4 sets l_i := c_j (the switching process's  *)
(*     counter) and, at a view change, reassigns only when an active       *)
(*     process is left: Hybrid_Fig4Reassign.tla. A reassign with an      *)
(*     empty range changes nothing and is not sent.                        *)
(*  D7 Promotion (5.3.1): with no active process left in the new view,    *)
(*     the member with the highest identifier becomes active (role number *)
(*     + 1) at every survivor; the promoted process reassigns its own     *)
(*     ]l, c] to itself and tickets it (5.3.3).                            *)
(*  D8 Discard (5.2): at the view change, the crashed process's messages  *)
(*     for which no ticket has been received are discarded by every       *)
(*     survivor (the flush makes that set the same everywhere); a later   *)
(*     ticket for them is ignored.                                         *)
(*  D9 A goingTo* message of a process no longer in the view changes      *)
(*     nothing (A12). chgseq completes as soon as l = c, also at once     *)
(*     (A6). A process going passive takes an active sequencer; its own   *)
(*     range is empty (it stopped sending in topassive).                   *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Proc,        \* the processes: positive integers (the order of issuers and of ids)
    Senders,     \* the processes that multicast user messages
    PerSender,   \* how many user messages each of them multicasts
    InitActive,  \* the active processes of the initial configuration (5.1)
    GoActive,    \* the processes that may send one goingToActive
    GoPassive,   \* the processes that may send one goingToPassive
    ChgSeq,      \* the processes that may change sequencer once (5.3.4)
    Crashable,   \* the processes that may crash
    MaxCrash,    \* at most this many crashes
    Literal      \* the literal readings switched on: {} here; the Hybrid_*.tla variants

ASSUME /\ InitActive # {} /\ InitActive \subseteq Proc
       /\ Senders \subseteq Proc /\ GoActive \subseteq Proc /\ GoPassive \subseteq Proc
       /\ ChgSeq \subseteq Proc /\ Crashable \subseteq Proc
       /\ MaxCrash < Cardinality(Proc)
       /\ Literal \subseteq {"ot", "fig4gtp", "fig4view", "discard", "dup"}

Msg == Senders \X (1 .. PerSender)   \* user messages <<p, k>>: p's k-th

Max2(a, b) == IF a < b THEN b ELSE a
MaxSet(S) == CHOOSE x \in S : \A y \in S : y <= x

\* tickets: [iss, n, id], id = <<sender, counter>>; ordered by number, then issuer (4.1)
TLess(a, b) == a.n < b.n \/ (a.n = b.n /\ a.iss < b.iss)
MinT(S) == CHOOSE T \in S : \A T2 \in S : T2 = T \/ TLess(T, T2)

NoDesc == <<0, 0>>
\* every packet has the same fields so that TLC can compare any two
Pkt(typ, src, c, k, d, tks, num, lo, hi) ==
    [typ |-> typ, src |-> src, c |-> c, k |-> k, d |-> d, tks |-> tks, num |-> num,
     lo |-> lo, hi |-> hi]
Id(M) == <<M.src, M.c>>

VARIABLES
    broadcast,   \* the user messages multicast so far (TotalOrderBroadcast)
    delivered,   \* delivered[p]: the user messages p delivered, in order (TotalOrderBroadcast)
    ls,          \* ls[p]: p's local state (Figure 4's variables), a record
    net,         \* net[s]: every message s multicast, in order (the vs-layer)
    rcvd,        \* rcvd[p][s]: how many of net[s] p has received
    alive,       \* the processes that have not crashed
    view,        \* the current view (installed at every survivor in one step)
    used         \* used[p]: the voluntary transitions p has made ("gta", "gtp", "chg")

vars == <<broadcast, delivered, ls, net, rcvd, alive, view, used>>

\* The refinement mapping: TotalOrderBroadcast's broadcast and delivered are the user
\* messages <<p, k>> (a data message's payload, not its protocol id <<p, c>>, c counting
\* control messages too); tickets, queues, configurations and control messages are
\* hidden. A step that delivers a control message or moves only hidden state is a
\* stutter of TotalOrderBroadcast.
TOB == INSTANCE TotalOrderBroadcast
           WITH Correct <- Proc, Msg <- Msg, broadcast <- broadcast, delivered <- delivered

Role0(q) == IF q \in InitActive THEN "active" ELSE "passive"

\* s.C[q].role: "active", "passive", or "gone" (excluded by a view change)
IsActive(s, q) == s.C[q].role = "active"
Actives(s) == {q \in Proc : IsActive(s, q)}
Own(s, p) == <<p, s.C[p].rn>>
Valid(s, D) == D[1] \in Proc /\ IsActive(s, D[1]) /\ s.C[D[1]].rn = D[2]
NeedSeq(s) == s.st \in {"passive", "chgseq", "toactive"} /\ ~Valid(s, s.S)

Init ==
    /\ broadcast = {}
    /\ delivered = [p \in Proc |-> <<>>]
    /\ \E seq \in [Proc -> InitActive] :
         ls = [p \in Proc |->
                 [c |-> 0, l |-> 0, t |-> 0, sent |-> 0,
                  st |-> Role0(p),
                  S |-> IF p \in InitActive THEN <<p, 0>> ELSE <<seq[p], 0>>,
                  C |-> [q \in Proc |-> [role |-> Role0(q), rn |-> 0]],
                  Q |-> {}, UT |-> {}, OT |-> {}, ltn |-> [q \in Proc |-> 0],
                  iss |-> {}, done |-> {}]]
    /\ net = [s \in Proc |-> <<>>]
    /\ rcvd = [p \in Proc |-> [s \in Proc |-> 0]]
    /\ alive = Proc
    /\ view = Proc
    /\ used = [p \in Proc |-> {}]

TypeOK ==
    /\ TOB!TypeOK
    /\ alive \subseteq Proc /\ view \subseteq Proc /\ alive \subseteq view
    /\ \A p \in Proc :
         /\ ls[p].st \in {"active", "chgseq", "topassive", "passive", "toactive"}
         /\ ls[p].C \in [Proc -> [role : {"active", "passive", "gone"}, rn : Nat]]

-----------------------------------------------------------------------------
(* Tickets: issueTickets of Figure 4, per-sender FIFO: the messages of one *)
(* sender get increasing numbers in counter order.                          *)
\* s.iss: every message p has ticketed. Figure 4 tests "T(M) not in LT_i", the tickets
\* not yet sent, and LT_i is emptied on every send (here, at once: D5); read so
\* ("dup", Hybrid_LiteralDuplicates.tla) a message still queued is ticketed again.
Eligible(s, p) ==
    {M \in s.Q : IsActive(s, p) /\ M.d = Own(s, p) /\ ("dup" \in Literal \/ Id(M) \notin s.iss)}
Rank(E, M) == Cardinality({M2 \in E : M2.src < M.src \/ (M2.src = M.src /\ M2.c < M.c)})
NewTickets(s, p) ==
    LET E == Eligible(s, p)
    IN {[iss |-> p, n |-> s.t + Rank(E, M) + 1, id |-> Id(M)] : M \in E}

\* issue, and put the tickets in the own UT (own receipt)
Issue(s, p) ==
    LET E == Eligible(s, p)
    IN [s EXCEPT !.t = @ + Cardinality(E), !.iss = @ \cup {Id(M) : M \in E},
                 !.UT = @ \cup NewTickets(s, p)]

\* issue tickets if active, and multicast them with the counter t on a null carrier
\* when there are new tickets or t has grown past the last number sent (D5): [s, out]
IssueAndSend(s, p) ==
    IF s.st = "active"
    THEN LET tks == NewTickets(s, p)
             s2 == Issue(s, p)
         IN IF tks = {} /\ s2.t <= s.sent
            THEN [s |-> s2, out |-> <<>>]
            ELSE [s |-> [s2 EXCEPT !.sent = s2.t],
                  out |-> <<Pkt("null", p, 0, 0, NoDesc, tks, s2.t, 0, 0)>>]
    ELSE [s |-> s, out |-> <<>>]

\* receiving a message (Figure 4's main loop, before deliverInOrder)
QEntry(m) == [src |-> m.src, c |-> m.c, typ |-> m.typ, k |-> m.k, d |-> m.d]
RecvLocal(s, m) ==
    LET fresh == {T \in m.tks : "dup" \in Literal \/ T.id \notin s.done}
        tkmax == MaxSet({0} \cup {T.n : T \in m.tks})
        s1 == [s EXCEPT !.UT = @ \cup fresh, !.t = Max2(@, tkmax),
                        !.ltn[m.src] = Max2(@, Max2(m.num, tkmax))]
    IN CASE m.typ = "reassign" ->
              [s1 EXCEPT !.Q = {IF M.src = m.src /\ m.lo < M.c /\ M.c <= m.hi
                                THEN [M EXCEPT !.d = m.d] ELSE M : M \in @}]
         [] m.typ = "null" -> s1
         [] OTHER -> [s1 EXCEPT !.Q = @ \cup {QEntry(m)}]

\* own receipt of a sequence of own multicasts (receipt is immediate, section 3)
RECURSIVE SelfRecv(_, _)
SelfRecv(s, out) ==
    IF out = <<>> THEN s
    ELSE SelfRecv([RecvLocal(s, Head(out)) EXCEPT !.sent = Max2(@, Head(out).num)], Tail(out))

\* p multicasts out (already received by p itself)
Multicast(p, out) == net' = [net EXCEPT ![p] = @ \o out]

\* reassign ]l, c] to the active process a (5.3.4), if the range is not empty (D6)
Reassign(s, p, a) ==
    LET D == <<a, s.C[a].rn>>
        s1 == [s EXCEPT !.S = D]
        out == IF s.l < s.c THEN <<Pkt("reassign", p, 0, 0, D, {}, s.t, s.l, s.c)>> ELSE <<>>
    IN [s |-> SelfRecv(s1, out), out |-> out]

\* the choice of a new sequencer when need holds: a must be an active process other
\* than p; when none is needed, a = p (one successor state)
Choice(s, p, a, need) ==
    IF need THEN IsActive(s, a) /\ a # p ELSE a = p
AfterChoice(s, p, a, need) ==
    IF need THEN Reassign(s, p, a) ELSE [s |-> s, out |-> <<>>]

-----------------------------------------------------------------------------
(* Delivery (D1, D3, D4).                                                   *)
Num(s, p, b) == IF b = p THEN s.t ELSE s.ltn[b]
Stable(s, p, T) ==
    \A b \in Proc : (IsActive(s, b) /\ b # T.iss) => Num(s, p, b) >= T.n

\* Literal "ot" (Figure 4 read literally, Hybrid_LiteralOT.tla): on every receipt the
\* tickets are moved "in order from UT to OT" while the least is stable against the
\* configuration of that moment, and deliverInOrder delivers the head of OT with no
\* further test.
RECURSIVE MoveOT(_, _)
MoveOT(s, p) ==
    IF s.UT # {} /\ Stable(s, p, MinT(s.UT))
    THEN MoveOT([s EXCEPT !.UT = @ \ {MinT(s.UT)}, !.OT = @ \cup {MinT(s.UT)}], p)
    ELSE s

HeadTicket(s) == IF "ot" \in Literal THEN MinT(s.OT) ELSE MinT(s.UT)
Deliverable(s, p) ==
    IF "ot" \in Literal
    THEN s.OT # {} /\ \E M \in s.Q : Id(M) = HeadTicket(s).id
    ELSE /\ s.UT # {}
         /\ Stable(s, p, HeadTicket(s))
         /\ \E M \in s.Q : Id(M) = HeadTicket(s).id

\* deliverMessage of Figure 4 for M with ticket T, after M left Q: [s, out]
DeliverLocal(s, p, M, T) ==
    CASE M.typ = "data" ->
            [s |-> IF M.src = p THEN [s EXCEPT !.l = M.c] ELSE s, out |-> <<>>]
      [] M.typ \in {"gta", "gtp"} /\ s.C[M.src].role = "gone" ->
            [s |-> s, out |-> <<>>]                                          \* D9
      [] M.typ = "gta" ->
            LET j == M.src
                s1 == [s EXCEPT !.C[j] = [role |-> "active", rn |-> @.rn + 1],
                                !.ltn[j] = Max2(@, T.n)]                          \* D2
            IN IF j = p
               THEN IssueAndSend([s1 EXCEPT !.l = M.c, !.st = "active",
                                            !.S = <<p, s1.C[p].rn>>], p)
               ELSE [s |-> s1, out |-> <<>>]
      [] M.typ = "gtp" ->
            LET j == M.src
                tmp == [s.C EXCEPT ![j] = [role |-> "passive", rn |-> @.rn + 1]]
            IN IF \A q \in Proc : tmp[q].role # "active"
               THEN \* the last active process: the transition is aborted (5.3.2)
                    IF j = p
                    THEN IssueAndSend([s EXCEPT !.l = M.c, !.st = "active"], p)
                    ELSE [s |-> s, out |-> <<>>]
               ELSE LET s1 == [s EXCEPT !.C = tmp]
                    IN [s |-> IF j = p THEN [s1 EXCEPT !.l = M.c, !.st = "passive"] ELSE s1,
                        out |-> <<>>]
      [] OTHER -> [s |-> s, out |-> <<>>]

\* deliver the head message, then, if the sequencer is no longer valid, reassign (D6)
DeliverStep(p, Local(_, _, _, _)) ==
    LET s == ls[p]
        T == HeadTicket(s)
        M == CHOOSE M \in s.Q : Id(M) = T.id
        \* D3: the other tickets of M go too ("dup": Figure 4's loop removes T(M) only)
        drop(T2) == IF "dup" \in Literal THEN T2 = T ELSE T2.id = T.id
        s0 == [s EXCEPT !.UT = {T2 \in @ : ~drop(T2)}, !.OT = {T2 \in @ : ~drop(T2)},
                        !.Q = @ \ {M},
                        !.done = @ \cup {T.id}]
        r == Local(s0, p, M, T)
        \* Figure 4 read literally ("fig4gtp", Hybrid_Fig4Reassign.tla): on a
        \* goingToPassive that is not aborted, every process whose state is not active
        \* sets l_i := c_j (the sender's counter) and reassigns ]l_i, c_i]
        fig == /\ "fig4gtp" \in Literal /\ M.typ = "gtp" /\ s0.C[M.src].role # "gone"
               /\ \E q \in Proc : q # M.src /\ s0.C[q].role = "active"
               /\ r.s.st # "active"
        rs == IF fig THEN [r.s EXCEPT !.l = M.c] ELSE r.s
        need == IF "fig4gtp" \in Literal /\ M.typ = "gtp" THEN fig ELSE NeedSeq(r.s)
    IN \E a \in Proc :
         /\ Choice(rs, p, a, need)
         /\ LET r2 == AfterChoice(rs, p, a, need)
            IN /\ ls' = [ls EXCEPT ![p] = r2.s]
               /\ Multicast(p, r.out \o r2.out)
         /\ delivered' = IF M.typ = "data"
                         THEN [delivered EXCEPT ![p] = Append(@, <<M.src, M.k>>)]
                         ELSE delivered

Deliver(p) ==
    /\ p \in alive
    /\ Deliverable(ls[p], p)
    /\ DeliverStep(p, DeliverLocal)
    /\ UNCHANGED <<broadcast, rcvd, alive, view, used>>

\* D4: p handles no other event while it can deliver. Deliveries are local steps that
\* commute with the other processes' steps and the properties are stable (once
\* violated, violated for ever), so we also let no other process move meanwhile: a
\* reduction of the interleavings, not of the reachable delivery orders.
\* after a receipt: the literal move to OT, if switched on
AfterRecv(s, p) == IF "ot" \in Literal THEN MoveOT(s, p) ELSE s

NoneDeliverable == \A q \in alive : ~Deliverable(ls[q], q)
Idle(p) == p \in alive   \* and NoneDeliverable: Next tests it

-----------------------------------------------------------------------------
(* Receipt of the next message from s (Figure 4's main loop): tickets, t,  *)
(* the message or the reassign, then issueTickets if active.               *)
Receive(p, s) ==
    /\ Idle(p) /\ s # p
    /\ rcvd[p][s] < Len(net[s])
    /\ LET m == net[s][rcvd[p][s] + 1]
           r == IssueAndSend(RecvLocal(ls[p], m), p)
       IN /\ ls' = [ls EXCEPT ![p] = AfterRecv(SelfRecv(r.s, r.out), p)]
          /\ Multicast(p, r.out)
    /\ rcvd' = [rcvd EXCEPT ![p][s] = @ + 1]
    /\ UNCHANGED <<broadcast, delivered, alive, view, used>>

(* An application message (Figure 4: "when there is a message to send").   *)
AppSend(p) ==
    /\ Idle(p) /\ p \in Senders
    /\ ls[p].st \in {"active", "passive"}
    /\ LET k == Cardinality({m \in broadcast : m[1] = p}) + 1
           s == ls[p]
           c == s.c + 1
           d == IF s.st = "active" THEN Own(s, p) ELSE s.S
           m == Pkt("data", p, c, k, d, {}, s.t, 0, 0)
           s1 == RecvLocal([s EXCEPT !.c = c], m)   \* own receipt
           r == IssueAndSend(s1, p)                  \* an active sender tickets it
           m2 == IF r.out = <<>> THEN m ELSE [m EXCEPT !.tks = r.out[1].tks, !.num = r.out[1].num]
       IN /\ k <= PerSender
          /\ broadcast' = broadcast \cup {<<p, k>>}
          /\ ls' = [ls EXCEPT ![p] = AfterRecv(r.s, p)]
          /\ Multicast(p, <<m2>>)
    /\ UNCHANGED <<delivered, rcvd, alive, view, used>>

(* 5.3.2: goingToPassive, ticketed by the sender itself; stop sending and  *)
(* ticketing (topassive).                                                   *)
GoingToPassive(p) ==
    /\ Idle(p) /\ p \in GoPassive /\ "gtp" \notin used[p]
    /\ ls[p].st = "active"
    /\ LET s == ls[p]
           c == s.c + 1
           m == Pkt("gtp", p, c, 0, Own(s, p), {}, s.t, 0, 0)
           r == IssueAndSend(RecvLocal([s EXCEPT !.c = c], m), p)
           m2 == [m EXCEPT !.tks = r.out[1].tks, !.num = r.out[1].num]
       IN /\ ls' = [ls EXCEPT ![p] = AfterRecv([r.s EXCEPT !.st = "topassive"], p)]
          /\ Multicast(p, <<m2>>)
    /\ used' = [used EXCEPT ![p] = @ \cup {"gtp"}]
    /\ UNCHANGED <<broadcast, delivered, rcvd, alive, view>>

(* 5.3.3: goingToActive, ordered by the current sequencer; stop sending.    *)
GoingToActive(p) ==
    /\ Idle(p) /\ p \in GoActive /\ "gta" \notin used[p]
    /\ ls[p].st = "passive"
    /\ LET s == ls[p]
           c == s.c + 1
           m == Pkt("gta", p, c, 0, s.S, {}, s.t, 0, 0)
       IN /\ ls' = [ls EXCEPT ![p] = [RecvLocal([s EXCEPT !.c = c], m) EXCEPT !.st = "toactive"]]
          /\ Multicast(p, <<m>>)
    /\ used' = [used EXCEPT ![p] = @ \cup {"gta"}]
    /\ UNCHANGED <<broadcast, delivered, rcvd, alive, view>>

(* 5.3.4: change of sequencer: stop sending (chgseq) until l = c, then     *)
(* take another active process as sequencer.                               *)
StartChgSeq(p) ==
    /\ Idle(p) /\ p \in ChgSeq /\ "chg" \notin used[p]
    /\ ls[p].st = "passive"
    /\ \E a \in Actives(ls[p]) : a # ls[p].S[1] /\ a # p
    /\ ls' = [ls EXCEPT ![p].st = "chgseq"]
    /\ used' = [used EXCEPT ![p] = @ \cup {"chg"}]
    /\ UNCHANGED <<broadcast, delivered, net, rcvd, alive, view>>

EndChgSeq(p) ==
    /\ Idle(p)
    /\ ls[p].st = "chgseq" /\ ls[p].l = ls[p].c
    /\ \E a \in Actives(ls[p]) \ {p} :
         ls' = [ls EXCEPT ![p].S = <<a, ls[p].C[a].rn>>, ![p].st = "passive"]
    /\ UNCHANGED <<broadcast, delivered, net, rcvd, alive, view, used>>

-----------------------------------------------------------------------------
(* Crashes and the view change (5.2, 5.3.1).                               *)
Crash(q) ==
    /\ q \in alive \cap Crashable
    /\ Cardinality(Proc \ alive) < MaxCrash
    /\ alive' = alive \ {q}
    /\ UNCHANGED <<broadcast, delivered, ls, net, rcvd, view, used>>

Flushed == \A p \in alive : \A s \in Proc \ {p} : rcvd[p][s] = Len(net[s])

\* the view handler at p, before the choice of a new sequencer (D7, D8)
ViewPre(s, p, V) ==
    LET F == Proc \ V
        \* "discard" (Hybrid_LiteralDiscard.tla): "not yet ordered" read as "no ticket
        \* in OT", i.e. not yet stable: at the view change that is every queued one
        ticketed == IF "discard" \in Literal THEN {} ELSE {T.id : T \in s.UT}
        gone == {M \in s.Q : M.src \in F /\ Id(M) \notin ticketed}
        C1 == [q \in Proc |-> IF q \in F THEN [role |-> "gone", rn |-> s.C[q].rn]
                                         ELSE s.C[q]]
        promote == \A q \in Proc : C1[q].role # "active"
        m == MaxSet(V)
        C2 == IF promote THEN [C1 EXCEPT ![m] = [role |-> "active", rn |-> @.rn + 1]] ELSE C1
    IN [s EXCEPT !.Q = @ \ gone, !.done = @ \cup {Id(M) : M \in gone}, !.C = C2,
                 !.st = IF promote /\ m = p THEN "active" ELSE @,
                 !.S = IF promote /\ m = p THEN <<p, C2[p].rn>> ELSE @]

\* whether p must take a new sequencer at the view change: its sequencer is no longer
\* valid (D6); Figure 4 read literally ("fig4view", Hybrid_Fig4Reassign.tla): only if
\* the sequencer left the view and an active process is left before the promotion
ViewNeed(s, p, V) ==
    IF "fig4view" \in Literal
    THEN /\ s.S[1] \notin V
         /\ \E q \in V : s.C[q].role = "active"
         /\ ViewPre(s, p, V).st # "active"
    ELSE NeedSeq(ViewPre(s, p, V))

\* the promoted process reassigns its own ]l, c] to itself and tickets it (D7)
ViewLocal(s, p, V, a) ==
    LET s1 == ViewPre(s, p, V)
        promoted == s1.st = "active" /\ s.st # "active"
    IN IF promoted
       THEN LET r1 == Reassign(s1, p, p)
                r2 == IssueAndSend(r1.s, p)
            IN [s |-> SelfRecv(r2.s, r2.out), out |-> r1.out \o r2.out]
       ELSE AfterChoice(s1, p, a, ViewNeed(s, p, V))

ViewChange ==
    /\ view # alive
    /\ Flushed
    /\ \E ch \in [alive -> Proc] :
         /\ \A p \in alive : Choice(ViewPre(ls[p], p, alive), p, ch[p], ViewNeed(ls[p], p, alive))
         /\ LET r == [p \in alive |-> ViewLocal(ls[p], p, alive, ch[p])]
            IN /\ ls' = [p \in Proc |-> IF p \in alive THEN r[p].s ELSE ls[p]]
               /\ net' = [p \in Proc |-> IF p \in alive THEN net[p] \o r[p].out ELSE net[p]]
    /\ view' = alive
    /\ UNCHANGED <<broadcast, delivered, rcvd, alive, used>>

-----------------------------------------------------------------------------
\* nothing is left to do: every survivor has received and delivered everything
Done ==
    /\ view = alive /\ Flushed
    /\ \A p \in alive : ls[p].Q = {} /\ ls[p].UT = {}
    /\ UNCHANGED vars

\* (NoneDeliverable, the guard of every action but Deliver, is tested once here: TLC
\* would evaluate it again in every disjunct)
Next ==
    \/ \E p \in Proc : Deliver(p)
    \/ /\ NoneDeliverable
       /\ \/ \E p \in Proc :
               \/ AppSend(p) \/ GoingToPassive(p) \/ GoingToActive(p)
               \/ StartChgSeq(p) \/ EndChgSeq(p) \/ Crash(p)
               \/ \E s \in Proc : Receive(p, s)
          \/ ViewChange
          \/ Done

Spec == Init /\ [][Next]_vars

\* Weak fairness: the vs-layer delivers every message and installs the view; a process
\* delivers what is deliverable and completes a change of sequencer. Switches, sends and
\* crashes are the environment's choices and need no fairness.
FairSpec ==
    /\ Spec
    /\ \A p \in Proc : WF_vars(Deliver(p))
    /\ \A p, s \in Proc : WF_vars(NoneDeliverable /\ Receive(p, s))
    /\ \A p \in Proc : WF_vars(NoneDeliverable /\ EndChgSeq(p))
    /\ WF_vars(NoneDeliverable /\ ViewChange)

-----------------------------------------------------------------------------
(* Properties.                                                             *)
Integrity == TOB!Integrity
WeakTotalOrder == TOB!WeakTotalOrder
StrongTotalOrder == TOB!StrongTotalOrder
GapFreeTotalOrder == TOB!GapFreeTotalOrder

\* Validity for the processes that do not crash (a crashed passive's un-ticketed
\* messages are discarded, 5.2: the configs' senders do not crash)
TOBC == INSTANCE TotalOrderBroadcast WITH Correct <- Proc \ Crashable
Validity == TOBC!Validity

\* the protocol refines TotalOrderBroadcast under the mapping of TOB (above)
RefinesTOB == TOB!SafetySpec

\* FIFO, gap-free (5.3.4 "to avoid disturbances in FIFO ordering"): a process delivers
\* p's k-th message only after p's earlier ones.
FifoOrder ==
    \A p \in Proc : \A i \in DOMAIN delivered[p] :
        LET m == delivered[p][i]
        IN \A k \in 1 .. (m[2] - 1) :
             \E j \in 1 .. (i - 1) : delivered[p][j] = <<m[1], k>>

\* at least one active process in every survivor's configuration (5.3.2: "at least one
\* active process must exist")
SomeActive == \A p \in alive : Actives(ls[p]) # {}

\* the least ticket never names a message already delivered: Figure 4's loop, "while
\* T(M) = queueHead(OT) /\ M in Q_i", would stop there for ever (D3)
NoDeadHead == \A p \in alive : ls[p].UT # {} => HeadTicket(ls[p]).id \notin ls[p].done

\* l is the last own message delivered (Figure 4's l_i), so at most c
LastBelowCount == \A p \in Proc : ls[p].l <= ls[p].c

\* every survivor ends with the same configuration
SameConfig ==
    (view = alive /\ Flushed /\ \A p \in alive : ls[p].Q = {} /\ ls[p].UT = {})
      => \A p, q \in alive : ls[p].C = ls[q].C
=============================================================================
