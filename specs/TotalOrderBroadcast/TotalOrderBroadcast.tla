------------------------- MODULE TotalOrderBroadcast -------------------------
(***************************************************************************)
(* Total-order (atomic) broadcast, stated once, for every protocol spec of *)
(* tomkit to INSTANCE.                                                     *)
(*                                                                         *)
(* A protocol exposes two variables:                                       *)
(*   broadcast   the set of messages broadcast so far;                     *)
(*   delivered   [Proc -> Seq(Msg)], each process's delivery sequence.     *)
(* The properties below read only these two, so they apply to any         *)
(* protocol, and they are the TLA+ side of the trace checker's properties  *)
(* (checker/properties: integrity, total-order-weak, total-order-strong,   *)
(* liveness).                                                              *)
(*                                                                         *)
(* The module is also a specification in its own right (Spec): the most   *)
(* permissive protocol that keeps the properties. A process may deliver    *)
(* any broadcast message it has not delivered, provided its new sequence   *)
(* stays prefix-comparable with every other process's sequence. A protocol *)
(* refines SafetySpec exactly when it keeps Integrity and StrongTotalOrder *)
(* and delivers one message per step.                                      *)
(*                                                                         *)
(* Messages are pairs <<p, i>>: the i-th message broadcast by process p    *)
(* (the paper's mi and mi_id, 004 section 3.2.1.1); fuzz/tlc/trace.py      *)
(* reads the sender of a send record from the pair.                        *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Proc,     \* the processes (the paper's hosts)
    Msg,      \* the messages that may be broadcast
    Correct   \* the processes validity speaks for (all of Proc: the papers' hosts do not fail)

VARIABLES broadcast, delivered

vars == <<broadcast, delivered>>

Range(s) == {s[i] : i \in DOMAIN s}

\* s is a prefix of t
IsPrefix(s, t) == Len(s) <= Len(t) /\ SubSeq(t, 1, Len(s)) = s

Comparable(s, t) == IsPrefix(s, t) \/ IsPrefix(t, s)

\* m is delivered before m2 in sequence s (both in s)
Before(s, m, m2) ==
    \E i, j \in DOMAIN s : i < j /\ s[i] = m /\ s[j] = m2

TypeOK ==
    /\ broadcast \subseteq Msg
    /\ delivered \in [Proc -> Seq(Msg)]

-----------------------------------------------------------------------------
(* Integrity: a process delivers a message at most once, and only a        *)
(* message that was broadcast (Defago, Schiper, Urban 2004, sec. 2.2).     *)
NoDuplication ==
    \A p \in Proc : \A i, j \in DOMAIN delivered[p] :
        i # j => delivered[p][i] # delivered[p][j]

NoCreation ==
    \A p \in Proc : Range(delivered[p]) \subseteq broadcast

Integrity == NoDuplication /\ NoCreation

(* Weak (pairwise) total order: any two processes deliver the messages    *)
(* they both deliver in the same relative order.                           *)
WeakTotalOrder ==
    \A p, q \in Proc :
        \A m, m2 \in Range(delivered[p]) \cap Range(delivered[q]) :
            Before(delivered[p], m, m2) => ~Before(delivered[q], m2, m)

(* Strong (prefix) total order: of any two processes, one's delivery       *)
(* sequence is a prefix of the other's, so no process skips a message      *)
(* another delivered before (ToTo's agreed order, 000 section 2).          *)
StrongTotalOrder ==
    \A p, q \in Proc : Comparable(delivered[p], delivered[q])

(* Gap-free total order, the trace checker's total-order-strong (ToTo's    *)
(* agreed order read on a finished log): if p delivers m before m2, every  *)
(* process that delivers m2 delivers m before it; equivalently, any two   *)
(* processes that deliver m2 delivered the same sequence before it.        *)
(* StrongTotalOrder implies it; it is weaker on a prefix of a run: two     *)
(* processes that delivered <<m1>> and <<m2>> violate StrongTotalOrder at  *)
(* once (no continuation can repair them) but GapFreeTotalOrder only when  *)
(* one of them delivers the other's message, and a finite trace shows a   *)
(* violation only in the latter form. The broken variants' configs check  *)
(* it, so that their counterexamples are traces tomkit check rejects.      *)
GapFreeTotalOrder ==
    \A p, q \in Proc :
        \A i \in DOMAIN delivered[p], j \in DOMAIN delivered[q] :
            delivered[p][i] = delivered[q][j] =>
                SubSeq(delivered[p], 1, i) = SubSeq(delivered[q], 1, j)

(* Validity: a broadcast message is eventually delivered by every correct  *)
(* process. A temporal property: it holds only under the protocol's        *)
(* fairness.                                                               *)
Validity ==
    \A p \in Correct, m \in Msg :
        (m \in broadcast) ~> (m \in Range(delivered[p]))

-----------------------------------------------------------------------------
(* The abstract specification.                                            *)
Init ==
    /\ broadcast = {}
    /\ delivered = [p \in Proc |-> <<>>]

Broadcast(m) ==
    /\ m \notin broadcast
    /\ broadcast' = broadcast \cup {m}
    /\ UNCHANGED delivered

Deliver(p, m) ==
    /\ m \in broadcast \ Range(delivered[p])
    /\ \A q \in Proc : Comparable(Append(delivered[p], m), delivered[q])
    /\ delivered' = [delivered EXCEPT ![p] = Append(@, m)]
    /\ UNCHANGED broadcast

\* every broadcast message delivered everywhere: the run is over
Done ==
    /\ \A p \in Proc : Range(delivered[p]) = broadcast
    /\ broadcast = Msg
    /\ UNCHANGED vars

Next ==
    \/ \E m \in Msg : Broadcast(m)
    \/ \E p \in Proc, m \in Msg : Deliver(p, m)
    \/ Done

SafetySpec == Init /\ [][Next]_vars

Spec == SafetySpec /\ \A p \in Correct : WF_vars(\E m \in Msg : Deliver(p, m))
=============================================================================
