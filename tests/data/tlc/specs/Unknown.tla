---- MODULE Unknown ----
\* A spec that uses an undefined name on line 5 (a test fixture).
EXTENDS Naturals
VARIABLE x
Init == x = y
Next == x' = x + 1
====
