--------------------------- MODULE Hybrid_LossyCrash ---------------------------
(***************************************************************************)
(* Why Hybrid.tla keeps a crashed process's messages (README.md, "what is  *)
(* abstracted"). The vs-multicast property of section 5 of Rodrigues,      *)
(* Fonseca and Verissimo binds only processes that install the next view,  *)
(* so the last messages of a crashed process that no survivor received     *)
(* may be lost. The protocol is then not uniform: the only active process  *)
(* tickets its own message, delivers it at once (no other active process   *)
(* to wait for), and crashes before anyone receives it; the survivors      *)
(* never deliver it and order other messages in its place.                 *)
(*                                                                         *)
(* TLC finds that run against GapFreeTotalOrder, which speaks for crashed  *)
(* processes too (Hybrid_LossyCrash.cfg); the survivors' order holds       *)
(* (SurvivorOrder, Hybrid_LossySurvivors.cfg). The paper claims no         *)
(* uniform agreement: not a bug.                                           *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"lossy"}

VariantSpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
SurvivorOrder == H!SurvivorOrder
StrongTotalOrder == H!StrongTotalOrder
=============================================================================
