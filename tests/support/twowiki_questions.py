"""Questions the multi-step tests ask of the real 2Wiki graph (shared by their modules)."""

from __future__ import annotations

#: A comparison of two films' directors: a plan of one search per film, then a bridge.
QUESTION = (
    "Which film has the director born earlier, The Planet Of Junior Brown or A Yank In The R.A.F.?"
)
FILMS = ("The Planet of Junior Brown", "A Yank in the R.A.F.")
#: Two years no passage of the corpus mentions: the gap never closes, so the loop
#: runs until ``max_steps`` (the plan's per-year steps, then refinements).
OPEN_GAP_QUESTION = "How did the population of Toronto change between 2061 and 2087?"
