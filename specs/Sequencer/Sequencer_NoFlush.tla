------------------------------ MODULE Sequencer_NoFlush ------------------------------
(***************************************************************************)
(* A broken fixed sequencer: the new sequencer skips the flush. It takes   *)
(* its own delivered prefix for the whole order: it numbers on from one    *)
(* past the last number it delivered and forgets every order it holds      *)
(* beyond it (model/sequencer/process.py's variant no-flush). TLC finds a  *)
(* run where the old sequencer's order of x overtook x on its way to the   *)
(* new sequencer, which then gives x's number to another message: two      *)
(* processes deliver the two in opposite orders.                           *)
(***************************************************************************)
EXTENDS Sequencer

BecomeSequencerNoFlush(p) ==
    LET d == Len(delivered[p])
    IN /\ num' = [num EXCEPT ![p] = [m \in Msg |-> IF num[p][m] > d THEN 0 ELSE num[p][m]]]
       /\ nextSeq' = [nextSeq EXCEPT ![p] = d + 1]
       /\ numbering' = [numbering EXCEPT ![p] = TRUE]
       /\ UNCHANGED flushing

NoticeNoFlush(p, q) == NoticeWith(BecomeSequencerNoFlush, p, q)

BuggyNext == Exchange \/ \E p, q \in Proc : NoticeNoFlush(p, q)

BuggySpec == Init /\ [][BuggyNext]_vars
=============================================================================
