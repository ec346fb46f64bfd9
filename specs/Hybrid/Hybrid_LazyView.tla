---------------------------- MODULE Hybrid_LazyView ----------------------------
(***************************************************************************)
(* Why delivery must be eager at a view change (decision D4 of Hybrid.tla). *)
(* Figure 4 of Rodrigues, Fonseca and Verissimo ends every receipt with    *)
(* deliverInOrder, so when a view is delivered a process has delivered     *)
(* everything deliverable, and after the flush every survivor is at the   *)
(* same point of the order. Here a survivor may install the view while it *)
(* can still deliver. The test of 5.3.1, "if there is no active process   *)
(* in such configuration", then reads each survivor's own progress.       *)
(*                                                                         *)
(* TLC finds: process 2, the only active process, tickets the             *)
(* goingToActive of process 1 and crashes. Process 1 has delivered it and *)
(* is active; process 3 has not, finds no active process and promotes     *)
(* itself. The survivors end with different configurations (SameConfig), *)
(* and 3's tickets are not waited for by 1.                                *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"lazy"}

BuggySpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
SomeActive == H!SomeActive
SameConfig == H!SameConfig
=============================================================================
