------------------------------ MODULE Commit ------------------------------
(***************************************************************************)
(* Atomic commitment of one transaction among participants, without a     *)
(* coordinator's details: a working participant may prepare; it commits   *)
(* only once every participant has prepared or committed, and it aborts    *)
(* only while nobody has committed. The participants must agree.          *)
(*                                                                         *)
(* Once every participant has decided nothing more can happen: that is the *)
(* end of the protocol, not a deadlock, so the config says                 *)
(* CHECK_DEADLOCK FALSE, as TLC 1.8's configs do.                          *)
(*                                                                         *)
(* A fixture of tomkit's tests, in the style of the public TLA+ examples.  *)
(***************************************************************************)
CONSTANT Participant

VARIABLE state   \* state[p]: where participant p is

States == {"working", "prepared", "committed", "aborted"}

TypeOK == state \in [Participant -> States]

Init == state = [p \in Participant |-> "working"]

Prepare(p) ==
    /\ state[p] = "working"
    /\ state' = [state EXCEPT ![p] = "prepared"]

Commit(p) ==
    /\ state[p] = "prepared"
    /\ \A q \in Participant : state[q] \in {"prepared", "committed"}
    /\ state' = [state EXCEPT ![p] = "committed"]

Abort(p) ==
    /\ state[p] \in {"working", "prepared"}
    /\ \A q \in Participant : state[q] # "committed"
    /\ state' = [state EXCEPT ![p] = "aborted"]

Next == \E p \in Participant : Prepare(p) \/ Commit(p) \/ Abort(p)

Consistent ==
    \A p, q \in Participant : ~(state[p] = "aborted" /\ state[q] = "committed")
=============================================================================
