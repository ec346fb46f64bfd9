------------------------ MODULE MCTotalOrderBroadcast ------------------------
(* Model values for TotalOrderBroadcast.cfg: TLC's config files cannot    *)
(* write tuples, so the message set is defined here (the tlaplus/Examples *)
(* MC-module convention).                                                  *)
EXTENDS TotalOrderBroadcast

\* one message from each of processes 1 and 2
MCMsg == {<<1, 1>>, <<2, 1>>}
=============================================================================
