/* Single-contact step of the reduced planar LuGre / Elasto-Plastic model (paper 002,
 * Waltersson & Karayiannidis, Sec. V) as a CPython extension type.
 *
 * The compiled twin of the plain-float kernel in reduced_fast.py (``_py_kernel``), which stays
 * the reference: the same expressions in the same order (the table look-up (37)-(44), the
 * bristle rate (33)/(34), the exact step and the wrench (28)), the same libm functions, built
 * with -ffp-contract=off and without -ffast-math, so the results are bit-identical
 * (test/core/test_planar_reduced_fast.py checks it).
 *
 * Kernel(zc, out, ndarray, coef, r, mdt, fn, sigma0, sigma1, s2, s2u, mu_c, dmu, v_s, gamma,
 *        const_g, gamma2, ep, s_ba, span_k, n_ls, scale, two_pi, ith_max, iph_max)
 * holds every constant of one configuration (reduced_fast.make_kernel passes them, computed in
 * Python exactly as the Python kernel computes them), a buffer on the model's bristle state
 * ``zc`` (3 contiguous float64, the source of truth: read and written in place every step) and
 * a buffer on ``out`` (3 float64) whose ``copy`` returns the fresh wrench array.
 *
 * kernel(twist): for a list or tuple of 3 floats or a float64 ndarray of shape (3,) with a
 * finite sum, one step and the wrench, (3,) (of shape (1, 3) for a (1, 3) array twist); None
 * for anything else (the caller's checked path), and for a twist so large that the step
 * overflows (state untouched; step3 raises ValueError for it).
 * kernel.step3(vx, vy, om): one step for three floats, the wrench.
 *
 * No numpy C API: the arrays are reached through the buffer protocol.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define TINY 1e-300

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    double r, mdt, fn, sigma0, sigma1, s2, s2u, mu_c, dmu, v_s, gamma, s_ba, span_k;
    double scale, two_pi;
    int const_g, gamma2, ep, table;
    Py_ssize_t n_ls, ith_max, iph_max;
    double *coef;                       /* 12 bilinear coefficients (43) per cell, or NULL */
    double *z;                          /* the model's state, zbuf.buf */
    double *o;                          /* out's data, obuf.buf */
    int have_z, have_o;
    Py_buffer zbuf, obuf;
    PyObject *copy;                     /* out.copy */
    PyObject *copy13;                   /* out.reshape(1, 3).copy */
    PyObject *ndarray;                  /* numpy.ndarray */
} Kernel;

/* math.atan2 of CPython (Modules/mathmodule.c, m_atan2): the special values spelled out, then
 * libm */
static double
m_atan2(double y, double x)
{
    if (isnan(x) || isnan(y))
        return NAN;
    if (isinf(y)) {
        if (isinf(x)) {
            if (copysign(1., x) == 1.)
                return copysign(0.25 * M_PI, y);
            return copysign(0.75 * M_PI, y);
        }
        return copysign(0.5 * M_PI, y);
    }
    if (isinf(x) || y == 0.) {
        if (copysign(1., x) == 1.)
            return copysign(0., y);
        return copysign(M_PI, y);
    }
    return atan2(y, x);
}

/* x ** gamma for x >= 0 as Python's float power gives it where it does not raise (where Python
 * raises OverflowError the result is inf, which the caller's exp(-inf) takes to 0) */
static double
m_pow(double x, double g)
{
    if (g == 0.)
        return 1.;
    if (isnan(x))
        return x;
    return pow(x, g);
}

/* one step: the bristle state advanced in place, the wrench into k->o; 0 (and nothing
 * written) where the wrench or the state would not be finite (a twist beyond ~1e154) */
