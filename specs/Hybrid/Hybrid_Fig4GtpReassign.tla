------------------------------ MODULE Hybrid_Fig4GtpReassign ------------------------------
(***************************************************************************)
(* Figure 4 of Rodrigues, Fonseca and Verissimo read literally in the      *)
(* goingToPassive branch: when a goingToPassive of p_j is delivered and    *)
(* not aborted, every process whose state is not active sets l_i := c_j    *)
(* (the sender's counter, not its own last delivered message) and sends    *)
(* reassign ]l_i, c_i] (decision D6 of Hybrid.tla; reading aid A3).        *)
(*                                                                         *)
(* TLC finds a deadlock: a passive process whose message is still waiting  *)
(* for its sequencer p_j reassigns a range that starts after it, so the    *)
(* message keeps a descriptor nobody tickets and is never delivered.       *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"fig4gtp"}

BuggySpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
FifoOrder == H!FifoOrder
SomeActive == H!SomeActive
=============================================================================
