------------------------- MODULE ABCAST_EarlyDelivery -------------------------
(***************************************************************************)
(* A broken ABCAST: a host delivers the head of its reception queue        *)
(* without waiting for its final timestamp, i.e. it drops condition (1),  *)
(* "it must be labelled as deliverable (dl)", of 004 section 2.1.2.       *)
(* TLC finds a run where two hosts deliver two messages in opposite       *)
(* orders: the early delivery used a proposed timestamp that the final    *)
(* one later overtook.                                                     *)
(***************************************************************************)
EXTENDS ABCAST

\* the head is delivered whatever its label (ud or dl)
DeliverEarly(p) ==
    \E m \in Msg :
        /\ AtHead(p, m)
        /\ DeliverMsg(p, m)

BuggyNext ==
    \/ Exchange
    \/ \E p \in Proc, m \in Msg : ReceiveFinal(p, m)
    \/ \E p \in Proc : DeliverEarly(p)
    \/ Done

BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