static int
kernel_step(Kernel *k, double vx, double vy, double om)
{
    const double r = k->r, sigma0 = k->sigma0, mdt = k->mdt;
    double vt2 = vx * vx + vy * vy;
    double rom = r * om;
    double n = sqrt(vt2 + rom * rom);                          /* ||v_S|| */
    double hx, hy, ht;
    if (k->table) {
        double th, ns, aom;
        if (om < 0) {
            th = m_atan2(-vy, -vx);
            ns = 1.0;
            aom = -om;
        } else {
            th = m_atan2(vy, vx);
            ns = -1.0;
            aom = om;
        }
        if (th < 0.0)
            th += k->two_pi;
        th *= k->scale;
        if (vt2 == 0.0 && om == 0.0) {
            hx = hy = ht = 0.0;
        } else {
            double ph = m_atan2(sqrt(vt2), r * aom) * k->scale;
            Py_ssize_t ith, iph;
            /* th, ph are >= 0 and finite for a finite twist; the clamps also keep a NaN off
             * the cast */
            ith = (th >= 0.0 && th < (double)k->ith_max) ? (Py_ssize_t)th : k->ith_max;
            iph = (ph >= 0.0 && ph < (double)k->iph_max) ? (Py_ssize_t)ph : k->iph_max;
            double dth = th - (double)ith;
            double dph = ph - (double)iph;
            const double *c = k->coef + 12 * (ith * k->n_ls + iph);
            hx = ns * (c[0] + dth * c[3] + dph * (c[6] + dth * c[9]));
            hy = ns * (c[1] + dth * c[4] + dph * (c[7] + dth * c[10]));
            ht = ns * (c[2] + dth * c[5] + dph * (c[8] + dth * c[11]));
        }
    } else if (n == 0.0) {
        hx = hy = ht = 0.0;
    } else {
        hx = vx / n;
        hy = vy / n;
        ht = rom / n;
    }
    double ux = hx * n, uy = hy * n, ut = ht * n * r;         /* w||v_S|| = -S h ||v_S|| */
    double g;
    if (k->const_g) {
        g = k->mu_c;
    } else {
        double x = n / k->v_s;
        g = k->mu_c + k->dmu * exp(-(k->gamma2 ? x * x : m_pow(x, k->gamma)));
    }
    double a = sigma0 * n / g;
    double *z = k->z;
    double zx = z[0], zy = z[1], zt = z[2];
    double em, c, e;
    if (k->ep) {
        /* beta of (34) at the start and at the end of the frozen-beta step, the larger held */
        double hn = sqrt(hx * hx + hy * hy + ht * ht);
        double zmax = hn * g / sigma0;
        double span = zmax * k->span_k;
        double zba = k->s_ba * zmax;
        int moving = n > 0;
        double pt = zt / r;
        double zn = sqrt(zx * zx + zy * zy + pt * pt);
        double t = span > 0 ? (zn - zba) / span : 1.0;
        double b, half, den;
        if (t <= 0.0) {
            b = 0.0;
        } else {
            half = t >= 1.0 ? 0.5 : (0.5 - 0.5 * cos(M_PI * t)) * 0.5;
            den = zn * hn;
            b = half * (((den > 0 && moving) ? (hx * zx + hy * zy + ht * pt) / den : 1.0) + 1.0);
        }
        double bz = b * a;
        if (bz < TINY)
            bz = TINY;
        em = expm1(bz * mdt);
        c = em / bz;
        e = em + 1.0;
        double px = e * zx - c * ux, py = e * zy - c * uy;
        pt = e * zt - c * ut;
        pt = pt / r;
        zn = sqrt(px * px + py * py + pt * pt);
        t = span > 0 ? (zn - zba) / span : 1.0;
        if (t > 0.0) {
            half = t >= 1.0 ? 0.5 : (0.5 - 0.5 * cos(M_PI * t)) * 0.5;
            den = zn * hn;
            double bk = half * (((den > 0 && moving) ? (hx * px + hy * py + ht * pt) / den : 1.0)
                                + 1.0);
            if (bk > b)
                b = bk;
        }
        a *= b;
    }
    if (a < TINY)
        a = TINY;
    em = expm1(a * mdt);
    c = em / a;
    e = em + 1.0;
    zx = e * zx - c * ux;
    zy = e * zy - c * uy;
    zt = e * zt - c * ut;
    double kk = sigma0 - k->sigma1 * a, fn = k->fn, s1 = k->sigma1;
    double fx = (kk * zx + s1 * ux + k->s2 * vx) * fn;
    double fy = (kk * zy + s1 * uy + k->s2 * vy) * fn;
    double ft = (kk * zt + s1 * ut + k->s2u * om) * fn;
    if ((fx - fx) + (fy - fy) + (ft - ft) + (zx - zx) + (zy - zy) + (zt - zt) != 0.0)
        return 0;
    z[0] = zx;
    z[1] = zy;
    z[2] = zt;
    double *o = k->o;
    o[0] = fx;
    o[1] = fy;
    o[2] = ft;
    return 1;
}

