"""Single-contact kernel of the reduced planar model: one step in plain floats.

:class:`~.reduced.ReducedLuGre` with one contact steps through a kernel built here for its
current configuration (limit surface, parameters, step, load, LuGre or Elasto-Plastic). The
kernel holds every constant (the table's bilinear coefficients (43) per cell), evaluates the
table look-up (37)–(44), the bristle rate (33)/(34), the exact step and the wrench (28) inline,
and reads and writes the bristle state in the model's (3, 1) state array in place (that array
stays the source of truth: the numpy path, ``state``, ``reset``, copies and pickles see it).

Two implementations of the same arithmetic:

* the compiled one, :mod:`._reduced_kernel` (``_reduced_kernel.c``, built by ``setup.py`` as an
  optional extension: a machine without a C compiler installs without it), used when present;
* the pure-Python one, :func:`_py_kernel`, the reference: the arithmetic of the scalar step
  (``ReducedLuGre._step_one`` with ``h_scalar``), expression by expression in the same order.
  It is used when the extension is absent or ``FRIC_NO_COMPILED=1`` is set in the environment.

Both give bit-identical results (the C file is built with ``-ffp-contract=off``, no fast-math,
and calls the libm functions Python's ``math`` calls); ``test/core/test_planar_reduced_fast.py``
checks the compiled kernel against the Python one, the scalar step and the numpy batched path.

A kernel is called as ``kernel(twist)``: for a list or tuple of three floats or a float64 array
of shape (3,) or (1, 3) with a finite sum it makes one step and returns the wrench, a fresh
array of the twist's shape;
for anything else it returns None and changes nothing (the model's checked path takes over,
which calls ``kernel.step3(vx, vy, om)``). A finite twist so large that the step overflows
(‖v_S‖ beyond ~1e154, far outside any physical contact) raises ValueError naming ``twist`` and
leaves the state as it was (the compiled ``kernel(twist)`` returns None and ``step3`` raises).
"""

from __future__ import annotations

import math
import os

import numpy as np

_TINY = 1e-300
_OVERFLOW = ("twist: too large for the step (the wrench or the bristle state overflows),"
             " got [{!r}, {!r}, {!r}]")
_F64 = np.dtype(np.float64)
_SHAPE3 = (3,)
_SHAPE13 = (1, 3)

try:
    if os.environ.get("FRIC_NO_COMPILED", "").strip() not in ("", "0"):
        raise ImportError("FRIC_NO_COMPILED is set")
    from . import _reduced_kernel as _ck
except ImportError:
    _ck = None

#: Whether the compiled kernel is in use (built, and ``FRIC_NO_COMPILED`` not set).
COMPILED = _ck is not None

# the tables' coefficients as C doubles, by table (a kernel is rebuilt whenever the load, the
# step or the surface changes, e.g. at every normal-force update of a simulation: the list of
# tuples is converted once); the list is held so that its id is not reused
_COEF_BYTES: dict = {}


def _coef_array(ls) -> np.ndarray:
    lst = ls._coef_list
    hit = _COEF_BYTES.get(id(lst))
    if hit is None or hit[0] is not lst:
        if len(_COEF_BYTES) >= 8:
            _COEF_BYTES.pop(next(iter(_COEF_BYTES)))
        hit = _COEF_BYTES[id(lst)] = (lst, np.array(lst, dtype=np.float64))
    return hit[1]


