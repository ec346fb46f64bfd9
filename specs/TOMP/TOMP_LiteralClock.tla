--------------------------- MODULE TOMP_LiteralClock ---------------------------
(***************************************************************************)
(* TOMP with local_ts exactly as 004 section 3.2.1.1 defines it: "The     *)
(* local timestamp variable incremented after each new message reception" *)
(* and never raised by a final timestamp. The anticipation of 3.2.3.2     *)
(* does not save it: TLC finds the same kind of violation as in           *)
(* ABCAST_LiteralClock (a host that delivered m later proposes a smaller  *)
(* timestamp for a new message, which ends up ordered before m elsewhere).*)
(***************************************************************************)
EXTENDS TOMP

ReceiveTsLiteral(q, p) ==
    /\ CanTake(q, p, "ts")
    /\ LET pkt == Front(q, p)
           m == pkt.msg
       IN /\ ts' = [ts EXCEPT ![p] = [mk \in Msg |->
                       IF mk = m THEN pkt.ts ELSE Raised(p, mk, pkt.mids, pkt.maxts)]]
          /\ label' = [label EXCEPT ![p][m] = "dl"]
          /\ chan' = [chan EXCEPT ![q][p] = Tail(@)]
    /\ UNCHANGED <<broadcast, delivered, clock, nextMid, acked, tsFinal, minNextMid,
                   maxNextTs>>

BuggyNext ==
    \/ Exchange
    \/ \E q, p \in Proc : ReceiveAck(q, p)
    \/ \E q, p \in Proc : ReceiveTsLiteral(q, p)
BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
