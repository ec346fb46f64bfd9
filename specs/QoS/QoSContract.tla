------------------------------ MODULE QoSContract ------------------------------
(***************************************************************************)
(* 003's QoS contract at one sender (Bar-Joseph, Keidar, Anker and Lynch,  *)
(* section 2.1, the reservation model; the Python model's                 *)
(* model/qos/reserve.py, whose decisions this spec takes): the            *)
(* application's reservation r = <<avg, max>> (at most max messages in a   *)
(* slot, at most avg in any K consecutive slots), declared at join(r) and  *)
(* renegotiated by RN(r); the sender's shaper, which holds a message that  *)
(* would exceed r for the first later slot with room, in order.           *)
(*                                                                         *)
(* Why one sender and no ordering: each process reserves and shapes its   *)
(* own traffic against its own r, and nothing of another process enters   *)
(* it; and the shaper changes only the slot a message goes out in, while  *)
(* QoS.tla's ordering layer is checked for every choice of the slots that *)
(* carry a message (Sends = BOOLEAN: its properties hold of any subset).   *)
(* So the contract is checked here, alone, on the sender's local clock.   *)
(* What is counted are originals against r; the FEC's inflation r' is a   *)
(* formula of r (003 section 2.2, model/qos/fec.py, tested in Python).    *)
(*                                                                         *)
(* Decisions (model/qos/reserve.py, docs/qos.md "The QoS contract"):       *)
(*  - the shaper admits a message in slot s while s holds fewer than the  *)
(*    max in force in s and the K slots ending with s fewer than its avg; *)
(*    otherwise the message is held, and held messages leave first, in    *)
(*    order, as soon as a slot has room (never overtaken by a later one); *)
(*  - RN(r) made in slot s holds from slot s + 1: part of s already went  *)
(*    out under the old r (variant QoSContract_EarlyRN: from s itself);   *)
(*  - a window straddling a renegotiation is judged against the largest   *)
(*    avg in force in its slots (the checker's rate property).            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    SlotLen,     \* ticks per slot
    K,           \* the slots of a reservation's avg
    Rates,       \* the reservations <<avg, max>> the application may ask for
    Initial,     \* those it may ask for at join(r), from slot 0
    MaxMsgs,     \* messages the application multicasts in a run, at most
    LastSend,    \* it multicasts in slots 0..LastSend only
    Burst,       \* messages it may multicast in one instant
    MaxRN        \* renegotiations in a run, at most

ASSUME /\ SlotLen \in Nat \ {0} /\ K \in Nat \ {0} /\ Initial \subseteq Rates
       /\ \A r \in Rates : r[1] \in Nat \ {0} /\ r[2] \in Nat \ {0}
       /\ MaxMsgs \in Nat /\ LastSend \in Nat /\ Burst \in Nat \ {0} /\ MaxRN \in Nat

\* with every avg and max >= 1, a held message waits at most K slots per message ahead
LastSlot == LastSend + MaxMsgs * K + 1
Slots == 0..LastSlot

\* the small configs' reservations (TLC 2.15's configs take no tuples): 2/1 and 3/2
SmallRates == {<<2, 1>>, <<3, 2>>}
Horizon == (LastSlot + 1) * SlotLen - 1
NoR == <<0, 0>>              \* no declaration for a slot

VARIABLES
    t,           \* the sender's local clock, in ticks
    decl,        \* decl[s]: the reservation declared to hold from slot s (NoR: none)
    sent,        \* sent[s]: the originals that left in slot s
    queue,       \* the messages held, oldest first
    out,         \* the messages that left, in the order they left
    next,        \* the application's next message (1, 2, ...)
    burst,       \* messages multicast in this instant
    rns          \* renegotiations so far

vars == <<t, decl, sent, queue, out, next, burst, rns>>

SlotOf(x) == x \div SlotLen
Max(S) == CHOOSE x \in S : \A y \in S : y <= x

RECURSIVE Sum(_, _)
Sum(f, S) == IF S = {} THEN 0 ELSE LET x == CHOOSE x \in S : TRUE IN f[x] + Sum(f, S \ {x})

\* the reservation in force in slot s: the latest declared from a slot <= s
InForce(s) == LET from == {x \in 0..s : decl[x] # NoR}
              IN IF from = {} THEN NoR ELSE decl[Max(from)]

\* the K slots ending with s, within the run
Trailing(s) == {x \in Slots : s - K < x /\ x <= s}

\* one more original fits slot s: its max, and the avg over the K slots ending with s
Room(s) == LET r == InForce(s) IN
           r = NoR \/ (sent[s] + 1 <= r[2] /\ Sum(sent, Trailing(s)) + 1 <= r[1])

TypeOK ==
    /\ t \in 0..Horizon
    /\ decl \in [Slots -> Rates \cup {NoR}]
    /\ sent \in [Slots -> 0..MaxMsgs]
    /\ queue \in Seq(1..MaxMsgs) /\ out \in Seq(1..MaxMsgs)
    /\ next \in 1..(MaxMsgs + 1) /\ burst \in 0..Burst /\ rns \in 0..MaxRN

Init ==
    /\ t = 0
    /\ \E r \in Initial : decl = [x \in Slots |-> IF x = 0 THEN r ELSE NoR]
    /\ sent = [x \in Slots |-> 0]
    /\ queue = <<>> /\ out = <<>>
    /\ next = 1 /\ burst = 0 /\ rns = 0

Leave(m) ==
    /\ sent' = [sent EXCEPT ![SlotOf(t)] = @ + 1]
    /\ out' = Append(out, m)

\* the application multicasts message `next`: shaped, it leaves now only if nothing is
\* held and the slot has room; unshaped, it leaves now whatever r says
Mcast(shape) ==
    /\ next <= MaxMsgs /\ SlotOf(t) <= LastSend /\ burst < Burst
    /\ IF ~shape \/ (queue = <<>> /\ Room(SlotOf(t)))
       THEN Leave(next) /\ UNCHANGED queue
       ELSE queue' = Append(queue, next) /\ UNCHANGED <<sent, out>>
    /\ next' = next + 1 /\ burst' = burst + 1
    /\ UNCHANGED <<t, decl, rns>>

\* the oldest held message leaves as soon as a slot has room (urgent: time waits)
ReleaseDue == queue # <<>> /\ Room(SlotOf(t))
Release ==
    /\ ReleaseDue
    /\ Leave(Head(queue)) /\ queue' = Tail(queue)
    /\ UNCHANGED <<t, decl, next, burst, rns>>

\* RN(r) in slot s holds from slot s + wait (a later declaration replaces those after it)
Renegotiate(wait) ==
    LET from == SlotOf(t) + wait IN
    /\ rns < MaxRN /\ from <= LastSlot
    /\ \E r \in Rates :
          decl' = [x \in Slots |-> IF x = from THEN r ELSE IF x > from THEN NoR ELSE decl[x]]
    /\ rns' = rns + 1
    /\ UNCHANGED <<t, sent, queue, out, next, burst>>

Tick ==
    /\ ~ReleaseDue /\ t < Horizon
    /\ t' = t + 1 /\ burst' = 0
    /\ UNCHANGED <<decl, sent, queue, out, next, rns>>

Done == t = Horizon /\ ~ReleaseDue /\ UNCHANGED vars

ContractNext(shape, wait) ==
    \/ Mcast(shape) \/ Release \/ Renegotiate(wait) \/ Tick \/ Done

Next == ContractNext(TRUE, 1)
Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* The contract, as the checker's rate property judges a trace's declared *)
(* reservations (its negotiate records).                                  *)

\* every slot within the max in force in it
DeclaredMax == \A s \in Slots : InForce(s) # NoR => sent[s] <= InForce(s)[2]

\* every K slots from a slot with a reservation in force within the largest avg in
\* force in them
Window(w) == {x \in Slots : w <= x /\ x < w + K}
DeclaredAvg ==
    \A w \in Slots : InForce(w) # NoR =>
        Sum(sent, Window(w)) <= Max({InForce(x)[1] : x \in Window(w)})

\* held messages are never overtaken: they leave in the order they were multicast
InOrder == \A i \in 1..Len(out) : out[i] = i

\* nothing is lost: by the end every message multicast has left
Drained == t = Horizon => queue = <<>> /\ Len(out) = next - 1
=============================================================================
