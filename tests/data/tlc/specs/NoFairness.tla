---- MODULE NoFairness ----
(* ABCAST without fairness: nothing forces delivery, so Validity fails on  *)
(* a behaviour that stutters forever (a test fixture for temporal output). *)
EXTENDS ABCAST
NoFairSpec == Init /\ [][Next]_vars
====
