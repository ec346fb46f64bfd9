------------------------------ MODULE QoS_LiteralJoin ------------------------------
(***************************************************************************)
(* A broken QoS: the join window read literally (003 section 3.3: "During *)
(* slot s_j, p assumes all processes to be correct"). With clocks Eps     *)
(* apart, r can join (clock ahead, join slot s_r) just before p wakes      *)
(* (clock behind, join slot s_p < s_r): p never hears r's join, times r   *)
(* out in s_p, where r does not send yet, and from then on never waits    *)
(* for r. The reading aid's B5 example (Delta = 100, delta = 50, eps = 10: *)
(* C_r = 200 gives s_r = 4, C_p = 195 gives s_p = 3) in ticks: Delta = 2, *)
(* delta = eps = 1, C_r = 2 gives s_r = 3, C_p = 1 gives s_p = 2. p skips  *)
(* r's slot-s_r message, which the others deliver, and delivers the next   *)
(* sender's: both p and r are correct, so 003's agreement fails.           *)
(***************************************************************************)
EXTENDS QoS

BuggyNext == ProtocolNext(TimeoutLen, LiteralWindow)
BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
