----------------------------- MODULE QoS_EarlyJoinSlot -----------------------------
(***************************************************************************)
(* The join slot one slot earlier than 003's formula (B2):                *)
(*     s_j = floor(C_r/Delta) + ceil((delta+eps)/Delta)                   *)
(* without the "+ 1". The paper's argument needs s_j*Delta > C_r + delta  *)
(* + eps, so that every process has r's join before its clock reaches the *)
(* start of s_j; this formula breaks that (JoinBeforeSlot fails). Does the *)
(* order need it? A member consults r's join only at r's turn in slot s_j, *)
(* which comes after the lower-index senders' slot-s_j batches arrived,   *)
(* i.e. after the slot's end: the config checks the order alone.           *)
(***************************************************************************)
EXTENDS QoS

EarlyJoinSlot(c) == c \div SlotLen + CeilDiv(Delay + Eps, SlotLen)

EarlyNext == ProtocolNext(TimeoutLen, SafeWindow, EarlyJoinSlot)
EarlySpec == Init /\ [][EarlyNext]_vars
=============================================================================
