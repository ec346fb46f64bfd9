------------------------- MODULE ABCAST_LiteralClock -------------------------
(***************************************************************************)
(* ABCAST with the counter exactly as 004 section 2.1.1 words it: "The    *)
(* timestamp is a local sequence number incremented after each new        *)
(* message reception" and nothing more; a final timestamp does not raise  *)
(* it. TLC finds a total-order violation: host 1 delivers m (final 2.3)   *)
(* before m' reaches it, then proposes 2.1 for m'; m' ends with final     *)
(* 2.2 < 2.3, and host 3, where m' waited ahead of m, delivers m' first.  *)
(* ABCAST.tla therefore raises the counter on each final timestamp, as    *)
(* Birman and Joseph 1987 do.                                              *)
(***************************************************************************)
EXTENDS ABCAST

ReceiveFinalLiteral(p, m) ==
    \E pkt \in net :
        /\ pkt.kind = "final" /\ pkt.msg = m /\ pkt.dst = p
        /\ ts' = [ts EXCEPT ![p][m] = pkt.ts]
        /\ label' = [label EXCEPT ![p][m] = "dl"]
        /\ net' = net \ {pkt}
        /\ UNCHANGED <<broadcast, delivered, clock, proposals>>

BuggyNext ==
    \/ Exchange
    \/ \E p \in Proc, m \in Msg : ReceiveFinalLiteral(p, m)
    \/ \E p \in Proc : Deliver(p)
    \/ Done

BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
