"""The component graph is checked when it is built (sizes, layouts, unconnected or doubly
connected inputs, unknown names), and bad parameters raise ValueError naming the field."""

import numpy as np
import pytest

from fric_core.laws import Coulomb, Stribeck
from fric_core.modular import (ArmPoint, AxisTorque, BodyPoint, Coordinates, DahlImpedance,
                               ExternalForce, FixedFrame, FixedPoint, FrictionImpedance,
                               LuGreImpedance, ModularSystem, PenaltyFrictionContact,
                               PenaltyJoint, PlanarTwoLink, PointMass, Relative, RigidBody,
                               SpringDamper, Stack, simulate)


def _arm():
    return PlanarTwoLink(masses=(1.0, 1.0), lengths=(1.0, 1.0))


def _build_error(system) -> str:
    with pytest.raises(ValueError) as exc:
        system.build()
    return str(exc.value)


def test_size_mismatch_is_reported_at_build_naming_the_component():
    s = ModularSystem().add_admittance("arm", _arm())
    s.add_impedance("spring", SpringDamper(1.0, 0.0, n=2), Coordinates("arm", 0))
    msg = _build_error(s)
    assert "spring" in msg and "size mismatch" in msg and "4" in msg and "2" in msg


def test_unconnected_impedance_and_unforced_admittance():
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("friction", FrictionImpedance(K=1.0, B=0.0, F=1.0))
    msg = _build_error(s)
    assert "friction: impedance input is not connected" in msg
    assert "m: admittance force input is not connected" in msg  # both problems, one error
    free = ModularSystem().add_admittance("m", PointMass(1.0), unforced=True).build()
    x0 = free.initial_state(m=PointMass.state(v=(1.0, 2.0, 3.0)))
    assert np.allclose(simulate(free, x0, 0.1, 10).x[-1][:3], [1.0, 2.0, 3.0])


def test_input_connected_twice():
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("k", SpringDamper(1.0, 0.0, n=3), Coordinates("m"))
    s.connect("k", Coordinates("m"))
    assert "k: impedance input connected 2 times" in _build_error(s)


def test_unknown_names_and_wrong_kinds():
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("k", SpringDamper(1.0, 0.0, n=3), Coordinates("mass"))
    assert "unknown admittance 'mass'" in _build_error(s)
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("c", PenaltyFrictionContact(K=1.0, B=0.0, mu=0.1), BodyPoint("m"))
    assert "needs a rigid body" in _build_error(s)
    s = ModularSystem().add_admittance("b", RigidBody(1.0, [1, 1, 1]))
    s.add_impedance("k", SpringDamper(1.0, 0.0, n=3), Coordinates("b"))
    assert "use BodyPoint/BodyFrame" in _build_error(s)
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("k", SpringDamper(1.0, 0.0, n=3), ArmPoint("m"))
    assert "ArmPoint('m') needs an arm" in _build_error(s)
    s = ModularSystem().add_admittance("arm", _arm())
    s.add_impedance("f", FrictionImpedance(K=1.0, B=0.0, F=1.0), Coordinates("arm", 5))
    assert "out of range" in _build_error(s)
    with pytest.raises(ValueError, match="unknown impedance 'nope'"):
        s.connect("nope", Coordinates("arm"))
    with pytest.raises(ValueError, match="already exists"):
        s.add_admittance("arm", _arm())
    with pytest.raises(ValueError, match="expected an Impedance"):
        s.add_impedance("x", PointMass(1.0))


def test_layout_mismatch_frames_vs_coordinates():
    s = ModularSystem().add_admittance("b", RigidBody(1.0, [1, 1, 1]))
    s.add_impedance("j", PenaltyJoint(1.0, 0.0, 1.0, 0.0, K=1.0, B=0.0, F=1.0),
                    Stack(BodyPoint("b"), FixedPoint()))
    assert "reads a 'frames' motion" in _build_error(s)
    s = ModularSystem().add_admittance("b", RigidBody(1.0, [1, 1, 1]))
    s.add_impedance("j", PenaltyJoint(1.0, 0.0, 1.0, 0.0, K=1.0, B=0.0, F=1.0),
                    Stack(BodyPoint("b"), FixedFrame()))
    assert "mixed layouts" in _build_error(s)
    s = ModularSystem().add_admittance("a", PointMass(1.0)).add_admittance("arm", _arm())
    s.add_impedance("k", SpringDamper(1.0, 0.0), Relative(Coordinates("a", 0), Coordinates("arm")))
    assert "different sizes" in _build_error(s)


