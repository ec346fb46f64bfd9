-------------------------- MODULE QoSContract_EarlyRN --------------------------
(***************************************************************************)
(* The broken variant `early-rn` of model/qos/reserve.py: RN(r) made in    *)
(* slot s holds from s itself. Part of s already went out under the old r; *)
(* after a decrease the slot exceeds the new max (DeclaredMax fails).      *)
(***************************************************************************)
EXTENDS QoSContract

EarlyRNSpec == Init /\ [][ContractNext(TRUE, 0)]_vars
=============================================================================
