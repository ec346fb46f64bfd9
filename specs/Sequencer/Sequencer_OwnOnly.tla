------------------------------ MODULE Sequencer_OwnOnly ------------------------------
(***************************************************************************)
(* A fixed sequencer whose new sequencer trusts its own knowledge: it      *)
(* numbers on from the highest number it has seen itself, without the      *)
(* flush. On tomkit's drivers (CrashLoses = FALSE) that is enough: every   *)
(* survivor has all of the old sequencer's orders before its Crash notice. *)
(* When a crash can cut the old sequencer's broadcast short (CrashLoses =  *)
(* TRUE), TLC finds a run where an order reached another survivor, which   *)
(* delivered it, but not the new sequencer, which gives the same number to *)
(* another message: the flush is what prevents it.                         *)
(***************************************************************************)
EXTENDS Sequencer

BecomeSequencerOwnOnly(p) ==
    LET top == IF \E m \in Msg : num[p][m] # 0
               THEN num[p][CHOOSE m \in Msg : \A m2 \in Msg : num[p][m2] <= num[p][m]]
               ELSE 0
    IN /\ nextSeq' = [nextSeq EXCEPT ![p] = top + 1]
       /\ numbering' = [numbering EXCEPT ![p] = TRUE]
       /\ UNCHANGED <<num, flushing>>

NoticeOwnOnly(p, q) == NoticeWith(BecomeSequencerOwnOnly, p, q)

BuggyNext == Exchange \/ \E p, q \in Proc : NoticeOwnOnly(p, q)

BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
