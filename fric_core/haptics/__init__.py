"""Paper 003 (Richard, Cutkosky & MacLean): the haptic stage, identifying a sample's mass and
friction with it (OLS (5), errors-in-variables (6)), the identification run, and its report."""
