----------------------------- MODULE Sequencer -----------------------------
(***************************************************************************)
(* Fixed-sequencer atomic broadcast: a node hands each message to the      *)
(* sequencer, which appends it to one global order; every node delivers    *)
(* the messages in that order.                                             *)
(*                                                                         *)
(* With FastPath the origin of a message delivers it at once, as it hands *)
(* it over, instead of waiting for its place in the order: a latency trick *)
(* that breaks total order when two nodes broadcast concurrently (each     *)
(* delivers its own message first).                                        *)
(*                                                                         *)
(* A fixture of tomkit's tests, in the style of the public TLA+ examples:  *)
(* a broadcast protocol with its own variable names, turned into a v1      *)
(* trace through Sequencer.toml or the operator TraceMap.                  *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS
    Node,          \* the nodes
    MsgsPerNode,   \* how many messages each node broadcasts
    FastPath       \* TRUE: the origin delivers its own message at once

VARIABLES
    submitted,     \* the messages handed to the sequencer so far, <<node, k>>
    order,         \* the sequencer's order, a sequence of messages
    log            \* log[n]: the messages node n has delivered, in order

vars == <<submitted, order, log>>

Msg == Node \X (1..MsgsPerNode)

Range(s) == {s[i] : i \in DOMAIN s}

TypeOK ==
    /\ submitted \subseteq Msg
    /\ order \in Seq(Msg)
    /\ log \in [Node -> Seq(Msg)]

Init ==
    /\ submitted = {}
    /\ order = <<>>
    /\ log = [n \in Node |-> <<>>]

Submit(n, k) ==
    /\ <<n, k>> \notin submitted
    /\ k = 1 \/ <<n, k - 1>> \in submitted
    /\ submitted' = submitted \cup {<<n, k>>}
    /\ log' = IF FastPath THEN [log EXCEPT ![n] = Append(@, <<n, k>>)] ELSE log
    /\ UNCHANGED order

Sequence(m) ==
    /\ m \in submitted \ Range(order)
    /\ order' = Append(order, m)
    /\ UNCHANGED <<submitted, log>>

\* n delivers the first message of the order it has not delivered yet
Deliver(n) ==
    /\ \E i \in DOMAIN order :
        /\ order[i] \notin Range(log[n])
        /\ \A j \in 1..(i - 1) : order[j] \in Range(log[n])
        /\ log' = [log EXCEPT ![n] = Append(@, order[i])]
    /\ UNCHANGED <<submitted, order>>

Next ==
    \/ \E n \in Node, k \in 1..MsgsPerNode : Submit(n, k)
    \/ \E m \in Msg : Sequence(m)
    \/ \E n \in Node : Deliver(n)

Spec == Init /\ [][Next]_vars

\* any two nodes deliver the messages they both deliver in the same order
Before(s, m, m2) == \E i, j \in DOMAIN s : i < j /\ s[i] = m /\ s[j] = m2

SameOrder ==
    \A n, n2 \in Node : \A m, m2 \in Msg :
        Before(log[n], m, m2) => ~Before(log[n2], m2, m)

\* for tomkit: the trace exploration operator of --trace-map TraceMap
TraceMap ==
    [deliveries |-> log,
     sends |-> [n \in Node |-> {m \in submitted : m[1] = n}]]
=============================================================================
