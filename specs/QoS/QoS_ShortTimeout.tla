------------------------------ MODULE QoS_ShortTimeout ------------------------------
(***************************************************************************)
(* A broken QoS: the failure timeout is delta after the local end of the  *)
(* slot, the clock skew forgotten (003 section 3.3 waits "more than       *)
(* delta + eps"). A receiver whose clock runs ahead of a correct sender's  *)
(* times it out while its last block is still in flight, skips its        *)
(* messages in that slot and every later one, and delivers the next       *)
(* sender's; the others deliver them. Order among the messages both       *)
(* deliver is kept (the key (slot, index) is global): agreement among      *)
(* correct processes is what breaks, in a static crash-free run, where 003 *)
(* promises the gap-free order.                                            *)
(***************************************************************************)
EXTENDS QoS

ShortTimeout == Delay

BuggyNext == ProtocolNext(ShortTimeout, SafeWindow)
BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
