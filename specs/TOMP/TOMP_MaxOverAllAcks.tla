-------------------------- MODULE TOMP_MaxOverAllAcks --------------------------
(***************************************************************************)
(* A broken TOMP: the sender takes max_next_ts(j) over every ack, not only *)
(* over the acks whose ackmi_next_mid(j) is the least. The paper keeps    *)
(* "the lesser timestamp that might be assigned to the message identified *)
(* by ackmi_next_mid(j)" (004 section 3.2.2.3, note (2)): an ack from a   *)
(* host that already received that message says nothing about it, and its *)
(* larger ack_ts inflates the bound. A host then raises a waiting message *)
(* above its final timestamp and delivers mi before it, while the others  *)
(* deliver it before mi.                                                   *)
(***************************************************************************)
EXTENDS TOMP

ReceiveAckMaxAll(q, p) ==
    /\ CanTake(q, p, "ack")
    /\ LET a == Front(q, p)
           m == a.msg
           fin == Max(tsFinal[m], a.ts)
           mins == [j \in Proc |-> IF a.mids[j] < minNextMid[m][j]
                                   THEN a.mids[j] ELSE minNextMid[m][j]]
           \* the "else if (ackmi_next_mid(j) == min_next_mid(j))" test dropped
           maxs == [j \in Proc |-> Max(maxNextTs[m][j], Plus(a.ts, 1))]
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

BuggyNext ==
    \/ Exchange
    \/ \E q, p \in Proc : ReceiveAckMaxAll(q, p)
    \/ \E q, p \in Proc : ReceiveTs(q, p)
BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
