------------------------------ MODULE Hybrid_Fig4ViewReassign ------------------------------
(***************************************************************************)
(* Figure 4 of Rodrigues, Fonseca and Verissimo read literally in the view *)
(* branch: a process reassigns its messages only "if S_i not in C_temp and *)
(* some j in C_temp is active", tested before the promotion of the highest *)
(* process; when the only active process crashes, no passive process       *)
(* reassigns (section 5.3.1's text and decision D6 of Hybrid.tla do).       *)
(*                                                                         *)
(* TLC finds a deadlock: the message of a passive process assigned to the  *)
(* crashed sequencer keeps that descriptor and is never ticketed.          *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"fig4view"}

BuggySpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
FifoOrder == H!FifoOrder
SomeActive == H!SomeActive
=============================================================================
