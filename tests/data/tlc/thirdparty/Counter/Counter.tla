------------------------------ MODULE Counter ------------------------------
(***************************************************************************)
(* A counter modulo Max + 1, with its type invariant proved for TLAPS: the *)
(* module EXTENDS TLAPS for the proof's backend pragmas (PTL, SMT), which  *)
(* TLC never evaluates but must find.                                      *)
(*                                                                         *)
(* A fixture of tomkit's tests, in the style of the public TLA+ examples.  *)
(***************************************************************************)
EXTENDS Naturals, TLAPS

CONSTANT Max
ASSUME MaxType == Max \in Nat

VARIABLE count

TypeOK == count \in 0..Max

Init == count = 0

Next == count' = IF count < Max THEN count + 1 ELSE 0

Spec == Init /\ [][Next]_count

THEOREM TypeCorrect == Spec => []TypeOK
<1>1. Init => TypeOK
  BY MaxType DEF Init, TypeOK
<1>2. TypeOK /\ [Next]_count => TypeOK'
  BY MaxType, SMT DEF TypeOK, Next
<1>. QED
  BY <1>1, <1>2, PTL DEF Spec
=============================================================================
