"""Friction across a fleet: many robots, many days (issue 26).

``fric fleet`` (:mod:`fric_nodes.tools.fleet`) identifies every recording of a fleet with
``fric identify``'s pipeline and hands the results to this package (numpy, matplotlib; pyarrow
only to write Parquet):

* :mod:`.table` — one row per (robot, joint, time): the law's parameters with their stds, the
  offset-free friction levels (mean Coulomb level ``(Cp + Cn)/2`` and viscous slope
  ``(bp + bn)/2`` with their stds from the fit's covariance), condition figures, held-out RMS,
  warnings; written as Parquet and CSV, with a table of the recordings that failed;
* :mod:`.trends` — change detection: per robot and joint a weighted linear trend, a trend from a
  later onset or a level shift of each level over time, scaled by a robust fleet-wide residual
  scale, flagged above a Bonferroni threshold for the fleet's number of tests;
* :mod:`.report` — per joint the levels over time (robots as lines, the fleet's spread as a
  band) and ``report.md`` with the findings;
* :mod:`.simulated` — a simulated fleet (N robots × D days of realistic recordings, one joint
  wearing, a corrupt bag, a lagging velocity column) for tests and benchmarks.
"""