static PyObject *
kernel_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Kernel *k = (Kernel *)self;
    double v0, v1, v2;
    int row = 0;
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "kernel(twist): one positional argument");
        return NULL;
    }
    PyObject *t = args[0];
    if (PyList_CheckExact(t) || PyTuple_CheckExact(t)) {
        if (Py_SIZE(t) != 3)
            Py_RETURN_NONE;
        PyObject **it = PySequence_Fast_ITEMS(t);
        if (!PyFloat_Check(it[0]) || !PyFloat_Check(it[1]) || !PyFloat_Check(it[2]))
            Py_RETURN_NONE;
        v0 = PyFloat_AS_DOUBLE(it[0]);
        v1 = PyFloat_AS_DOUBLE(it[1]);
        v2 = PyFloat_AS_DOUBLE(it[2]);
    } else if ((PyObject *)Py_TYPE(t) == k->ndarray) {
        Py_buffer b;
        if (PyObject_GetBuffer(t, &b, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        /* shape (3,), or (1, 3) (answered with a (1, 3) wrench) */
        int ok = b.itemsize == 8 && b.format != NULL && b.format[0] == 'd' && b.format[1] == '\0'
                 && ((b.ndim == 1 && b.shape[0] == 3)
                     || (b.ndim == 2 && b.shape[0] == 1 && b.shape[1] == 3));
        if (ok) {
            const char *p = (const char *)b.buf;
            Py_ssize_t s = b.strides[b.ndim - 1];
            row = b.ndim == 2;
            memcpy(&v0, p, 8);
            memcpy(&v1, p + s, 8);
            memcpy(&v2, p + 2 * s, 8);
        }
        PyBuffer_Release(&b);
        if (!ok)
            Py_RETURN_NONE;
    } else {
        Py_RETURN_NONE;
    }
    if (!isfinite(v0 + v1 + v2))
        Py_RETURN_NONE;
    if (!kernel_step(k, v0, v1, v2))
        Py_RETURN_NONE;                 /* overflow: step3 on the checked path raises */
    return PyObject_CallNoArgs(row ? k->copy13 : k->copy);
}

static PyObject *
kernel_step3(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Kernel *k = (Kernel *)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "step3(vx, vy, om): three floats");
        return NULL;
    }
    double v0 = PyFloat_AsDouble(args[0]);
    double v1 = PyFloat_AsDouble(args[1]);
    double v2 = PyFloat_AsDouble(args[2]);
    if ((v0 == -1.0 || v1 == -1.0 || v2 == -1.0) && PyErr_Occurred())
        return NULL;
    if (!kernel_step(k, v0, v1, v2)) {
        PyObject *t = Py_BuildValue("[ddd]", v0, v1, v2);
        if (t != NULL) {
            PyErr_Format(PyExc_ValueError, "twist: too large for the step (the wrench or the"
                         " bristle state overflows), got %R", t);
            Py_DECREF(t);
        }
        return NULL;
    }
    return PyObject_CallNoArgs(k->copy);
}

static int
get_doubles(PyObject *obj, Py_buffer *view, int flags, Py_ssize_t n, const char *name)
{
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || strcmp(view->format, "d") != 0
        || view->len != n * 8) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "%s: expected %zd contiguous float64", name, n);
        return -1;
    }
    return 0;
}

