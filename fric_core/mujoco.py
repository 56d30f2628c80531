"""Exact joint friction inside MuJoCo: :class:`FrictionStepper` (issue 25).

MuJoCo's joint friction (``frictionloss``) is a soft constraint: a joint under a load below
breakaway slides at a velocity set by the constraint's impedance (``solreffriction``,
``solimpfriction``), so a held arm creeps (google-deepmind/mujoco issues #565, #2082, #3528:
``noslip_iterations`` reduces the creep at the cost of a projected Gauss–Seidel pass, it does
not remove it), and it has no load-dependent (gear) friction. :class:`FrictionStepper` steps a
MuJoCo model with the friction of a ``joint_friction.yaml`` (what ``fric identify`` writes)
computed exactly at MuJoCo's fixed step, on MuJoCo's own mass matrix and forces, by the
implicit-Euler algorithm (69) of paper 004 (Kikuuwe 2022) — the same solver as
:class:`~fric_core.transmission.geared_arm.GearedArm`:

1. ``mj_step1`` (positions, velocities, the bias and passive forces), ``mj_fwdActuation``
   (the actuator torques) and ``mj_fwdAcceleration`` (``qfrc_smooth``, every force but the
   constraints');
2. the friction of the mapped joints as a constrained velocity update on MuJoCo's effective
   mass matrix ``M_eff`` (below): per mapped joint the input-side law of
   :mod:`~fric_core.transmission.input_friction` (asymmetric Coulomb + viscous or the curve,
   ``c0 + C s + b v``, viscosity implicit; a joint the last step left stuck starts at rest, not
   at the sign of MuJoCo's round-off of its zero velocity), the gear's load-dependent
   friction where the file gives ``eta_f``, ``eta_b`` (γ_u, γ_v by (27); the rotor inertia is
   the joint's ``armature``; the actuator torque ``qfrc_actuator`` is the input torque τ_u and
   every other smooth torque the load τ_v, as in (69c)–(69e)), and (69f) solved by
   :func:`~fric_core.transmission.coulomb_projection.solve_joint_friction` on the mapped
   joints' block ``A = h (M̂⁻¹)_KK`` (the unmapped joints move freely through M̂⁻¹): a joint
   whose friction can hold ends the step with velocity exactly 0;
3. the friction torque ``−(f + c0 + b v_new)`` added to ``qfrc_applied`` for ``mj_step2``
   (actuation, constraints, integration), then ``qfrc_applied`` put back as the user left it.

``M_eff`` is the matrix MuJoCo's integrator inverts, so that the velocity MuJoCo computes is the
velocity the friction solve found (to round-off): ``M`` (``mj_fullM``) for ``Euler``, plus
``h·diag(damping)`` where MuJoCo's Euler integrates joint damping implicitly (any dof damping or
actuator damping, unless ``eulerdamp`` or ``damper`` is disabled); ``M − h·∂f/∂v`` for
``implicitfast``, with MuJoCo's derivative of the joint damping, the actuators' damping and the
velocity terms of affine actuators on joints (position / velocity servos: ``biasprm[2]``,
``gainprm[2]·ctrl``, left out while the force is clamped, as MuJoCo does). A model whose
velocity derivative has other terms (tendon damping, damping polynomials, fluid forces, other
actuator kinds with velocity terms on tendons or sites, flexes), other integrators (RK4,
implicit, discrete) and ``sleep`` are refused with a message naming what is not reproduced.

Order with contacts and limits
------------------------------
The friction is solved before MuJoCo's constraints (contacts, joint limits, equalities, the
``frictionloss`` of unmapped joints), which ``mj_step2`` then solves with the friction as a
given applied torque. So within one step the friction does not see the constraint forces of
that step: a joint stuck by friction can be moved by a contact impulse in the step it arrives
(its friction reacts from the next step on, through the velocity it then has), and where a
contact holds a link against a load that friction alone cannot hold, friction takes its full
kinetic value against the motion and the contact the rest (one of the static solutions of the
combined problem). Resting contact is steady: the constraint forces converge to the load the
friction leaves (``test_mujoco_stepper.py``: an arm resting a link on a table for 10 s).

The mapped joints' ``frictionloss`` is set to 0 in the model (with a
:class:`FrictionLossWarning` naming them): their friction is this stepper's. Joints not in the
file keep MuJoCo's behaviour.

Two implementations of the step
-------------------------------
:meth:`FrictionStepper.step` makes the whole step in one compiled call
(:mod:`fric_core.mujoco_kernel`, the C extension ``_mujoco_kernel``) where it is built and
takes the model; otherwise in numpy (:meth:`FrictionStepper._step_numpy`, the reference the
kernel is tested against: the same algorithm, to round-off). ``compiled`` and
``fallback_reason`` say which one a stepper uses and why.

MuJoCo is the optional extra ``[mujoco]``; this is the only fric module that imports it.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import mujoco
import numpy as np

from .joint_friction import JointFrictionSet, read_joint_friction
from .mujoco_kernel import make_kernel
from .transmission.coulomb_projection import CoulombAxproj, solve_joint_friction
from .transmission.dai import IllPosedWarning
from .transmission.input_friction import InputFriction, gear_asymmetries
from .transmission.projection import _inv

__all__ = ["FrictionStepper", "FrictionLossWarning", "SUPPORTED_INTEGRATORS"]

#: The integrators :class:`FrictionStepper` reproduces (MuJoCo's names).
SUPPORTED_INTEGRATORS = ("Euler", "implicitfast")

_HINGE_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
_EULER = int(mujoco.mjtIntegrator.mjINT_EULER)
_IMPLICITFAST = int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST)
_INTEGRATOR_NAMES = {int(v): k[len("mjINT_"):] for k, v in
                     mujoco.mjtIntegrator.__members__.items()}
# mjtDisableBit / mjtEnableBit values are the flags' masks
_DSBL_DAMPER = int(mujoco.mjtDisableBit.mjDSBL_DAMPER)
_DSBL_EULERDAMP = int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
_DSBL_ACTUATION = int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
_ENBL_SLEEP = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
_TRN_JOINTS = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
_BIAS_AFFINE = int(mujoco.mjtBias.mjBIAS_AFFINE)
_BIAS_NONE = int(mujoco.mjtBias.mjBIAS_NONE)
_GAIN_AFFINE = int(mujoco.mjtGain.mjGAIN_AFFINE)
_GAIN_FIXED = int(mujoco.mjtGain.mjGAIN_FIXED)
_DYN_NONE = int(mujoco.mjtDyn.mjDYN_NONE)


class FrictionLossWarning(UserWarning):
    """A mapped joint had MuJoCo ``frictionloss``; it was set to 0 (the stepper's friction
    replaces it)."""


def _joint_name(model, j: int) -> str:
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"<joint {j}>"


class FrictionStepper:
    """Steps a MuJoCo model with exact joint friction from a ``joint_friction.yaml``.

    Parameters
    ----------
    model : mujoco.MjModel
        The model. The mapped joints' ``dof_frictionloss`` is set to 0 (warned).
    data : mujoco.MjData
        Its data; :meth:`step` advances it like ``mujoco.mj_step``.
    friction : JointFrictionSet, str or Path
        The friction (or a ``joint_friction.yaml`` path), joints matched to the model's
        hinge and slide joints by name. A joint with ``eta_f``, ``eta_b`` gets the gear's
        load-dependent friction (paper 004, (27)); one with only ``eta_product``
        (efficiencies undetermined) a lossless gear, listed in ``efficiencies_undetermined``.
        The file's effort ``offset`` is the measurement's, not a torque on the joint: left out
        (as :meth:`GearedArm.from_joint_friction` does).
    tol : float, optional
        Relative tolerance of the multi-joint friction solve (default 1e-12).
    compiled : bool or None, optional
        None (default): the compiled step where available (:mod:`fric_core.mujoco_kernel`),
        else the numpy step; False: the numpy step; True: the compiled step or ValueError
        naming why it is not available.

    Raises
    ------
    ValueError
        ``friction`` names a joint the model lacks or one that is not a hinge or slide
        joint; a bad file (naming the field); ``data`` not of ``model``; an integrator other
        than Euler and implicitfast, ``sleep``, or a velocity derivative the stepper does not
        reproduce (named); a gear with |γ_u| > 1 on a joint with Coulomb friction;
        ``compiled=True`` without the compiled step (the reason named).

    Attributes
    ----------
    joint_names : tuple of str
        The mapped joints, in dof order.
    dofs : (k,) ndarray of int
        Their dof addresses.
    friction_torque : (k,) ndarray
        The last step's friction torque on each mapped joint [N m or N] (the sum of the
        joint friction and the gear's), opposing the motion; a buffer.
    stuck : (k,) ndarray of bool
        The mapped joints held by static friction in the last step (velocity exactly 0 before
        MuJoCo's constraints); the next step starts them at rest. A buffer.
    efficiencies_undetermined : tuple of str
        Joints whose file entry has only ``eta_product``.
    steps, unconverged_steps, ill_posed_steps : int
        Steps taken; of those, steps whose friction solve missed its tolerance, and steps with
        σ_max(P) ≥ 1 (paper 004, (57); warned once with :class:`IllPosedWarning`).
    compiled : bool
        Whether :meth:`step` is the compiled step (else the numpy step).
    fallback_reason : str
        Why the numpy step is used ('' when compiled; "compiled=False" when asked for).
    """

    def __init__(self, model, data, friction, *, tol: float = 1e-12,
                 compiled: bool | None = None):
        if compiled not in (None, True, False):
            raise ValueError(f"compiled: expected None, True or False, got {compiled!r}")
        if not isinstance(model, mujoco.MjModel):
            raise ValueError(f"model: expected a mujoco.MjModel, got {type(model).__name__}")
        if not isinstance(data, mujoco.MjData):
            raise ValueError(f"data: expected a mujoco.MjData, got {type(data).__name__}")
        if data.qvel.shape != (model.nv,) or data.qpos.shape != (model.nq,):
            raise ValueError("data: not made from this model (mujoco.MjData(model))")
        if isinstance(friction, (str, Path)):
            friction = read_joint_friction(friction)
        if not isinstance(friction, JointFrictionSet):
            raise ValueError(f"friction: expected a JointFrictionSet or a joint_friction.yaml "
                             f"path, got {type(friction).__name__}")
        self.model, self.data = model, data
        self._check_options()

        by_name = {_joint_name(model, j): j for j in range(model.njnt)}
        unknown = [n for n in friction.names if n not in by_name]
        if unknown:
            raise ValueError(f"friction: joint(s) {unknown} not in the MuJoCo model (its joints "
                             f"are {list(by_name)})")
        wrong = [n for n in friction.names if int(model.jnt_type[by_name[n]]) not in _HINGE_SLIDE]
        if wrong:
            raise ValueError(f"friction: joint(s) {wrong} are not hinge or slide joints (a "
                             "joint friction acts on one degree of freedom)")
        joints = sorted((int(model.jnt_dofadr[by_name[n]]), n) for n in friction.names)
        self.joint_names = tuple(n for _, n in joints)
        self.dofs = np.array([a for a, _ in joints], dtype=np.intp)
        entries = friction.for_joints(self.joint_names, "friction")
        k = len(entries)
        names = self.joint_names

        gu, gv = np.zeros(k), np.zeros(k)
        undetermined = gear_asymmetries(names, entries, gu, gv, "friction")
        flip = gu + gv < 0.0  # (48) is invariant to flipping both signs of a joint's pair
        self.gamma_u = np.where(flip, -gu, gu)
        self.gamma_v = np.where(flip, -gv, gv)
        self.efficiencies_undetermined = tuple(undetermined)
        self._gear = bool(self.gamma_u.any() or self.gamma_v.any())
        self.law = InputFriction(
            names, np.array([e.Cp for e in entries], float), np.array([e.Cn for e in entries],
                                                                     float),
            np.array([e.bp for e in entries], float), np.array([e.bn for e in entries], float),
            [e.curve if e.law == "curve" else None for e in entries])
        bad = self.law.coulomb_possible & (np.abs(self.gamma_u) > 1.0)
        if bad.any():
            j = names[int(np.flatnonzero(bad)[0])]
            raise ValueError(f"friction: joints.{j}: input-side Coulomb friction needs "
                             "|gamma_u| <= 1 (a forward-drivable gear; eta_f > 0)")

        loss = model.dof_frictionloss[self.dofs]
        if (loss != 0.0).any():
            had = {n: float(x) for n, x in zip(names, loss) if x != 0.0}
            warnings.warn(f"FrictionStepper: frictionloss set to 0 on {had}: the friction of "
                          "these joints is the joint_friction file's", FrictionLossWarning,
                          stacklevel=2)
            model.dof_frictionloss[self.dofs] = 0.0

        nv = model.nv
        self._solver = CoulombAxproj(k, tol=tol)
        self._M = np.zeros((nv, nv))
        self._applied = np.zeros(nv)
        self._constraint = np.zeros(nv)  # the last step's qfrc_constraint (the predictor)
        self._armature = model.dof_armature[self.dofs].copy()
        self._ix = np.ix_(self.dofs, self.dofs)
        self.friction_torque = np.zeros(k)
        self.stuck = np.zeros(k, bool)
        self._counts = np.zeros(3, np.int64)  # steps, unconverged, ill-posed (shared with C)
        self._warned = False
        self._opt = model.opt
        if compiled is False:
            self._kernel, self.fallback_reason = None, "compiled=False"
        else:
            self._kernel, self.fallback_reason = make_kernel(self)
            if compiled and self._kernel is None:
                raise ValueError(f"compiled: the compiled step is not available "
                                 f"({self.fallback_reason})")
        self.compiled = self._kernel is not None

    # -- counters (shared with the compiled step) ------------------------------------------------
    @property
    def steps(self) -> int:
        """Steps taken."""
        return int(self._counts[0])

    @steps.setter
    def steps(self, value: int) -> None:
        self._counts[0] = value

    @property
    def unconverged_steps(self) -> int:
        """Steps whose friction solve missed its tolerance."""
        return int(self._counts[1])

    @unconverged_steps.setter
    def unconverged_steps(self, value: int) -> None:
        self._counts[1] = value

    @property
    def ill_posed_steps(self) -> int:
        """Steps with σ_max(P) ≥ 1 (paper 004, (57))."""
        return int(self._counts[2])

    @ill_posed_steps.setter
    def ill_posed_steps(self, value: int) -> None:
        self._counts[2] = value

    # -- model checks --------------------------------------------------------------------------
    def _check_options(self) -> None:
        """The integrator and the velocity-derivative sources (module docstring)."""
        m = self.model
        integ = int(m.opt.integrator)
        if integ not in (_EULER, _IMPLICITFAST):
            raise ValueError(f"model.opt.integrator: {_INTEGRATOR_NAMES.get(integ, integ)} is not "
                             f"supported by FrictionStepper (use one of "
                             f"{', '.join(SUPPORTED_INTEGRATORS)}: the friction is solved on the "
                             "matrix their velocity update inverts)")
        if m.opt.enableflags & _ENBL_SLEEP:
            raise ValueError("model.opt.enableflags: sleep is not supported by FrictionStepper "
                             "(sleeping trees skip the velocity update the friction is solved on)")
        problems = []
        if np.any(m.dof_dampingpoly) or np.any(m.actuator_dampingpoly):
            problems.append("damping polynomials (dof_dampingpoly, actuator_dampingpoly)")
        if integ == _IMPLICITFAST:
            if m.ntendon and (np.any(m.tendon_damping) or np.any(m.tendon_dampingpoly)):
                problems.append("tendon damping")
            if m.opt.density > 0.0 or m.opt.viscosity > 0.0:
                problems.append("fluid forces (opt.density, opt.viscosity)")
            if m.nflex:
                problems.append("flexes")
            for a in range(m.nu):
                bias, gain = int(m.actuator_biastype[a]), int(m.actuator_gaintype[a])
                name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"<actuator {a}>"
                if bias not in (_BIAS_NONE, _BIAS_AFFINE) or gain not in (_GAIN_FIXED,
                                                                          _GAIN_AFFINE):
                    problems.append(f"actuator {name} (gain/bias type with velocity terms)")
                    continue
                kv = (bias == _BIAS_AFFINE and m.actuator_biasprm[a, 2] != 0.0) or (
                    gain == _GAIN_AFFINE and m.actuator_gainprm[a, 2] != 0.0)
                if not kv:
                    continue
                if int(m.actuator_trntype[a]) not in _TRN_JOINTS or int(
                        m.jnt_type[m.actuator_trnid[a, 0]]) not in _HINGE_SLIDE:
                    problems.append(f"actuator {name} (a velocity term on a tendon, site or "
                                    "multi-dof joint)")
                elif (gain == _GAIN_AFFINE and m.actuator_gainprm[a, 2] != 0.0
                      and int(m.actuator_dyntype[a]) != _DYN_NONE):
                    problems.append(f"actuator {name} (a velocity gain on an activation)")
        if problems:
            raise ValueError(f"model: FrictionStepper does not reproduce the velocity derivative "
                             f"of {'; '.join(problems)} in MuJoCo's "
                             f"{_INTEGRATOR_NAMES[integ]} step (integrator "
                             f"{'Euler' if integ == _IMPLICITFAST else 'implicitfast'} or "
                             "a model without them)")
        self._integrator = integ
        # joint damping per dof (dof damping + actuator damping · gear², mj_actuatorDamping)
        damp = m.dof_damping.copy()
        for a in range(m.nu):
            if int(m.actuator_trntype[a]) in _TRN_JOINTS and m.actuator_damping[a] != 0.0:
                jnt = int(m.actuator_trnid[a, 0])
                damp[m.jnt_dofadr[jnt]] += m.actuator_damping[a] * m.actuator_gear[a, 0] ** 2
        self._damping = damp
        # actuators whose velocity terms enter implicitfast's derivative (checked above)
        kv = [a for a in range(m.nu) if int(m.actuator_trntype[a]) in _TRN_JOINTS
              and ((int(m.actuator_biastype[a]) == _BIAS_AFFINE and m.actuator_biasprm[a, 2])
                   or (int(m.actuator_gaintype[a]) == _GAIN_AFFINE and m.actuator_gainprm[a, 2]))]
        self._kv_act = np.array(kv, dtype=np.intp)
        self._kv_dof = np.array([m.jnt_dofadr[m.actuator_trnid[a, 0]] for a in kv], np.intp)
        self._kv_gear2 = np.array([m.actuator_gear[a, 0] ** 2 for a in kv])
        self._kv_bias = np.array([m.actuator_biasprm[a, 2] if int(m.actuator_biastype[a])
                                  == _BIAS_AFFINE else 0.0 for a in kv])
        self._kv_gain = np.array([m.actuator_gainprm[a, 2] if int(m.actuator_gaintype[a])
                                  == _GAIN_AFFINE else 0.0 for a in kv])
        self._kv_ctrl = np.array([m.actuator_ctrladr[a] if hasattr(m, "actuator_ctrladr") else a
                                  for a in kv], np.intp)

    def effective_mass(self, out: np.ndarray | None = None) -> np.ndarray:
        """The matrix MuJoCo's integrator inverts at the current state (module docstring):
        ``M`` or ``M + h diag(damping)`` (Euler), ``M − h ∂f/∂v`` (implicitfast).

        Valid after the position and velocity stages of the current state (``mj_step1`` or
        ``mj_forward``) and the actuation (``mj_fwdActuation``).

        Parameters
        ----------
        out : (nv, nv) ndarray, optional
            Where to write it.

        Returns
        -------
        (nv, nv) ndarray
            The dense matrix [kg m², kg].
        """
        m, d = self.model, self.data
        M = self._M if out is None else out
        mujoco.mj_fullM(m, d, M)
        h = m.opt.timestep
        dsbl = m.opt.disableflags
        if self._integrator == _EULER:
            if not dsbl & (_DSBL_EULERDAMP | _DSBL_DAMPER):
                # MuJoCo's Euler: implicit in the dof damping when any dof has damping or an
                # actuator (then M + h·diag(damping), possibly + 0)
                flat = M.reshape(-1)
                flat[::m.nv + 1] += h * self._damping
            return M
        deriv = np.zeros(m.nv)
        if not dsbl & _DSBL_DAMPER:
            deriv -= self._damping
        if self._kv_act.size and not dsbl & _DSBL_ACTUATION:
            a = self._kv_act
            vel = self._kv_bias + self._kv_gain * d.ctrl[self._kv_ctrl]
            force = d.actuator_force[a]
            lim = m.actuator_forcelimited[a].astype(bool)
            rng = m.actuator_forcerange[a]
            clamped = lim & ((force <= rng[:, 0]) | (force >= rng[:, 1]))
            grp = m.actuator_group[a]
            off = np.array([(0 <= g < 31) and bool(m.opt.disableactuator & (1 << g))
                            for g in grp], bool)
            np.add.at(deriv, self._kv_dof, np.where(clamped | off, 0.0, self._kv_gear2 * vel))
        M.reshape(-1)[::m.nv + 1] -= h * deriv
        return M

    def reset(self) -> None:
        """Forget the friction solver's warm start, the constraint predictor and which joints
        were stuck (after ``mj_resetData`` or a jump of the state)."""
        self._solver.reset()
        self._constraint.fill(0.0)
        self.stuck.fill(False)
        if self._kernel is not None:
            self._kernel.reset()

    # -- step ----------------------------------------------------------------------------------
    def step(self) -> None:
        """Advance ``data`` by one ``model.opt.timestep``, as ``mujoco.mj_step`` with the mapped
        joints' friction solved exactly (module docstring). ``qfrc_applied`` is left as it was;
        the friction is in :attr:`friction_torque`."""
        kernel = self._kernel
        if kernel is not None:
            opt = self._opt
            kernel(opt.timestep, opt.disableflags, opt.disableactuator)
            return
        self._step_numpy()

    def _step_numpy(self) -> None:
        """The numpy step (the reference of the compiled one): :meth:`step`."""
        m, d = self.model, self.data
        mujoco.mj_step1(m, d)
        mujoco.mj_fwdActuation(m, d)
        mujoco.mj_fwdAcceleration(m, d)
        if d.efm_active:
            raise ValueError("model: MuJoCo's implicit effective metric (flex stiffness) is "
                             "active: not supported by FrictionStepper")
        F = self._friction_force()
        applied = d.qfrc_applied
        np.copyto(self._applied, applied)
        applied[self.dofs] -= F
        try:
            mujoco.mj_step2(m, d)
        finally:
            np.copyto(applied, self._applied)
        np.copyto(self._constraint, d.qfrc_constraint)
        self._counts[0] += 1

    def _friction_force(self) -> np.ndarray:
        """(69a)–(69f) on MuJoCo's effective mass: the friction torque F on the mapped joints
        (the torque ``−F`` gives MuJoCo's velocity update the solved velocities)."""
        m, d = self.model, self.data
        h = m.opt.timestep
        K = self.dofs
        v = d.qvel[K]
        # a joint the last step left stuck starts this one at rest: its velocity is 0 but for
        # MuJoCo's round-off (or a constraint impulse, which the friction sees from the next
        # step on), whose sign must not pick the law's side
        b, C, c0 = self.law.terms(np.where(self.stuck, 0.0, v))
        Mhat = self.effective_mass()
        Mhat[K, K] += h * b                    # implicit viscosity: input-side inertia h b
        Minv = _inv(Mhat)                                                          # (69a)
        if not np.isfinite(Minv).all():
            raise ValueError("model: the effective mass matrix is singular (massless bodies?)")
        tau_u = d.qfrc_actuator[K] - c0 - b * v   # the input torque less the explicit friction
        tau_a = d.qfrc_smooth + self._constraint   # with the last step's constraint forces
        tau_a[K] -= c0 + b * v                    # τ_u − τ_v of (69e) on every dof
        y_all = h * (Minv @ tau_a)
        v_star = v + y_all[K]                                                      # (69e)
        A = h * Minv[self._ix]
        if self._gear:
            tau_v = d.qfrc_actuator[K] - tau_a[K] - c0 - b * v  # the load: every other torque
            gu, gv = self.gamma_u, self.gamma_v
            B = -gv[:, None] * Mhat[K]            # output side: M̂ less the input side's
            B[np.arange(K.size), K] += gv * (self._armature + h * b) + gu * (
                self._armature + h * b)                                            # (69b)
            PB = B @ Minv
            P = PB[:, K]
            phi = gu * tau_u + gv * tau_v - PB @ tau_a                             # (69d)
            smax = math.sqrt(float(np.vdot(P, P)))
            if smax >= 1.0:
                smax = float(np.linalg.norm(P, 2))
                if smax >= 1.0:
                    self._ill_posed(smax)
        else:
            P = np.zeros((K.size, K.size))
            phi = np.zeros(K.size)
            gu = self.gamma_u
        y, f, stuck, it, conv, res = solve_joint_friction(self._solver, v_star, A, phi, P, C,
                                                          gu * C)
        if not conv:
            self._counts[1] += 1
        v_new = v_star - y                                                         # (69f)
        v_new[stuck] = 0.0
        F = f + c0 + b * v_new
        self.friction_torque[:] = F
        self.stuck[:] = stuck
        return F

    def _ill_posed(self, smax: float) -> None:
        self._counts[2] += 1
        if not self._warned:
            self._warned = True
            warnings.warn(f"FrictionStepper: sigma_max(P) = {smax:.4g} >= 1: the gear friction's "
                          "well-posedness condition (57) fails (larger armature or smaller "
                          "|gamma_v| restore it); warned once, see ill_posed_steps",
                          IllPosedWarning, stacklevel=5)  # step's caller
