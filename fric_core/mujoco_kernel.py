"""The compiled step of :class:`fric_core.mujoco.FrictionStepper` (issue 25).

:class:`~fric_core.mujoco.FrictionStepper`'s numpy step makes about ten Python → C calls and
twenty small numpy operations per step (~60 µs for a 7-joint arm, against ~3 µs for
``mujoco.mj_step``). The extension :mod:`fric_core._mujoco_kernel` (``_mujoco_kernel.c``, built
by ``setup.py`` as an optional extension: a machine without a C compiler installs without it)
makes the whole step in one call: ``mj_step1``, the actuation and smooth forces, MuJoCo's
effective mass, the friction solve (69) of the mapped joints, ``mj_step2``.

It is not linked against MuJoCo (pip builds fric without MuJoCo's headers): :func:`make_kernel`
looks up the addresses of the MuJoCo functions it calls with ctypes in the ``libmujoco`` that
the ``mujoco`` package has loaded (``RTLD_NOLOAD``: that very library, never a second copy), and
hands it the ``mjModel*`` / ``mjData*`` addresses (``_address``) and numpy views of the arrays
it reads and writes. Errors inside MuJoCo are trapped the way the mujoco bindings trap them
(``_mjPRIVATE_setTlsLogHandler``) and raised as ``mujoco.FatalError``.

The numpy step stays the reference: the kernel does the same operations in the same order, with
its own dense LU where numpy calls LAPACK, so the two agree to round-off (not bit for bit;
``test/core/test_mujoco_kernel.py``). :func:`make_kernel` returns no kernel, with the reason,
when the extension is not built, ``FRIC_NO_COMPILED=1`` is set, MuJoCo is not a 4.x release
(the kernel declares MuJoCo 4's functions), the loaded library or one of its functions is not
found, or the model has flexes (the numpy step checks MuJoCo's flex effective metric each step).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import mujoco
import numpy as np

from .transmission.dai import IllPosedWarning

__all__ = ["COMPILED", "make_kernel"]

try:
    if os.environ.get("FRIC_NO_COMPILED", "").strip() not in ("", "0"):
        raise ImportError("FRIC_NO_COMPILED is set")
    from . import _mujoco_kernel as _ck
    _NOT_BUILT = ""
except ImportError as exc:
    _ck = None
    _NOT_BUILT = str(exc)

#: Whether the compiled kernel is importable (built, and ``FRIC_NO_COMPILED`` not set).
COMPILED = _ck is not None

#: The MuJoCo functions the kernel calls (their MuJoCo 4 declarations are in _mujoco_kernel.c).
FUNCTIONS = ("mj_step1", "mj_step2", "mj_fwdActuation", "mj_fwdAcceleration", "mj_fullM",
             "_mjPRIVATE_setTlsLogHandler", "_mjPRIVATE_getGlobalLogHandler")
_VERSIONS = (4_000_000, 5_000_000)  # mj_version() of the releases those declarations are of


@functools.cache
def mujoco_functions() -> tuple[dict | None, str]:
    """The addresses of :data:`FUNCTIONS` in the loaded libmujoco, or None and why not.

    Returns
    -------
    addresses : dict or None
        Function name → address.
    reason : str
        Empty, or why the functions are not available.
    """
    version = mujoco.mj_version()
    if not _VERSIONS[0] <= version < _VERSIONS[1]:
        return None, (f"MuJoCo {mujoco.__version__}: the kernel declares the functions of "
                      "MuJoCo 4.x")
    noload = getattr(os, "RTLD_NOLOAD", None)
    if noload is None:
        return None, "this platform has no RTLD_NOLOAD to find the loaded libmujoco"
    folder = os.path.dirname(mujoco.__file__)
    for path in sorted(glob.glob(os.path.join(folder, "libmujoco.so*"))
                       + glob.glob(os.path.join(folder, "libmujoco*.dylib"))):
        try:
            lib = ctypes.CDLL(path, mode=noload | os.RTLD_LAZY)
        except OSError:
            continue  # not the loaded one
        try:
            if lib.mj_version() != version:
                continue
            return {n: ctypes.cast(getattr(lib, n), ctypes.c_void_p).value
                    for n in FUNCTIONS}, ""
        except AttributeError as exc:
            return None, f"{os.path.basename(path)}: {exc}"
    return None, f"the libmujoco the mujoco package loaded was not found in {folder}"


def _spectral_norm(P: np.ndarray) -> float:
    return float(np.linalg.norm(P, 2))


def make_kernel(stepper) -> tuple[object | None, str]:
    """The compiled step of ``stepper``, or None and the reason (the module docstring).

    Parameters
    ----------
    stepper : fric_core.mujoco.FrictionStepper
        A stepper whose construction is complete but for its kernel: the kernel reads its
        model, data, law, gear and integrator terms, and shares its buffers
        (``friction_torque``, ``stuck``, the step counters, the last constraint torques).

    Returns
    -------
    kernel : callable or None
        ``kernel(h, disableflags, disableactuator)`` makes one step; ``kernel.reset()``.
    reason : str
        Empty, or why there is no kernel.
    """
    if _ck is None:
        return None, (f"fric_core._mujoco_kernel is not built ({_NOT_BUILT})"
                      if "FRIC_NO_COMPILED" not in _NOT_BUILT else "FRIC_NO_COMPILED is set")
    functions, reason = mujoco_functions()
    if functions is None:
        return None, reason
    m, d = stepper.model, stepper.data
    if m.nflex:
        return None, ("the model has flexes (the numpy step checks MuJoCo's flex effective "
                      "metric each step)")
    law = stepper.law
    k = stepper.dofs.size
    if law.curve_any:
        curves = [np.ascontiguousarray(x, dtype=float)
                  for side in range(2) for x in (law._curve_v[side], law._curve_c[side],
                                                 law._curve_s[side])]
    else:
        curves = [np.zeros((k, 1)) for _ in range(6)]
    solver = stepper._solver
    P = np.zeros((k, k))
    i64 = functools.partial(np.ascontiguousarray, dtype=np.int64)
    f64 = functools.partial(np.ascontiguousarray, dtype=np.float64)
    bit = mujoco.mjtDisableBit
    spec = dict(
        functions, model_address=m._address, data_address=d._address,
        nv=m.nv, k=k, nu=m.nu, nkv=stepper._kv_act.size,
        kpos=curves[0].shape[1], kneg=curves[3].shape[1],
        implicitfast=int(stepper._integrator == int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST)),
        curve_any=int(law.curve_any), gear=int(stepper._gear),
        max_iter=solver.max_iter, sweeps=solver.sweeps, tol=solver.tol,
        dsbl_damper=int(bit.mjDSBL_DAMPER), dsbl_eulerdamp=int(bit.mjDSBL_EULERDAMP),
        dsbl_actuation=int(bit.mjDSBL_ACTUATION),  # the values are the masks
        qvel=d.qvel, qfrc_applied=d.qfrc_applied, qfrc_smooth=d.qfrc_smooth,
        qfrc_actuator=d.qfrc_actuator, qfrc_constraint=d.qfrc_constraint,
        actuator_force=d.actuator_force, ctrl=d.ctrl,
        actuator_forcelimited=m.actuator_forcelimited, actuator_forcerange=m.actuator_forcerange,
        actuator_group=m.actuator_group,
        dofs=i64(stepper.dofs), damping=f64(stepper._damping), kv_act=i64(stepper._kv_act),
        kv_dof=i64(stepper._kv_dof), kv_ctrl=i64(stepper._kv_ctrl),
        kv_gear2=f64(stepper._kv_gear2), kv_bias=f64(stepper._kv_bias),
        kv_gain=f64(stepper._kv_gain),
        bp=f64(law.bp), bn=f64(law.bn), b_rest=f64(law.b_rest), coulomb=f64(law.coulomb),
        offset=f64(law.offset), Cp=f64(law.Cp), Cn=f64(law.Cn),
        gamma_u=f64(stepper.gamma_u), gamma_v=f64(stepper.gamma_v),
        armature=f64(stepper._armature),
        curve_v_pos=curves[0], curve_c_pos=curves[1], curve_s_pos=curves[2],
        curve_v_neg=curves[3], curve_c_neg=curves[4], curve_s_neg=curves[5],
        constraint=stepper._constraint, friction_torque=stepper.friction_torque,
        stuck=stepper.stuck, counts=stepper._counts, P=P,
        owners=(m, d), norm2=functools.partial(_spectral_norm, P),
        ill_posed_warning=IllPosedWarning, fatal_error=mujoco.FatalError)
    return _ck.Kernel(**spec), ""
