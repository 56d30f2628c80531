"""Single-contact kernel of the reduced planar model: one step in plain floats.

:class:`~.reduced.ReducedLuGre` with one contact steps through a closure built here for its
current configuration (limit surface, parameters, step, load, LuGre or Elasto-Plastic). The
closure holds every constant as a local (the table's bilinear coefficients (43) as a flat list of
12-tuples), evaluates the table look-up (37)–(44), the bristle rate (33)/(34), the exact step
and the wrench (28) inline — no numpy call except the one that builds the returned wrench — and
reads and writes the bristle state through a memoryview of the model's (3, 1) state array.

The arithmetic is that of the reference scalar step (``ReducedLuGre._step_one`` with
``h_scalar``), expression by expression in the same order, so its results are bit-identical;
``test/core/test_planar_reduced_fast.py`` checks it against that step and against the numpy
batched path over many random states.
"""

from __future__ import annotations

import math

import numpy as np

_TINY = 1e-300


def make_kernel(model):
    """The single-contact step of ``model`` (a one-contact ``ReducedLuGre``) as a closure.

    ``kernel(vx, vy, om)`` advances the bristle state by ``model.dt`` for the twist (floats, at
    the CoP) held over the step and returns the wrench at the CoP, a fresh (3,) array. The
    closure captures the configuration at build time: the model rebuilds it whenever the
    limit surface, the parameters, the step, the load or the model form change.
    """
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
            g = mu_c + dmu * exp(-(x * x if gamma2 else x ** gamma))
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
        zm[0] = zx
        zm[1] = zy
        zm[2] = zt
        k = sigma0 - sigma1 * a
        return array(((k * zx + sigma1 * ux + s2 * vx) * fn,
                      (k * zy + sigma1 * uy + s2 * vy) * fn,
                      (k * zt + sigma1 * ut + s2u * om) * fn))

    return kernel
