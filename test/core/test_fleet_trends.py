"""The fleet's change detection (fric_core.fleet.trends) on synthetic level series: a trend from
an onset and a level shift are found and sized, a robot that merely scatters more than its stds
is not flagged for it, and fleets where nothing changes raise an alarm no more often than the
family-wise α the threshold is set for."""

import datetime as dt

import numpy as np
import pytest

from fric_core.fleet.trends import detect_changes

T0 = dt.datetime(2026, 11, 2, 9, tzinfo=dt.timezone.utc)


def fleet(rng, robots=8, joints=4, days=16, change=None, loud=None):
    """Rows of a fleet whose levels scatter by 0.3–1.2 × their stds (the ratio differs per
    series, as on the simulated arm fleet: 0.2–1.2); ``change``: (robot, joint, kind, size,
    day) — a trend of ``size`` per day from ``day``, or a shift by ``size`` at ``day``;
    ``loud``: (robot, joint) scattering 4 × its stds."""
    rows = []
    for r in range(robots):
        for j in range(joints):
            level = 0.2 * np.exp(0.15 * rng.standard_normal())
            ratio = 4.0 if loud == (r, j) else rng.uniform(0.3, 1.2)
            for d in range(days):
                s = level * 0.06 * np.exp(0.2 * rng.standard_normal())
                factor = 1.0
                if change and change[:2] == (r, j):
                    _, _, kind, size, day = change
                    factor += (size * max(0, d - day)) if kind == "trend" else (size * (d >= day))
                rows.append({"robot": f"r{r:02d}", "joint": f"joint_{j}",
                             "time": T0 + dt.timedelta(days=d, minutes=int(rng.integers(60))),
                             "coulomb": level * factor + ratio * s * rng.standard_normal(),
                             "coulomb_std": s})
    return rows


def test_a_trend_from_an_onset_is_found_with_its_growth_and_onset():
    rows = fleet(np.random.default_rng(1), change=(5, 2, "trend", 0.03, 5))
    det = detect_changes(rows)
    assert [(f.robot, f.joint, f.kind) for f in det.findings] == [("r05", "joint_2", "trend")]
    f = det.findings[0]
    # the fitted growth per day against the truth (3 %/day of the level before the onset):
    # within 3 of its stds; the onset found within two days of day 5 (a hinge among 12)
    assert abs(f.per_day - 0.03) <= 3 * f.per_day_std
    assert abs((f.since - T0).days - 5) <= 2
    assert f.relative == pytest.approx(f.per_day * f.days, rel=1e-9)
    assert f.sentence().startswith("robot r05 joint_2: Coulomb +")
    assert f"over {f.days:.0f} days (trend since" in f.sentence()


def test_a_level_shift_is_named_a_shift_on_its_day():
    rows = fleet(np.random.default_rng(2), change=(1, 0, "shift", -0.15, 9))
    det = detect_changes(rows)
    assert [(f.robot, f.joint, f.kind) for f in det.findings] == [("r01", "joint_0", "shift")]
    f = det.findings[0]
    assert (f.since - T0).days == 9
    assert abs(f.relative - (-0.15)) <= 3 * f.relative_std
    assert "level shift -1" in f.sentence()


def test_a_robot_that_scatters_more_than_its_stds_is_not_flagged_for_it():
    """4 × its stds where the fleet's joint scatters 0.3–1.2 ×: a fleet-wide scale would call
    its wanderings changes; its own residuals (16 recordings) keep its scale wide."""
    rows = fleet(np.random.default_rng(3), loud=(2, 1))
    det = detect_changes(rows)
    assert det.findings == []
    loud = next(s for s in det.series if (s.robot, s.joint) == ("r02", "joint_1"))
    assert loud.scale > 2.0 * det.prior_scale[("joint_1", "coulomb")]
    # with the fleet's scale alone its best alternative would stand far beyond the threshold
    assert abs(loud.t) * loud.scale / det.prior_scale[("joint_1", "coulomb")] \
        > det.z_threshold


def test_fleets_without_change_alarm_no_more_often_than_alpha():
    """60 fleets of 5 robots × 4 joints × 12 days, nothing changing: the threshold is set for
    a 1 % chance of any alarm per fleet (Bonferroni: at most that). Fleets with an alarm:
    expected <= 0.6; 3 or more would happen with probability 2 % if the rate were 1 %."""
    rng = np.random.default_rng(4)
    alarms = sum(bool(detect_changes(fleet(rng, robots=5, days=12)).findings)
                 for _ in range(60))
    assert alarms <= 2


def test_the_threshold_is_alpha_over_the_number_of_tests():
    det = detect_changes(fleet(np.random.default_rng(5), robots=3, days=10), alpha=0.05)
    assert det.tests == sum(s.tests for s in det.series) > 0
    assert det.p_threshold == pytest.approx(0.05 / det.tests)


@pytest.mark.parametrize("kw, word", [({"alpha": 0.0}, "alpha"), ({"alpha": 1.5}, "alpha"),
                                      ({"min_side": 1}, "min_side")])
def test_bad_arguments_name_themselves(kw, word):
    with pytest.raises(ValueError, match=word):
        detect_changes([], **kw)


def test_short_series_are_skipped_with_the_reason():
    rows = fleet(np.random.default_rng(6), robots=2, joints=1, days=4)
    det = detect_changes(rows)
    assert det.series == [] and det.findings == []
    assert all("fewer than 6" in why for *_, why in det.skipped) and len(det.skipped) == 2