def test_external_force_size_is_checked_against_its_port():
    s = ModularSystem().add_admittance("arm", _arm())
    s.add_impedance("motors", ExternalForce(lambda t: (1.0, 2.0, 3.0), n=3), Coordinates("arm"))
    assert "outputs a force of size 3, its port takes 2" in _build_error(s)
    with pytest.raises(ValueError, match="force"):
        ExternalForce(lambda t: (1.0, 2.0), n=3)
    with pytest.raises(ValueError, match="torque"):
        AxisTorque(lambda t: float("nan"))


@pytest.mark.parametrize("make,field", [
    (lambda: PointMass(0.0), "M"),
    (lambda: PointMass(1.0, gravity=(0, 0)), "gravity"),
    (lambda: RigidBody(1.0, [1.0, 1.0, 5.0]), "inertia"),
    (lambda: RigidBody(1.0, [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "inertia"),
    (lambda: RigidBody(float("nan"), [1, 1, 1]), "M"),
    (lambda: PlanarTwoLink(masses=(1.0,), lengths=(1.0, 1.0)), "masses"),
    (lambda: PlanarTwoLink(masses=(1.0, 1.0), lengths=(1.0, -1.0)), "lengths"),
    (lambda: SpringDamper(-1.0, 0.0), "K"),
    (lambda: SpringDamper(1.0, [1.0, 2.0], n=3), "B"),
    (lambda: FrictionImpedance(K=0.0, B=1.0, F=1.0), "K"),
    (lambda: FrictionImpedance(K=1.0, B=1.0), "F"),
    (lambda: FrictionImpedance(K=1.0, B=1.0, F=1.0, law=Coulomb(1.0)), "law"),
    (lambda: FrictionImpedance(K=1.0, B=1.0, law=Coulomb(0.0)), "law"),
    (lambda: FrictionImpedance(K=1.0, B=1.0, law=Coulomb([1.0, 2.0]), n=3), "law"),
    (lambda: PenaltyFrictionContact(K=1.0, B=1.0, mu=-0.1), "mu"),
    (lambda: PenaltyFrictionContact(K=1.0, B=1.0), "mu"),
    (lambda: PenaltyJoint(1.0, 0.0, 1.0, 0.0, K=1.0, B=0.0, F=1.0, axis=(0, 0, 0)), "axis"),
    (lambda: DahlImpedance(1.0, 0.0), "F"),
    (lambda: LuGreImpedance(1.0, 1.0, Fc=1.0, Fs=0.5), "Fs"),
    (lambda: ExternalForce(3.0), "force"),
])
def test_bad_parameters_name_the_field(make, field):
    with pytest.raises(ValueError, match=field):
        make()


@pytest.mark.parametrize("make,field", [
    (lambda: RigidBody(1.0, [1.0, 1.0, 1.0], gravity="down"), "gravity"),
    (lambda: PointMass(1.0, gravity=(0.0, 0.0, float("inf"))), "gravity"),
    (lambda: PointMass.state(p=(0.0, 0.0)), "p"),
    (lambda: PointMass.state(v=(0.0, 0.0, 0.0, 1.0)), "v"),
    (lambda: RigidBody.state(p=(0.0, 0.0)), "p"),
    (lambda: RigidBody.state(q=(1.0, 0.0, 0.0)), "q"),
    (lambda: RigidBody.state(omega=(0.0, float("nan"), 0.0)), "omega"),
    (lambda: RigidBody.state(v="fast"), "v"),
])
def test_bad_vectors_name_the_field_first(make, field):
    # the message starts with the field's name (not numpy's "could not convert ..."), and a
    # wrong-length state is refused instead of silently making a state of the wrong size
    with pytest.raises(ValueError, match=f"^{field}: "):
        make()


def test_initial_state_is_checked():
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("k", SpringDamper(1.0, 0.0, n=3), Coordinates("m"))
    m = s.build()
    with pytest.raises(ValueError, match="m: initial state has 3 entries"):
        m.initial_state(m=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"no state given for admittance\(s\) \['m'\]"):
        m.initial_state()
    with pytest.raises(ValueError, match="unknown component 'q'"):
        m.initial_state(m=np.zeros(6), q=[1.0])


def test_laws_with_rate_dependence_in_the_friction_component():
    # Footnote 1: the element takes any law. A Stribeck law with a strong static peak: a block
    # pushed by a force between the Coulomb and the static level stays stuck (no drift), and
    # one pushed above the static level slides and reaches the viscous terminal velocity
    # v with Fc + D v = push (Stribeck term ~0 at v ≫ vs).
    # vs, B satisfy (48) of paper 000 (|Φ'|/B ≤ 0.1: Φ' ≤ 0.5·0.86/0.1 + 2 = 6.3, B = 400),
    # without which the approximate Φ_Z (46) misplaces the static level (checked: ValueError).
    with pytest.raises(ValueError, match="B"):
        FrictionImpedance(K=1e4, B=20.0, law=Stribeck(Fc=1.0, Fs=1.5, vs=0.01, D=2.0))
    law = Stribeck(Fc=1.0, Fs=1.5, vs=0.1, D=2.0)
    # (ζ = B/(2√(KM)) = 2: the step load barely overshoots, so 1.3 N stays below Fs = 1.5 N)
    for push, sliding in ((1.3, False), (3.0, True)):
        s = ModularSystem().add_admittance("m", PointMass(1.0))
        s.add_impedance("push", ExternalForce(lambda t, p=push: (p, 0.0, 0.0), n=3),
                        Coordinates("m"))
        s.add_impedance("f", FrictionImpedance(K=1e4, B=400.0, law=law), Coordinates("m", 0))
        m = s.build()
        tr = simulate(m, m.initial_state(m=PointMass.state()), 1e-3, 5000)
        p, v, e = tr.x[-1, 0], tr.x[-1, 3], tr.x[-1, m.slice("f")][0]
        if sliding:
            # Φ_Z of (46) evaluates Φ at v + Z K e (= v + Z f in steady sliding), not at the
            # slip velocity: the terminal velocity is lowered by f Z ≤ push/B
            v_exact = (push - 1.0) / 2.0
            assert v_exact - push / 400.0 - 1e-6 <= v <= v_exact
        else:
            assert abs(p - e) < 1e-12 and abs(p - push / 1e4) < 1e-9


def test_ports_sharing_a_body_frame_see_the_current_state():
    # A penalty joint and the actuator on its axis read the same two frames; the system binds
    # them once and evaluates them once per stage state. Whatever the order of calls, every
    # port must see the state it was last given: same as a freshly built system, exactly.
    from fric_core.modular.scenarios import penalty_initial_state, penalty_two_link
    m = penalty_two_link()
    x1 = penalty_initial_state(m, (0.3, 0.5), omega=(1.0, -2.0))
    x2 = penalty_initial_state(m, (-0.7, 1.1), omega=(0.5, 0.0))
    x2[m.slice("link1").start] += 1e-3          # a stretched joint 1: elastic energy ≠ 0
    fresh = {k: penalty_two_link() for k in ("a", "b")}
    for x, other in ((x1, x2), (x2, x1), (x1, x1)):
        m.derivative(other, 0.0, 1e-4)
        assert m.energy(x) == fresh["a"].energy(x)
        for name in ("joint1", "motor1", "joint0", "motor0"):
            m.derivative(other, 0.0, 1e-4)
            assert np.array_equal(m.impedance_input(x, name),
                                  fresh["a"].impedance_input(x, name))
        m.impedance_input(other, "joint1")
        assert np.array_equal(m.derivative(x, 0.1, 1e-4), fresh["b"].derivative(x, 0.1, 1e-4))
