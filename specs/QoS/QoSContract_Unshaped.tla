------------------------- MODULE QoSContract_Unshaped -------------------------
(***************************************************************************)
(* The broken variant `unshaped` of model/qos/reserve.py: the sender sends *)
(* what the application multicasts at once, over its reservation. 003     *)
(* section 2.1 assumes the application never exceeds r; without the      *)
(* shaper the network sees more than r' (DeclaredMax fails).               *)
(***************************************************************************)
EXTENDS QoSContract

UnshapedSpec == Init /\ [][ContractNext(FALSE, 1)]_vars
=============================================================================