def make_kernel(model, compiled: bool | None = None):
    """The single-contact step of ``model`` (a one-contact ``ReducedLuGre``) for its current
    configuration: ``kernel(twist)`` (the wrench, or None for a twist it does not take) and
    ``kernel.step3(vx, vy, om)``.

    ``compiled``: None for the compiled kernel when available, False for the Python reference,
    True to require the compiled one (ImportError without it). The kernel captures the
    configuration at build time: the model rebuilds it whenever the limit surface, the
    parameters, the step, the load or the model form change.
    """
    if compiled is None:
        compiled = COMPILED
    if not compiled:
        return _py_kernel(model)
    if _ck is None:
        raise ImportError("fric_core.planar._reduced_kernel is not built (or FRIC_NO_COMPILED"
                          " is set)")
    from .limit_surface import LimitSurfaceTable

    p, ls = model.params, model.limit_surface
    zc = model._zc
    if zc.shape != (3, 1) or not zc.flags.c_contiguous:
        raise ValueError("make_kernel: one contact only")
    # the constants exactly as _py_kernel computes them
    r = float(ls.radius)
    s2 = float(p.sigma2)
    table = isinstance(ls, LimitSurfaceTable)
    n_ls = ls.n_ls if table else 1
    return _ck.Kernel(
        zc, np.empty(3), np.ndarray, _coef_array(ls) if table else None,
        r, -float(model.dt), float(-model._fn0), float(p.sigma0), float(p.sigma1), s2,
        float(p.sigma2 * ls.viscous_torque_scale), float(p.mu_c), float(p.mu_s - p.mu_c),
        float(p.v_s), float(p.gamma), p.mu_s == p.mu_c, p.gamma == 2.0,
        bool(model.elasto_plastic), float(p.s_ba), float(1.0 - p.s_ba),
        n_ls, 2.0 * n_ls / math.pi, 2.0 * math.pi, 4 * n_ls - 1, n_ls - 1)


