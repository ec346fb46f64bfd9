-------------------------------- MODULE ABCAST --------------------------------
(***************************************************************************)
(* ABCAST, Skeen's two-phase timestamp protocol as the ISIS system ran it, *)
(* following Dasser, "TOMP: A Total Ordering Multicast Protocol", section 2 *)
(* (shared/papers/004_dc7b72ae6843a254.txt).                               *)
(*                                                                         *)
(* Dissemination (2.1.1): a host multicasts m; every member (the sender    *)
(* too) "gives it a unique timestamp, puts it in the reception queue       *)
(* (R_Queue), and labels it undeliverable (ud)", then acknowledges with    *)
(* that timestamp. Timestamps are counter.hostid, "e.g. host1 timestamps   *)
(* incoming messages with the sequence 1.1, 2.1 and so on": a pair         *)
(* <<counter, host>> ordered lexicographically.                            *)
(* Decision (2.1.2): "As soon as the emitter host receives all the         *)
(* acknowledgements from all the hosts, it multicasts a 'validation        *)
(* message' including the greatest value of the proposed timestamps";      *)
(* a receiver assigns the final timestamp and labels the message dl.      *)
(* Delivery: a message is delivered iff "(1) it must be labelled as        *)
(* deliverable (dl); (2) it must be at the head of the reception queue".  *)
(*                                                                         *)
(* Decisions where the paper is silent or ambiguous:                       *)
(*  - Channels are reliable and UNORDERED (net is a set of packets): the   *)
(*    paper's section 2 assumes nothing on ordering, and ABCAST needs     *)
(*    none (a validation message follows every ack, hence every receipt). *)
(*  - The paper says only that "the timestamp is a local sequence number   *)
(*    incremented after each new message reception". Read literally       *)
(*    (ABCAST_LiteralClock.tla) TLC finds a total-order violation: a host *)
(*    that delivered m with final timestamp 2.3 can later propose 2.1 for  *)
(*    a new message. We follow Birman and Joseph 1987 (the paper's         *)
(*    [BirJos87]): a proposal exceeds every timestamp the host has seen,   *)
(*    so a host raises its counter to the counter of each final timestamp *)
(*    it receives (ReceiveFinal).                                          *)
(*  - Every host starts with counter 0 (Figure 1's 14.1, 15.2, 16.3 only   *)
(*    shift the counters).                                                 *)
(*  - A host's messages are broadcast in id order; the failure handling   *)
(*    the paper leaves to [BirJos87] is not modelled: every host is        *)
(*    correct.                                                             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Proc,        \* the hosts: a set of positive integers (the hostid of timestamps)
    Senders,     \* the hosts that broadcast
    PerSender    \* how many messages each of them broadcasts

Msg == Senders \X (1 .. PerSender)     \* <<p, i>>: the i-th message of host p
Sender(m) == m[1]

VARIABLES
    broadcast,   \* the messages broadcast so far
    delivered,   \* delivered[p]: the sequence p delivered
    clock,       \* clock[p]: p's local timestamp counter (local_ts)
    ts,          \* ts[p][m]: the timestamp m has in p's reception queue
    label,       \* label[p][m]: "none" (not received), "ud", "dl", "done" (delivered)
    proposals,   \* proposals[m][q]: the timestamp q proposed for m, at m's sender
    net          \* the packets in transit

vars == <<broadcast, delivered, clock, ts, label, proposals, net>>

NoTs == <<0, 0>>
TS == (Nat \X Nat)

\* timestamps counter.hostid are ordered by counter, then host id
Less(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
Max(a, b) == IF Less(a, b) THEN b ELSE a
MaxOf(S) == CHOOSE t \in S : \A u \in S : ~Less(t, u)

\* every packet has the same fields, so that TLC can compare any two
Packet(kind, m, src, dst, t) ==
    [kind |-> kind, msg |-> m, src |-> src, dst |-> dst, ts |-> t]

TOB == INSTANCE TotalOrderBroadcast WITH Correct <- Proc

TypeOK ==
    /\ TOB!TypeOK
    /\ clock \in [Proc -> Nat]
    /\ ts \in [Proc -> [Msg -> TS]]
    /\ label \in [Proc -> [Msg -> {"none", "ud", "dl", "done"}]]
    /\ proposals \in [Msg -> [Proc -> TS]]

\* the messages in p's reception queue
Queue(p) == {m \in Msg : label[p][m] \in {"ud", "dl"}}

Init ==
    /\ broadcast = {}
    /\ delivered = [p \in Proc |-> <<>>]
    /\ clock = [p \in Proc |-> 0]
    /\ ts = [p \in Proc |-> [m \in Msg |-> NoTs]]
    /\ label = [p \in Proc |-> [m \in Msg |-> "none"]]
    /\ proposals = [m \in Msg |-> [q \in Proc |-> NoTs]]
    /\ net = {}

-----------------------------------------------------------------------------
(* 2.1.1: the emitter multicasts m to the group (itself included).        *)
Broadcast(m) ==
    /\ m \notin broadcast
    /\ m[2] = 1 \/ <<m[1], m[2] - 1>> \in broadcast
    /\ broadcast' = broadcast \cup {m}
    /\ net' = net \cup {Packet("data", m, Sender(m), q, NoTs) : q \in Proc}
    /\ UNCHANGED <<delivered, clock, ts, label, proposals>>

(* 2.1.1: a receiver timestamps m, queues it as ud and acknowledges.      *)
ReceiveData(p, m) ==
    LET pkt == Packet("data", m, Sender(m), p, NoTs)
        t == <<clock[p] + 1, p>>
    IN /\ pkt \in net
       /\ clock' = [clock EXCEPT ![p] = @ + 1]
       /\ ts' = [ts EXCEPT ![p][m] = t]
       /\ label' = [label EXCEPT ![p][m] = "ud"]
       /\ net' = (net \ {pkt}) \cup {Packet("ack", m, p, Sender(m), t)}
       /\ UNCHANGED <<broadcast, delivered, proposals>>

(* 2.1.2: the emitter collects the proposals; with the last one it         *)
(* multicasts the greatest as the final timestamp.                         *)
ReceiveAck(m, q) ==
    \E pkt \in net :
        /\ pkt.kind = "ack" /\ pkt.msg = m /\ pkt.src = q
        /\ LET props == [proposals[m] EXCEPT ![q] = pkt.ts]
               final == MaxOf({props[r] : r \in Proc})
           IN /\ proposals' = [proposals EXCEPT ![m] = props]
              /\ net' = (net \ {pkt}) \cup
                        IF \A r \in Proc : props[r] # NoTs
                        THEN {Packet("final", m, Sender(m), r, final) : r \in Proc}
                        ELSE {}
        /\ UNCHANGED <<broadcast, delivered, clock, ts, label>>

(* 2.1.2: a receiver assigns the final timestamp and labels m dl; it      *)
(* raises its counter past the final timestamp (BirJos87, see above).     *)
ReceiveFinal(p, m) ==
    \E pkt \in net :
        /\ pkt.kind = "final" /\ pkt.msg = m /\ pkt.dst = p
        /\ ts' = [ts EXCEPT ![p][m] = pkt.ts]
        /\ label' = [label EXCEPT ![p][m] = "dl"]
        /\ clock' = [clock EXCEPT ![p] = IF @ < pkt.ts[1] THEN pkt.ts[1] ELSE @]
        /\ net' = net \ {pkt}
        /\ UNCHANGED <<broadcast, delivered, proposals>>

\* m has the lowest timestamp in p's queue (timestamps in a queue are distinct)
AtHead(p, m) ==
    /\ m \in Queue(p)
    /\ \A m2 \in Queue(p) \ {m} : Less(ts[p][m], ts[p][m2])

DeliverMsg(p, m) ==
    /\ delivered' = [delivered EXCEPT ![p] = Append(@, m)]
    /\ label' = [label EXCEPT ![p][m] = "done"]
    /\ UNCHANGED <<broadcast, clock, ts, proposals, net>>

(* 2.1.2: deliver iff (1) dl and (2) at the head of the queue.            *)
Deliver(p) ==
    \E m \in Msg :
        /\ AtHead(p, m)
        /\ label[p][m] = "dl"
        /\ DeliverMsg(p, m)

\* every message broadcast and delivered everywhere: the run is over
Done ==
    /\ broadcast = Msg
    /\ \A p \in Proc : label[p] = [m \in Msg |-> "done"]
    /\ UNCHANGED vars

(* The actions every variant shares; a broken variant (ABCAST_*.tla)      *)
(* swaps the final-timestamp or the delivery rule and keeps these.        *)
Exchange ==
    \/ \E m \in Msg : Broadcast(m)
    \/ \E p \in Proc, m \in Msg : ReceiveData(p, m)
    \/ \E m \in Msg, q \in Proc : ReceiveAck(m, q)

\* Weak fairness: packets in transit are eventually received (one by one:
\* there are finitely many).
ExchangeFairness ==
    /\ WF_vars(\E p \in Proc, m \in Msg : ReceiveData(p, m))
    /\ WF_vars(\E m \in Msg, q \in Proc : ReceiveAck(m, q))

Next ==
    \/ Exchange
    \/ \E p \in Proc, m \in Msg : ReceiveFinal(p, m)
    \/ \E p \in Proc : Deliver(p)
    \/ Done

\* and a host with a deliverable head eventually delivers it
Spec ==
    /\ Init /\ [][Next]_vars
    /\ ExchangeFairness
    /\ WF_vars(\E p \in Proc, m \in Msg : ReceiveFinal(p, m))
    /\ \A p \in Proc : WF_vars(Deliver(p))

-----------------------------------------------------------------------------
(* The properties, stated once in TotalOrderBroadcast.                     *)
Integrity == TOB!Integrity
WeakTotalOrder == TOB!WeakTotalOrder
StrongTotalOrder == TOB!StrongTotalOrder
GapFreeTotalOrder == TOB!GapFreeTotalOrder
Validity == TOB!Validity
\* ABCAST refines the abstract total-order broadcast
RefinesTOB == TOB!SafetySpec
=============================================================================
