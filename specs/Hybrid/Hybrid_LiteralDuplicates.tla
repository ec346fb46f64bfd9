----------------------- MODULE Hybrid_LiteralDuplicates -----------------------
(***************************************************************************)
(* Figure 4 of Rodrigues, Fonseca and Verissimo read literally on tickets: *)
(* issueTickets tickets a queued message M assigned to p_i if "T(M) not in *)
(* LT_i", the list of tickets not yet sent, which every send empties; and  *)
(* deliverInOrder runs "while T(M) = queueHead(OT_i) /\ M in Q_i", removing *)
(* T(M) only (decision D3 of Hybrid.tla; reading aid A2).                  *)
(*                                                                         *)
(* TLC finds: with two active processes, the sequencer of a passive       *)
(* process's message tickets it, and tickets it again on its next receipt, *)
(* before the first ticket is stable. The message is delivered by the     *)
(* first ticket; the second reaches the head of the queue and names a     *)
(* message no longer in Q, so every process's delivery stops for ever    *)
(* (invariant NoDeadHead).                                                 *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"dup"}

BuggySpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
NoDeadHead == H!NoDeadHead
=============================================================================
