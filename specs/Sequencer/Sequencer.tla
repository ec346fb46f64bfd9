------------------------------- MODULE Sequencer -------------------------------
(***************************************************************************)
(* The fixed-sequencer total-order broadcast, broadcast-broadcast (BB)     *)
(* variant, after Defago, Schiper and Urban, "Total order broadcast and    *)
(* multicast algorithms: taxonomy and survey", ACM Computing Surveys       *)
(* 36(4), 2004, section 4.1, with a view change on the sequencer's crash.  *)
(* The same protocol as model/sequencer/process.py (docs/sequencer.md).    *)
(*                                                                         *)
(* A sender broadcasts m to every process; the sequencer gives each        *)
(* message it receives the next number and broadcasts the order; every    *)
(* process delivers in number order, a message once it has both its       *)
(* number and the message itself. An order for a message, or for a        *)
(* number, already taken is ignored (the first one wins).                  *)
(*                                                                         *)
(* The sequencer is the lowest process not known to have crashed. When a   *)
(* process's sequencer changes to s (a Crash notice), it reports to s      *)
(* every order it knows (the flush); s waits for the report of every       *)
(* process it does not know to have crashed, takes the union, broadcasts   *)
(* it and numbers on from the highest number in it.                        *)
(*                                                                         *)
(* Decisions, as in the Python model and its drivers (model/sim.py,        *)
(* fuzz/process_machine.py):                                               *)
(*  - channels are reliable and unordered (net is a set of packets);       *)
(*  - a crashed process's packets in transit still arrive (CrashLoses =    *)
(*    FALSE), and Crash(q) reaches p only once no packet of q to p is in   *)
(*    transit (a perfect failure detector with a flushed link); so even a  *)
(*    crashed process delivers a prefix of the survivors' order, and the   *)
(*    properties hold for every process (uniform). With CrashLoses = TRUE  *)
(*    a crash may lose them (a broadcast cut short): there the flush is    *)
(*    what tells the new sequencer an order only some survivors saw        *)
(*    (Sequencer_OwnOnly.tla: without it, TLC finds a violation);          *)
(*  - a process receives its own broadcast through net like the others'.   *)
(* Sequencer_NoFlush.tla is the broken variant whose new sequencer skips   *)
(* the flush and numbers on from the last number it delivered.            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Proc,        \* the processes, positive integers; the lowest is the first sequencer
    Senders,     \* the processes that broadcast
    PerSender,   \* how many messages each of them broadcasts
    MaxCrashes,  \* how many processes may crash
    CrashLoses   \* a crash may lose the crashed process's packets in transit

Msg == Senders \X (1 .. PerSender)     \* <<p, i>>: the i-th message of process p
Sender(m) == m[1]
NoMsg == <<0, 0>>
Seqs == 1 .. Cardinality(Msg)          \* the numbers a correct run gives

Min(S) == CHOOSE x \in S : \A y \in S : x <= y

VARIABLES
    broadcast,   \* the messages broadcast so far
    delivered,   \* delivered[p]: the sequence p delivered
    got,         \* got[p]: the messages p received
    num,         \* num[p][m]: the number p knows for m (0: none)
    nextSeq,     \* nextSeq[p]: the next number p gives, when it numbers
    numbering,   \* numbering[p]: p is the sequencer and its flush is over
    flushing,    \* flushing[p]: p is the new sequencer, waiting for reports
    reported,    \* reported[p]: the processes whose report p received
    learned,     \* learned[p]: the orders <<seq, m>> those reports held
    crashed,     \* the processes that crashed
    noticed,     \* noticed[p]: the crashes p has been told of
    net          \* the packets in transit

vars == <<broadcast, delivered, got, num, nextSeq, numbering, flushing, reported,
          learned, crashed, noticed, net>>

\* every packet has the same fields, so that TLC can compare any two
Packet(kind, m, s, src, dst, ords) ==
    [kind |-> kind, msg |-> m, seq |-> s, src |-> src, dst |-> dst, ords |-> ords]

TOB == INSTANCE TotalOrderBroadcast WITH Correct <- Proc

\* the orders p knows, as <<seq, m>> pairs
Known(p) == {<<num[p][m], m>> : m \in {m2 \in Msg : num[p][m2] # 0}}

\* p's sequencer: the lowest process p does not know to have crashed
SequencerOf(p) == Min(Proc \ noticed[p])

Alive(p) == p \notin crashed

TypeOK ==
    /\ TOB!TypeOK
    /\ got \in [Proc -> SUBSET Msg]
    /\ num \in [Proc -> [Msg -> Nat]]
    /\ nextSeq \in [Proc -> Nat]
    /\ numbering \in [Proc -> BOOLEAN]
    /\ flushing \in [Proc -> BOOLEAN]
    /\ reported \in [Proc -> SUBSET Proc]
    /\ crashed \subseteq Proc
    /\ noticed \in [Proc -> SUBSET Proc]

Init ==
    /\ broadcast = {}
    /\ delivered = [p \in Proc |-> <<>>]
    /\ got = [p \in Proc |-> {}]
    /\ num = [p \in Proc |-> [m \in Msg |-> 0]]
    /\ nextSeq = [p \in Proc |-> 1]
    /\ numbering = [p \in Proc |-> p = Min(Proc)]
    /\ flushing = [p \in Proc |-> FALSE]
    /\ reported = [p \in Proc |-> {}]
    /\ learned = [p \in Proc |-> {}]
    /\ crashed = {}
    /\ noticed = [p \in Proc |-> {}]
    /\ net = {}

\* p's numbers with the orders ords adopted: an order for a message, or for a number,
\* already taken is ignored (the first one wins); so are two orders of ords that clash
\* (never in a correct run: the invariant UniqueNumbers)
Adopt(p, ords) ==
    LET fresh == {o \in ords : num[p][o[2]] = 0 /\ \A m \in Msg : num[p][m] # o[1]}
        win == {o \in fresh : \A o2 \in fresh : (o2[1] = o[1] \/ o2[2] = o[2]) => o2 = o}
    IN [m \in Msg |-> IF \E o \in win : o[2] = m
                      THEN (CHOOSE o \in win : o[2] = m)[1] ELSE num[p][m]]

-----------------------------------------------------------------------------
(* A sender broadcasts m to every process, itself included.                *)
Broadcast(m) ==
    /\ m \notin broadcast
    /\ Alive(Sender(m))
    /\ m[2] = 1 \/ <<m[1], m[2] - 1>> \in broadcast
    /\ broadcast' = broadcast \cup {m}
    /\ net' = net \cup {Packet("data", m, 0, Sender(m), q, {}) : q \in Proc}
    /\ UNCHANGED <<delivered, got, num, nextSeq, numbering, flushing, reported, learned,
                   crashed, noticed>>

ReceiveData(p) ==
    \E pkt \in net :
        /\ pkt.kind = "data" /\ pkt.dst = p /\ Alive(p)
        /\ got' = [got EXCEPT ![p] = @ \cup {pkt.msg}]
        /\ net' = net \ {pkt}
        /\ UNCHANGED <<broadcast, delivered, num, nextSeq, numbering, flushing, reported,
                       learned, crashed, noticed>>

(* The sequencer numbers a message it received and knows no number for,    *)
(* and broadcasts the order.                                               *)
Number(p) ==
    \E m \in got[p] :
        /\ Alive(p) /\ numbering[p] /\ num[p][m] = 0
        /\ num' = [num EXCEPT ![p][m] = nextSeq[p]]
        /\ nextSeq' = [nextSeq EXCEPT ![p] = @ + 1]
        /\ net' = net \cup {Packet("order", m, nextSeq[p], p, q, {}) : q \in Proc \ {p}}
        /\ UNCHANGED <<broadcast, delivered, got, numbering, flushing, reported, learned,
                       crashed, noticed>>

ReceiveOrder(p) ==
    \E pkt \in net :
        /\ pkt.kind = "order" /\ pkt.dst = p /\ Alive(p)
        /\ num' = [num EXCEPT ![p] = Adopt(p, {<<pkt.seq, pkt.msg>>})]
        /\ net' = net \ {pkt}
        /\ UNCHANGED <<broadcast, delivered, got, nextSeq, numbering, flushing, reported,
                       learned, crashed, noticed>>

(* Deliver the next number once the message itself is there.               *)
Deliver(p) ==
    \E m \in got[p] :
        /\ Alive(p)
        /\ num[p][m] = Len(delivered[p]) + 1
        /\ delivered' = [delivered EXCEPT ![p] = Append(@, m)]
        /\ UNCHANGED <<broadcast, got, num, nextSeq, numbering, flushing, reported, learned,
                       crashed, noticed, net>>

(* With CrashLoses, the crash cuts q's broadcasts short: any of its        *)
(* packets in transit may be lost.                                         *)
Crash(q) ==
    /\ Alive(q) /\ Cardinality(crashed) < MaxCrashes
    /\ crashed' = crashed \cup {q}
    /\ \E lost \in IF CrashLoses THEN SUBSET {pkt \in net : pkt.src = q} ELSE {{}} :
           net' = net \ lost
    /\ UNCHANGED <<broadcast, delivered, got, num, nextSeq, numbering, flushing, reported,
                   learned, noticed>>

(* How a process becomes the sequencer; Sequencer_NoFlush.tla swaps it.    *)
BecomeSequencerFlush(p) ==
    /\ flushing' = [flushing EXCEPT ![p] = TRUE]
    /\ UNCHANGED <<num, nextSeq, numbering>>

(* Crash(q) reaches p once no packet of q to p is in transit. If p's       *)
(* sequencer changes, p reports to the new one, or becomes it.            *)
NoticeWith(BecomeSequencer(_), p, q) ==
    /\ Alive(p) /\ q \in crashed /\ q \notin noticed[p] /\ p # q
    /\ ~\E pkt \in net : pkt.src = q /\ pkt.dst = p
    /\ noticed' = [noticed EXCEPT ![p] = @ \cup {q}]
    /\ LET new == Min(Proc \ noticed'[p])
       IN IF new = SequencerOf(p) THEN
              /\ UNCHANGED <<num, nextSeq, numbering, flushing, net>>
          ELSE IF new = p THEN
              /\ BecomeSequencer(p)
              /\ UNCHANGED net
          ELSE
              /\ net' = net \cup {Packet("report", NoMsg, 0, p, new, Known(p))}
              /\ UNCHANGED <<num, nextSeq, numbering, flushing>>
    /\ UNCHANGED <<broadcast, delivered, got, reported, learned, crashed>>

ReceiveReport(p) ==
    \E pkt \in net :
        /\ pkt.kind = "report" /\ pkt.dst = p /\ Alive(p)
        /\ reported' = [reported EXCEPT ![p] = @ \cup {pkt.src}]
        /\ learned' = [learned EXCEPT ![p] = @ \cup pkt.ords]
        /\ net' = net \ {pkt}
        /\ UNCHANGED <<broadcast, delivered, got, num, nextSeq, numbering, flushing, crashed,
                       noticed>>

(* The flush is over: every process p does not know to have crashed has    *)
(* reported. p adopts the union, broadcasts it, numbers on from its top.   *)
TakeOver(p) ==
    /\ Alive(p) /\ flushing[p]
    /\ (Proc \ noticed[p]) \ {p} \subseteq reported[p]
    /\ LET n2 == Adopt(p, learned[p])
           top == IF \E m \in Msg : n2[m] # 0
                  THEN n2[CHOOSE m \in Msg : \A m2 \in Msg : n2[m2] <= n2[m]] ELSE 0
           union == {<<n2[m], m>> : m \in {m2 \in Msg : n2[m2] # 0}}
       IN /\ num' = [num EXCEPT ![p] = n2]
          /\ nextSeq' = [nextSeq EXCEPT ![p] = top + 1]
          /\ net' = net \cup {Packet("takeover", NoMsg, 0, p, q, union) : q \in Proc \ {p}}
    /\ numbering' = [numbering EXCEPT ![p] = TRUE]
    /\ flushing' = [flushing EXCEPT ![p] = FALSE]
    /\ UNCHANGED <<broadcast, delivered, got, reported, learned, crashed, noticed>>

ReceiveTakeover(p) ==
    \E pkt \in net :
        /\ pkt.kind = "takeover" /\ pkt.dst = p /\ Alive(p)
        /\ num' = [num EXCEPT ![p] = Adopt(p, pkt.ords)]
        /\ net' = net \ {pkt}
        /\ UNCHANGED <<broadcast, delivered, got, nextSeq, numbering, flushing, reported,
                       learned, crashed, noticed>>

\* the run is over: every message of a live sender broadcast, every live process has
\* delivered every broadcast message (a stuck run is a deadlock TLC reports)
Done ==
    /\ \A m \in Msg : m \in broadcast \/ ~Alive(Sender(m))
    /\ \A p \in Proc \ crashed : TOB!Range(delivered[p]) = broadcast
    /\ UNCHANGED vars

\* the actions every variant shares
Common(p) ==
    \/ ReceiveData(p) \/ Number(p) \/ ReceiveOrder(p) \/ Deliver(p)
    \/ ReceiveReport(p) \/ TakeOver(p) \/ ReceiveTakeover(p)

(* The actions every variant shares; Sequencer_NoFlush.tla swaps Notice.  *)
Exchange ==
    \/ \E m \in Msg : Broadcast(m)
    \/ \E p \in Proc : Common(p) \/ Crash(p)
    \/ Done

Notice(p, q) == NoticeWith(BecomeSequencerFlush, p, q)

Next == Exchange \/ \E p, q \in Proc : Notice(p, q)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* The properties, stated once in TotalOrderBroadcast, for every process.  *)
Integrity == TOB!Integrity
WeakTotalOrder == TOB!WeakTotalOrder
StrongTotalOrder == TOB!StrongTotalOrder
GapFreeTotalOrder == TOB!GapFreeTotalOrder

(* The protocol's own invariant: no number is given to two messages, nor   *)
(* two numbers to one message, by any process or in any flush; and every   *)
(* number is one a correct run can give.                                   *)
UniqueNumbers ==
    /\ \A p, q \in Proc, m, m2 \in Msg :
           num[p][m] # 0 /\ num[q][m2] # 0 => (num[p][m] = num[q][m2] <=> m = m2)
    /\ \A p \in Proc : \A o, o2 \in learned[p] \cup Known(p) :
           o[1] = o2[1] <=> o[2] = o2[2]
    /\ \A p \in Proc, m \in Msg : num[p][m] \in {0} \cup Seqs

(* With CrashLoses the crashed processes are not protected: the old         *)
(* sequencer may have delivered a message whose order no survivor saw (the *)
(* protocol is not uniform there), and a survivor may wait for ever for a   *)
(* message of a crashed sender that reached others only (BB would need the *)
(* survivors to relay it: the configs with CrashLoses check safety only).  *)
(* The properties among the survivors:                                      *)
Survivors == INSTANCE TotalOrderBroadcast WITH Correct <- Proc,
    delivered <- [p \in Proc |-> IF p \in crashed THEN <<>> ELSE delivered[p]]
SurvivorWeakTotalOrder == Survivors!WeakTotalOrder
SurvivorStrongTotalOrder == Survivors!StrongTotalOrder
SurvivorGapFreeTotalOrder == Survivors!GapFreeTotalOrder
SurvivorUniqueNumbers ==
    \A p, q \in Proc \ crashed, m, m2 \in Msg :
        num[p][m] # 0 /\ num[q][m2] # 0 => (num[p][m] = num[q][m2] <=> m = m2)
=============================================================================