def _py_kernel(model):
    """The pure-Python kernel (the reference of the compiled one): ``step3`` as a closure of
    plain floats, ``kernel(twist)`` its dispatch."""
    from .limit_surface import LimitSurfaceTable

    p, ls = model.params, model.limit_surface
    r = float(ls.radius)
    mdt = -float(model.dt)
    fn = -model._fn0
    sigma0, sigma1, s2 = p.sigma0, p.sigma1, p.sigma2
    s2u = s2 * ls.viscous_torque_scale
    mu_c, mu_s, v_s, gamma = p.mu_c, p.mu_s, p.v_s, p.gamma
    const_g = mu_s == mu_c
    gamma2 = gamma == 2.0
    dmu = mu_s - mu_c
    ep = bool(model.elasto_plastic)
    s_ba = p.s_ba
    span_k = 1.0 - s_ba
    pi = math.pi
    zm = memoryview(model._zc.reshape(-1))
    sqrt, atan2, exp, expm1, cos = math.sqrt, math.atan2, math.exp, math.expm1, math.cos
    array = np.array
    table = isinstance(ls, LimitSurfaceTable)
    if table:
        n_ls = ls.n_ls
        scale = 2.0 * n_ls / math.pi
        two_pi = 2.0 * math.pi
        ith_max, iph_max = 4 * n_ls - 1, n_ls - 1
        coef = ls._coef_list

    def kernel(vx, vy, om):
        vt2 = vx * vx + vy * vy
        rom = r * om
        n = sqrt(vt2 + rom * rom)                                   # ‖v_S‖
        # nh = −h(r, v): the table look-up (43) (LimitSurfaceTable.h_scalar with the sign
        # sgn_p(ω) folded into ns = −sgn_p(ω): ±1 products are exact) or the ellipsoid (24)
        if table:
            if om < 0:
                th = atan2(-vy, -vx)
                ns = 1.0
                aom = -om
            else:
                th = atan2(vy, vx)
                ns = -1.0
                aom = om
            if th < 0.0:
                th += two_pi
            th *= scale
            if vt2 == 0.0 and om == 0.0:
                hx = hy = ht = 0.0
            else:
                ph = atan2(sqrt(vt2), r * aom) * scale
                ith = int(th)
                if ith > ith_max:
                    ith = ith_max
                iph = int(ph)
                if iph > iph_max:
                    iph = iph_max
                dth = th - ith
                dph = ph - iph
                a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2 = coef[ith * n_ls + iph]
                hx = ns * (a0 + dth * b0 + dph * (c0 + dth * d0))
                hy = ns * (a1 + dth * b1 + dph * (c1 + dth * d1))
                ht = ns * (a2 + dth * b2 + dph * (c2 + dth * d2))
        elif n == 0.0:
            hx = hy = ht = 0.0
        else:
            hx, hy, ht = vx / n, vy / n, rom / n
        ux, uy, ut = hx * n, hy * n, ht * n * r                   # w‖v_S‖ = −S h ‖v_S‖
        if const_g:
            g = mu_c
        else:
            x = n / v_s
            if gamma2:
                x = x * x
            else:
                try:
                    x = x ** gamma
                except OverflowError:                # a huge twist: g = μ_C, as in numpy
                    x = math.inf
            g = mu_c + dmu * exp(-x)
        a = sigma0 * n / g
        zx, zy, zt = zm
        if ep:
            # β of (34) at the start and at the end of the frozen-β step, the larger held
            # (ReducedLuGre._beta_one inlined with h = −nh; α is exactly 0 for t ≤ 0 and 1 for
            # t ≥ 1, where the cosine is skipped)
            hn = sqrt(hx * hx + hy * hy + ht * ht)
            zmax = hn * g / sigma0
            span = zmax * span_k
            zba = s_ba * zmax
            moving = n > 0
            # β(z_k)
            pt = zt / r
            zn = sqrt(zx * zx + zy * zy + pt * pt)
            t = (zn - zba) / span if span > 0 else 1.0
            if t <= 0.0:
                b = 0.0
            else:
                half = 0.5 if t >= 1.0 else (0.5 - 0.5 * cos(pi * t)) * 0.5
                den = zn * hn
                b = half * (((hx * zx + hy * zy + ht * pt) / den
                             if (den > 0 and moving) else 1.0) + 1.0)
            # β(z_predicted), z_predicted: the exact step with β(z_k)
            bz = b * a
            if bz < _TINY:
                bz = _TINY
            em = expm1(bz * mdt)
            c = em / bz
            e = em + 1.0
            px, py, pt = e * zx - c * ux, e * zy - c * uy, e * zt - c * ut
            pt = pt / r
            zn = sqrt(px * px + py * py + pt * pt)
            t = (zn - zba) / span if span > 0 else 1.0
            if t > 0.0:
                half = 0.5 if t >= 1.0 else (0.5 - 0.5 * cos(pi * t)) * 0.5
                den = zn * hn
                bk = half * (((hx * px + hy * py + ht * pt) / den
                              if (den > 0 and moving) else 1.0) + 1.0)
                if bk > b:
                    b = bk
            a *= b
        if a < _TINY:
            a = _TINY
        em = expm1(a * mdt)
        c = em / a
        e = em + 1.0
        zx = e * zx - c * ux
        zy = e * zy - c * uy
        zt = e * zt - c * ut
        k = sigma0 - sigma1 * a
        fx = (k * zx + sigma1 * ux + s2 * vx) * fn
        fy = (k * zy + sigma1 * uy + s2 * vy) * fn
        ft = (k * zt + sigma1 * ut + s2u * om) * fn
        # x − x is 0 for a finite x, NaN otherwise: a twist beyond ~1e154 (‖v_S‖² overflows)
        # is refused, the state kept
        if (fx - fx) + (fy - fy) + (ft - ft) + (zx - zx) + (zy - zy) + (zt - zt) != 0.0:
            raise ValueError(_OVERFLOW.format(vx, vy, om))
        zm[0] = zx
        zm[1] = zy
        zm[2] = zt
        return array((fx, fy, ft))

    isfinite = math.isfinite
    ndarray = np.ndarray

    def dispatch(twist):
        tt = type(twist)
        if tt is ndarray:
            if twist.dtype is _F64:
                sh = twist.shape
                if sh == _SHAPE3:
                    vx, vy, om = twist.tolist()
                    if isfinite(vx + vy + om):
                        return kernel(vx, vy, om)
                elif sh == _SHAPE13:
                    vx, vy, om = twist[0].tolist()
                    if isfinite(vx + vy + om):
                        return kernel(vx, vy, om)[None, :]
        elif (tt is list or tt is tuple) and len(twist) == 3:
            vx, vy, om = twist
            if type(vx) is float and type(vy) is float and type(om) is float \
                    and isfinite(vx + vy + om):
                return kernel(vx, vy, om)
        return None

    dispatch.step3 = kernel
    return dispatch
