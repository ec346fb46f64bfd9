---- MODULE SyntaxError ----
\* A spec with a syntax error on line 5 (a test fixture).
EXTENDS Naturals
VARIABLE x
Init == x = = 0
Next == x' = x + 1
====
