---------------------------- MODULE TOMP_NoOffset ----------------------------
(***************************************************************************)
(* TOMP raising the waiting messages without the id offset:               *)
(* mk_ts <- Maximum(mk_ts, max_next_ts(k)) instead of                      *)
(* Maximum(mk_ts, max_next_ts(k) + Delta), Delta = mk_id - min_next_mid(k) *)
(* (004 section 3.2.3.2).                                                  *)
(*                                                                         *)
(* Not a bug: max_next_ts(k) + Delta is a lower bound of mk's final        *)
(* timestamp, and dropping Delta only weakens the bound, so the raised     *)
(* timestamp still never exceeds the final one. TLC finds no violation:   *)
(* the offset buys latency (earlier reordering), not safety. Kept as a     *)
(* checked config so that the claim stays checked.                         *)
(***************************************************************************)
EXTENDS TOMP

RaisedNoOffset(p, mk, mins, maxs) ==
    LET k == Sender(mk)
    IN IF label[p][mk] = "ud" /\ Id(mk) - mins[k] >= 0
       THEN Max(ts[p][mk], maxs[k])
       ELSE ts[p][mk]

ReceiveTsNoOffset(q, p) ==
    /\ CanTake(q, p, "ts")
    /\ LET pkt == Front(q, p)
           m == pkt.msg
       IN /\ ts' = [ts EXCEPT ![p] = [mk \in Msg |->
                       IF mk = m THEN pkt.ts ELSE RaisedNoOffset(p, mk, pkt.mids, pkt.maxts)]]
          /\ label' = [label EXCEPT ![p][m] = "dl"]
          /\ clock' = [clock EXCEPT ![p] = IF @ < pkt.ts[1] THEN pkt.ts[1] ELSE @]
          /\ chan' = [chan EXCEPT ![q][p] = Tail(@)]
    /\ UNCHANGED <<broadcast, delivered, nextMid, acked, tsFinal, minNextMid, maxNextTs>>

VariantNext ==
    \/ Exchange
    \/ \E q, p \in Proc : ReceiveAck(q, p)
    \/ \E q, p \in Proc : ReceiveTsNoOffset(q, p)
VariantSpec == Init /\ [][VariantNext]_vars
=============================================================================
