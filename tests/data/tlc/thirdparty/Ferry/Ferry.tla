------------------------------- MODULE Ferry -------------------------------
(***************************************************************************)
(* The river-crossing puzzle: a farmer must take a wolf, a goat and a      *)
(* cabbage across a river in a boat that holds him and at most one of      *)
(* them. Left on a bank without the farmer, the wolf eats the goat and the *)
(* goat eats the cabbage.                                                  *)
(*                                                                         *)
(* As in the classic puzzle specifications, the invariant NotSolved is     *)
(* meant to be violated: TLC's counterexample is a solution, and a         *)
(* breadth-first search finds a shortest one.                              *)
(*                                                                         *)
(* A fixture of tomkit's tests, written in the style of the public TLA+    *)
(* examples: its variables have nothing to do with broadcast.              *)
(***************************************************************************)
EXTENDS FiniteSets

Items == {"wolf", "goat", "cabbage"}

VARIABLES
    near,   \* the items on the near bank
    far,    \* the items on the far bank
    boat    \* the bank the farmer and his boat are on

vars == <<near, far, boat>>

TypeOK ==
    /\ near \subseteq Items
    /\ far \subseteq Items
    /\ near \cap far = {}
    /\ boat \in {"near", "far"}

\* a bank the farmer has left is safe when nobody there eats anybody
Safe(bank) ==
    /\ ~({"wolf", "goat"} \subseteq bank)
    /\ ~({"goat", "cabbage"} \subseteq bank)

Init ==
    /\ near = Items
    /\ far = {}
    /\ boat = "near"

\* the farmer crosses with cargo, a set of at most one item from his bank
Cross(cargo) ==
    IF boat = "near"
    THEN /\ cargo \subseteq near
         /\ near' = near \ cargo
         /\ far' = far \cup cargo
         /\ Safe(near')
         /\ boat' = "far"
    ELSE /\ cargo \subseteq far
         /\ far' = far \ cargo
         /\ near' = near \cup cargo
         /\ Safe(far')
         /\ boat' = "near"

CrossAlone == Cross({})

CrossWith == \E item \in Items : Cross({item})

Next == CrossAlone \/ CrossWith

Spec == Init /\ [][Next]_vars

NotSolved == far # Items

\* what a reader wants to see of a state (used by FerryAlias.cfg)
Picture == [left |-> near, right |-> far, farmer |-> boat,
            across |-> Cardinality(far)]
=============================================================================
