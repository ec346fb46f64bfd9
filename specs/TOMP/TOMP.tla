--------------------------------- MODULE TOMP ---------------------------------
(***************************************************************************)
(* TOMP, Dasser's Total Ordering Multicast Protocol, following 004        *)
(* section 3.2 (shared/papers/004_dc7b72ae6843a254.txt), with the paper's *)
(* names: local_ts, next_mid, ack_mi_ts, ackmi_next_mid, tsmi_ts,         *)
(* min_next_mid, max_next_ts.                                              *)
(*                                                                         *)
(* 3.2.2.2 message reception at hj: local_ts <- local_ts + 1; mi_ts <-    *)
(*   local_ts; ud; next_mid(hi) <- mi_id + 1; queue mi; ack with ts and a *)
(*   copy of next_mid.                                                     *)
(* 3.2.2.3 acknowledgement reception at hi: tsmi_ts <- max(tsmi_ts,       *)
(*   ackmi_ts); for every host j, "if (ackmi_next_mid(j) <                 *)
(*   min_next_mid(j)) then min_next_mid(j) <- ackmi_next_mid(j) (1);       *)
(*   max_next_ts(j) <- (ackmi_ts + 1) (2) else if (ackmi_next_mid(j) ==    *)
(*   min_next_mid(j)) then max_next_ts(j) <- Maximum(max_next_ts(j),       *)
(*   ackmi_ts + 1)".                                                       *)
(* 3.2.3.1 decision: with every ack in, hi multicasts ts_mi carrying      *)
(*   tsmi_ts, min_next_mid and max_next_ts.                                *)
(* 3.2.3.2 timestamp reception at hj: mi_ts <- tsmi_ts, dl; for every ud  *)
(*   mk from hk, Delta <- mk_id - min_next_mid(k); if Delta >= 0 then      *)
(*   mk_ts <- Maximum(mk_ts, max_next_ts(k) + Delta); reorder; deliver    *)
(*   the head while it is dl.                                              *)
(*                                                                         *)
(* Decisions where the paper is silent or ambiguous:                       *)
(*  - Channels are reliable FIFO links, one per ordered pair of hosts      *)
(*    (chan[p][q]): "it is assumed that each multicast message is         *)
(*    received by the set of hosts" and "The sequencing of messages       *)
(*    received from the same source is assumed to be assured by the lower *)
(*    layer" (3.2.1). next_mid(hi) <- mi_id + 1 needs it.                  *)
(*  - Timestamps are <<counter, host>>, ordered lexicographically (2.1.1). *)
(*    "ackmi_ts + 1" and "max_next_ts(k) + Delta" add to the counter and  *)
(*    keep the host: Figure 3 turns 17.3 into 18.3.                       *)
(*  - min_next_mid starts at infinity (Inf, above every id) and           *)
(*    max_next_ts at 0.0, so the first ack sets both (rule (1)).          *)
(*  - Raised timestamps may tie (Figure 3, step 3: m2 and m3 both 18.3 at *)
(*    host1) and the paper does not order ties: a message is delivered    *)
(*    only when its timestamp is strictly below every other queued one,  *)
(*    so on a tie the ud message goes first.                               *)
(*  - As in ABCAST.tla, a final timestamp raises local_ts to its counter  *)
(*    (Birman and Joseph 1987): with the paper's bare "incremented after  *)
(*    each new message reception" TLC finds a violation                   *)
(*    (TOMP_LiteralClock.tla).                                             *)
(*  - Message ids are 1, 2, ... per host; next_mid starts at 1.            *)
(***************************************************************************)
EXTENDS Naturals, Integers, Sequences, FiniteSets

CONSTANTS
    Proc,        \* the hosts: a set of positive integers (the hostid of timestamps)
    Senders,     \* the hosts that broadcast
    PerSender    \* how many messages each of them broadcasts

Msg == Senders \X (1 .. PerSender)     \* <<k, id>>: message mk_id of host hk
Sender(m) == m[1]
Id(m) == m[2]

Inf == PerSender + 2     \* above every next_mid value
NoTs == <<0, 0>>
TS == (Nat \X Nat)

Less(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
Max(a, b) == IF Less(a, b) THEN b ELSE a
\* "+ d" on a timestamp adds to the counter (Figure 3: 17.3 + 1 = 18.3)
Plus(t, d) == <<t[1] + d, t[2]>>

VARIABLES
    broadcast,   \* the messages broadcast so far
    delivered,   \* delivered[p]: the sequence p delivered
    clock,       \* clock[p]: p's local_ts
    ts,          \* ts[p][m]: mi_ts, m's timestamp in p's reception queue
    label,       \* label[p][m]: "none" (not received), "ud", "dl", "done" (delivered)
    nextMid,     \* nextMid[p][k]: p's next_mid(k)
    acked,       \* acked[m]: the hosts whose ack of m the sender has
    tsFinal,     \* tsFinal[m]: the sender's tsmi_ts so far
    minNextMid,  \* minNextMid[m][k]: the sender's min_next_mid(k) for m
    maxNextTs,   \* maxNextTs[m][k]: the sender's max_next_ts(k) for m
    chan         \* chan[p][q]: the FIFO link from p to q

vars == <<broadcast, delivered, clock, ts, label, nextMid, acked, tsFinal,
          minNextMid, maxNextTs, chan>>

NoMids == [k \in Proc |-> 0]
NoTss == [k \in Proc |-> NoTs]
\* every packet has the same fields, so that TLC can compare any two
Packet(kind, m, t, mids, maxts) ==
    [kind |-> kind, msg |-> m, ts |-> t, mids |-> mids, maxts |-> maxts]

TOB == INSTANCE TotalOrderBroadcast WITH Correct <- Proc

TypeOK ==
    /\ TOB!TypeOK
    /\ clock \in [Proc -> Nat]
    /\ ts \in [Proc -> [Msg -> TS]]
    /\ label \in [Proc -> [Msg -> {"none", "ud", "dl", "done"}]]
    /\ nextMid \in [Proc -> [Proc -> Nat]]
    /\ acked \in [Msg -> SUBSET Proc]
    /\ tsFinal \in [Msg -> TS]
    /\ minNextMid \in [Msg -> [Proc -> Nat]]
    /\ maxNextTs \in [Msg -> [Proc -> TS]]

Queue(p) == {m \in Msg : label[p][m] \in {"ud", "dl"}}

Init ==
    /\ broadcast = {}
    /\ delivered = [p \in Proc |-> <<>>]
    /\ clock = [p \in Proc |-> 0]
    /\ ts = [p \in Proc |-> [m \in Msg |-> NoTs]]
    /\ label = [p \in Proc |-> [m \in Msg |-> "none"]]
    /\ nextMid = [p \in Proc |-> [k \in Proc |-> 1]]
    /\ acked = [m \in Msg |-> {}]
    /\ tsFinal = [m \in Msg |-> NoTs]
    /\ minNextMid = [m \in Msg |-> [k \in Proc |-> Inf]]
    /\ maxNextTs = [m \in Msg |-> NoTss]
    /\ chan = [p \in Proc |-> [q \in Proc |-> <<>>]]

\* p sends pkt to every host (itself included), each on its FIFO link
Multicast(p, pkt) ==
    chan' = [chan EXCEPT ![p] = [q \in Proc |-> Append(chan[p][q], pkt)]]

\* p takes the head packet of the link from q
Front(q, p) == chan[q][p][1]
CanTake(q, p, kind) == chan[q][p] # <<>> /\ Front(q, p).kind = kind

-----------------------------------------------------------------------------
(* 3.2.2.1 message emission: ids strictly increasing per host.            *)
Broadcast(m) ==
    /\ m \notin broadcast
    /\ Id(m) = 1 \/ <<Sender(m), Id(m) - 1>> \in broadcast
    /\ broadcast' = broadcast \cup {m}
    /\ Multicast(Sender(m), Packet("data", m, NoTs, NoMids, NoTss))
    /\ UNCHANGED <<delivered, clock, ts, label, nextMid, acked, tsFinal,
                   minNextMid, maxNextTs>>

(* 3.2.2.2 message reception at p of the head data packet from q.         *)
ReceiveData(q, p) ==
    /\ CanTake(q, p, "data")
    /\ LET m == Front(q, p).msg
           t == <<clock[p] + 1, p>>
           mids == [nextMid[p] EXCEPT ![Sender(m)] = Id(m) + 1]
       IN /\ clock' = [clock EXCEPT ![p] = @ + 1]
          /\ ts' = [ts EXCEPT ![p][m] = t]
          /\ label' = [label EXCEPT ![p][m] = "ud"]
          /\ nextMid' = [nextMid EXCEPT ![p] = mids]
          /\ chan' = [chan EXCEPT ![q][p] = Tail(@),
                                  ![p][Sender(m)] = Append(@, Packet("ack", m, t, mids, NoTss))]
    /\ UNCHANGED <<broadcast, delivered, acked, tsFinal, minNextMid, maxNextTs>>

(* 3.2.2.3 acknowledgement reception, rules (1) and (2), and 3.2.3.1: the  *)
(* last ack makes the sender multicast ts_mi.                              *)
ReceiveAck(q, p) ==
    /\ CanTake(q, p, "ack")
    /\ LET a == Front(q, p)
           m == a.msg
           fin == Max(tsFinal[m], a.ts)
           mins == [j \in Proc |-> IF a.mids[j] < minNextMid[m][j]
                                   THEN a.mids[j] ELSE minNextMid[m][j]]
           maxs == [j \in Proc |->
                      IF a.mids[j] < minNextMid[m][j] THEN Plus(a.ts, 1)
                      ELSE IF a.mids[j] = minNextMid[m][j]
                           THEN Max(maxNextTs[m][j], Plus(a.ts, 1))
                           ELSE maxNextTs[m][j]]
           all == acked[m] \cup {q}
       IN /\ acked' = [acked EXCEPT ![m] = all]
          /\ tsFinal' = [tsFinal EXCEPT ![m] = fin]
          /\ minNextMid' = [minNextMid EXCEPT ![m] = mins]
          /\ maxNextTs' = [maxNextTs EXCEPT ![m] = maxs]
          /\ LET taken == [chan EXCEPT ![q][p] = Tail(@)]
             IN chan' = IF all = Proc
                        THEN [taken EXCEPT ![p] = [r \in Proc |->
                                 Append(taken[p][r], Packet("ts", m, fin, mins, maxs))]]
                        ELSE taken
    /\ UNCHANGED <<broadcast, delivered, clock, ts, label, nextMid>>

(* 3.2.3.2: the timestamps of the ud messages of host k after ts_mi.      *)
Raised(p, mk, mins, maxs) ==
    LET k == Sender(mk)
        delta == Id(mk) - mins[k]
    IN IF label[p][mk] = "ud" /\ delta >= 0
       THEN Max(ts[p][mk], Plus(maxs[k], delta))
       ELSE ts[p][mk]

(* 3.2.3.2 timestamp reception: final timestamp, dl, anticipation on the   *)
(* waiting messages; local_ts raised to the final counter (see above).    *)
ReceiveTs(q, p) ==
    /\ CanTake(q, p, "ts")
    /\ LET pkt == Front(q, p)
           m == pkt.msg
       IN /\ ts' = [ts EXCEPT ![p] = [mk \in Msg |->
                       IF mk = m THEN pkt.ts ELSE Raised(p, mk, pkt.mids, pkt.maxts)]]
          /\ label' = [label EXCEPT ![p][m] = "dl"]
          /\ clock' = [clock EXCEPT ![p] = IF @ < pkt.ts[1] THEN pkt.ts[1] ELSE @]
          /\ chan' = [chan EXCEPT ![q][p] = Tail(@)]
    /\ UNCHANGED <<broadcast, delivered, nextMid, acked, tsFinal, minNextMid, maxNextTs>>

\* m is first in p's queue: strictly below every other queued timestamp
AtHead(p, m) ==
    /\ m \in Queue(p)
    /\ \A m2 \in Queue(p) \ {m} : Less(ts[p][m], ts[p][m2])

DeliverMsg(p, m) ==
    /\ delivered' = [delivered EXCEPT ![p] = Append(@, m)]
    /\ label' = [label EXCEPT ![p][m] = "done"]
    /\ UNCHANGED <<broadcast, clock, ts, nextMid, acked, tsFinal, minNextMid,
                   maxNextTs, chan>>

(* 3.2.3.2: "when the status of the first message in the reception queue  *)
(* is deliverable: Remove the first message ... and deliver it".           *)
Deliver(p) ==
    \E m \in Msg :
        /\ AtHead(p, m)
        /\ label[p][m] = "dl"
        /\ DeliverMsg(p, m)

Done ==
    /\ broadcast = Msg
    /\ \A p \in Proc : label[p] = [m \in Msg |-> "done"]
    /\ UNCHANGED vars

(* The actions every variant shares; a broken variant (TOMP_*.tla) swaps   *)
(* the acknowledgement or the timestamp-reception rule and keeps these.    *)
Exchange ==
    \/ \E m \in Msg : Broadcast(m)
    \/ \E q, p \in Proc : ReceiveData(q, p)
    \/ \E p \in Proc : Deliver(p)
    \/ Done

Next ==
    \/ Exchange
    \/ \E q, p \in Proc : ReceiveAck(q, p)
    \/ \E q, p \in Proc : ReceiveTs(q, p)

\* Weak fairness: links deliver their packets; a host with a deliverable
\* head delivers it.
Spec ==
    /\ Init /\ [][Next]_vars
    /\ WF_vars(\E q, p \in Proc : ReceiveData(q, p))
    /\ WF_vars(\E q, p \in Proc : ReceiveAck(q, p))
    /\ WF_vars(\E q, p \in Proc : ReceiveTs(q, p))
    /\ \A p \in Proc : WF_vars(Deliver(p))

-----------------------------------------------------------------------------
(* The properties, stated once in TotalOrderBroadcast.                     *)
Integrity == TOB!Integrity
WeakTotalOrder == TOB!WeakTotalOrder
StrongTotalOrder == TOB!StrongTotalOrder
GapFreeTotalOrder == TOB!GapFreeTotalOrder
Validity == TOB!Validity
RefinesTOB == TOB!SafetySpec
=============================================================================
