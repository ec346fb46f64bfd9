------------------------- MODULE Hybrid_LiteralDiscard -------------------------
(***************************************************************************)
(* Section 5.2 of Rodrigues, Fonseca and Verissimo, "all of its messages,  *)
(* delivered by the vs-layer before the view change but not yet ordered by *)
(* its sequencer, are silently discarded", with "ordered" read as Figure   *)
(* 4's OT ("list of ordered tickets": stable tickets) instead of "ticket   *)
(* received" (decision D8 of Hybrid.tla). At the view change, after the    *)
(* flush and with eager delivery, no queued ticket is stable, so this      *)
(* reading discards every queued message of the crashed process. TLC      *)
(* finds no violation: every survivor holds the same messages then, so    *)
(* they all discard the same ones. Not a bug; kept to show it.            *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Proc, Senders, PerSender, InitActive, GoActive, GoPassive, ChgSeq, Crashable,
          MaxCrash

VARIABLES broadcast, delivered, ls, net, rcvd, alive, view, used

H == INSTANCE Hybrid WITH Literal <- {"discard"}

VariantSpec == H!Spec
TypeOK == H!TypeOK
Integrity == H!Integrity
WeakTotalOrder == H!WeakTotalOrder
GapFreeTotalOrder == H!GapFreeTotalOrder
StrongTotalOrder == H!StrongTotalOrder
FifoOrder == H!FifoOrder
SomeActive == H!SomeActive
SameConfig == H!SameConfig
=============================================================================
