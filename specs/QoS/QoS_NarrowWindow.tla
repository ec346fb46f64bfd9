----------------------------- MODULE QoS_NarrowWindow -----------------------------
(***************************************************************************)
(* The join window without the safe reading's "+ 1" (B5):                 *)
(*     [s_j, s_j + ceil(eps/Delta)]                                        *)
(* A join r sent before p woke has C_r <= C_p + eps, hence                 *)
(* s_r <= s_p + ceil(eps/Delta): the narrow window already holds s_r. The  *)
(* config is the B5 scenario (1 member, 2 joiners, 4 slots).               *)
(***************************************************************************)
EXTENDS QoS

NarrowWindow(sj) == sj .. sj + CeilDiv(Eps, SlotLen)

NarrowNext == ProtocolNext(TimeoutLen, NarrowWindow, JoinSlot)
NarrowSpec == Init /\ [][NarrowNext]_vars
=============================================================================
