------------------------------- MODULE TLAPS -------------------------------
(***************************************************************************)
(* tomkit's stand-in for the TLA+ Proof System's TLAPS module, so that TLC *)
(* can check a spec that EXTENDS TLAPS for its theorems.                   *)
(*                                                                         *)
(* In TLAPS every operator below is a backend pragma: a name cited in a    *)
(* proof step (BY PTL, BY Zenon, BY SMTT(30)) that tells the proof manager *)
(* which prover to call. Its value is never used by a spec's behaviour:    *)
(* TLAPS defines each of them as TRUE and attaches the prover directive in *)
(* a comment. TLC does not check proofs, so the names only have to exist   *)
(* and be evaluable; each is TRUE here too, with the same arity. Two       *)
(* theorems of the module are stated (without proof) so that proofs can   *)
(* cite them.                                                              *)
(*                                                                         *)
(* Shipped by tomkit on TLC's module path after the spec's folder and the  *)
(* user's --lib folders, so the real module (from a tlapm installation,    *)
(* given with --lib) takes precedence.                                     *)
(***************************************************************************)

\* SMT solvers: the default one, then by name; the ...T forms take a time-out
SMT == TRUE
SMTT(timeout) == TRUE
CVC3 == TRUE
CVC3T(timeout) == TRUE
CVC4 == TRUE
CVC4T(timeout) == TRUE
Yices == TRUE
YicesT(timeout) == TRUE
veriT == TRUE
veriTT(timeout) == TRUE
Z3 == TRUE
Z3T(timeout) == TRUE
Zipper == TRUE
ZipperT(timeout) == TRUE
Spass == TRUE
SpassT(timeout) == TRUE
SimpleArithmetic == TRUE

\* propositional temporal logic (the LS4 backend)
LS4 == TRUE
LS4T(timeout) == TRUE
PTL == TRUE
PropositionalTemporalLogic == TRUE

\* Zenon, with longer time-outs
Zenon == TRUE
ZenonT(timeout) == TRUE
SlowZenon == TRUE
SlowerZenon == TRUE
VerySlowZenon == TRUE
SlowestZenon == TRUE

\* Isabelle: its default tactic, a named tactic, a time-out, both
Isa == TRUE
IsaT(timeout) == TRUE
IsaM(tactic) == TRUE
IsaMT(tactic, timeout) == TRUE
IsaWithSetExtensionality == TRUE
Auto == TRUE
SlowAuto == TRUE
SlowerAuto == TRUE
SlowestAuto == TRUE
Force == TRUE
SlowForce == TRUE
SlowerForce == TRUE
SlowestForce == TRUE
SimplifyAndSolve == TRUE
SlowSimplifyAndSolve == TRUE
SlowerSimplifyAndSolve == TRUE
SlowestSimplifyAndSolve == TRUE
Simplification == TRUE
SlowSimplification == TRUE
SlowerSimplification == TRUE
SlowestSimplification == TRUE
Blast == TRUE
SlowBlast == TRUE
SlowerBlast == TRUE
SlowestBlast == TRUE
AutoBlast == TRUE

\* several backends in turn
AllProvers == TRUE
AllProversT(timeout) == TRUE
AllSMT == TRUE
AllSMTT(timeout) == TRUE
AllIsa == TRUE
AllIsaT(timeout) == TRUE

\* directives on ENABLED and \cdot, and internal ones of the proof manager
ExpandENABLED == TRUE
ExpandCdot == TRUE
AutoUSE == TRUE
Lambdify == TRUE
ENABLEDaxioms == TRUE
LevelComparison == TRUE
Trivial == TRUE
EnabledWrapper(Op(_)) == FALSE
CdotWrapper(Op(_)) == FALSE

\* set extensionality, and that no set holds everything
THEOREM SetExtensionality == \A S, T : (\A x : x \in S <=> x \in T) => S = T
THEOREM NoSetContainsEverything == \A S : \E x : x \notin S
=============================================================================