static void
kernel_dealloc(PyObject *self)
{
    Kernel *k = (Kernel *)self;
    if (k->have_z)
        PyBuffer_Release(&k->zbuf);
    if (k->have_o)
        PyBuffer_Release(&k->obuf);
    Py_XDECREF(k->copy);
    Py_XDECREF(k->copy13);
    Py_XDECREF(k->ndarray);
    PyMem_Free(k->coef);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *zc, *out, *ndarray, *coef;
    double r, mdt, fn, sigma0, sigma1, s2, s2u, mu_c, dmu, v_s, gamma, s_ba, span_k, scale, two_pi;
    int const_g, gamma2, ep;
    Py_ssize_t n_ls, ith_max, iph_max;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Kernel: positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOdddddddddddpppddnddnn:Kernel", &zc, &out, &ndarray, &coef,
                          &r, &mdt, &fn, &sigma0, &sigma1, &s2, &s2u, &mu_c, &dmu, &v_s, &gamma,
                          &const_g, &gamma2, &ep, &s_ba, &span_k, &n_ls, &scale, &two_pi,
                          &ith_max, &iph_max))
        return NULL;
    if (!PyType_Check(ndarray)) {
        PyErr_SetString(PyExc_TypeError, "Kernel: ndarray must be a type");
        return NULL;
    }
    Kernel *k = (Kernel *)type->tp_alloc(type, 0);
    if (k == NULL)
        return NULL;
    k->vectorcall = kernel_vectorcall;
    k->r = r; k->mdt = mdt; k->fn = fn; k->sigma0 = sigma0; k->sigma1 = sigma1; k->s2 = s2;
    k->s2u = s2u; k->mu_c = mu_c; k->dmu = dmu; k->v_s = v_s; k->gamma = gamma;
    k->s_ba = s_ba; k->span_k = span_k; k->scale = scale; k->two_pi = two_pi;
    k->const_g = const_g; k->gamma2 = gamma2; k->ep = ep;
    k->n_ls = n_ls; k->ith_max = ith_max; k->iph_max = iph_max;
    Py_INCREF(ndarray);
    k->ndarray = ndarray;
    k->table = coef != Py_None;
    if (k->table) {
        Py_buffer cb;
        if (n_ls < 1 || ith_max != 4 * n_ls - 1 || iph_max != n_ls - 1) {
            PyErr_SetString(PyExc_ValueError, "Kernel: inconsistent table size");
            goto fail;
        }
        if (get_doubles(coef, &cb, PyBUF_SIMPLE, 12 * 4 * n_ls * n_ls, "coef") < 0)
            goto fail;
        k->coef = PyMem_Malloc(cb.len);
        if (k->coef == NULL) {
            PyBuffer_Release(&cb);
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(k->coef, cb.buf, cb.len);
        PyBuffer_Release(&cb);
    }
    if (get_doubles(zc, &k->zbuf, PyBUF_WRITABLE, 3, "zc") < 0)
        goto fail;
    k->have_z = 1;
    k->z = (double *)k->zbuf.buf;
    if (get_doubles(out, &k->obuf, PyBUF_WRITABLE, 3, "out") < 0)
        goto fail;
    k->have_o = 1;
    k->o = (double *)k->obuf.buf;
    k->copy = PyObject_GetAttrString(out, "copy");
    if (k->copy == NULL)
        goto fail;
    PyObject *out13 = PyObject_CallMethod(out, "reshape", "ii", 1, 3);   /* a view of out */
    if (out13 == NULL)
        goto fail;
    k->copy13 = PyObject_GetAttrString(out13, "copy");
    Py_DECREF(out13);
    if (k->copy13 == NULL)
        goto fail;
    return (PyObject *)k;
fail:
    Py_DECREF(k);
    return NULL;
}

static PyMethodDef kernel_methods[] = {
    {"step3", (PyCFunction)(void (*)(void))kernel_step3, METH_FASTCALL,
     "step3(vx, vy, om): one step for the twist (floats, at the CoP); the wrench, a fresh (3,)"
     " array."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fric_core.planar._reduced_kernel.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_dealloc = kernel_dealloc,
    .tp_vectorcall_offset = offsetof(Kernel, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The single-contact step of one configuration of ReducedLuGre (see the module).",
    .tp_methods = kernel_methods,
    .tp_new = kernel_new,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_reduced_kernel",
    "Compiled single-contact step of the reduced planar model (reduced_fast.py: the reference).",
    -1, NULL,
};

PyMODINIT_FUNC
PyInit__reduced_kernel(void)
{
    if (PyType_Ready(&KernelType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
