------------------------------ MODULE Hybrid_LiteralOT ------------------------------
(***************************************************************************)
(* Figure 4 of Rodrigues, Fonseca and Verissimo read literally: the main   *)
(* loop, on every receipt, moves "tickets in order from UT to OT" (those   *)
(* stable against the configuration of that moment) and deliverInOrder     *)
(* delivers the head of OT whenever its message is queued, with no         *)
(* further stability test (decision D1 of Hybrid.tla; reading aid A1).     *)
(*                                                                         *)
(* TLC finds: the sole active process 2 tickets the goingToActive G of     *)
(* process 1 and then its own message X; process 3 receives both tickets   *)
(* before G itself, so both are stable (2 is the only active process) and  *)
(* go to OT; once G arrives, 3 delivers G and then X. Process 1, active    *)
(* after G, tickets its message Y with the number of X and a smaller       *)
(* issuer id, so Y precedes X: 1 delivers Y, X and 3 delivers X, Y.         *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"ot"}

BuggySpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
FifoOrder == H!FifoOrder
SomeActive == H!SomeActive
=============================================================================
