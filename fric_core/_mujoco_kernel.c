/* One step of fric_core.mujoco.FrictionStepper in one compiled call (issue 25).
 *
 * The compiled twin of FrictionStepper's numpy step (FrictionStepper._step_numpy and
 * _friction_force, InputFriction.terms, solve_joint_friction with CoulombAxproj.solve_fast /
 * solve), which stays the reference: the same algorithm, the same branches and the same order of
 * the scalar operations; the matrix products, the inverse (LU with partial pivoting) and the
 * linear solves are written out here where numpy calls BLAS / LAPACK, so the two agree to
 * round-off, not bit for bit (test/core/test_mujoco_kernel.py compares them).
 *
 * MuJoCo is not linked and its headers are not used (they are not there when pip builds fric):
 * Kernel(**spec) receives the addresses of the MuJoCo functions it calls (looked up by
 * fric_core/mujoco_kernel.py with ctypes in the libmujoco the mujoco package has loaded), the
 * mjModel* / mjData* addresses (MjModel._address, MjData._address) and, as buffers, numpy views
 * of the mjModel / mjData arrays it reads and writes (stable for the data's lifetime). The
 * declarations below are those of MuJoCo 4.x's mujoco.h / mjtype.h (mujoco_kernel.py checks the
 * version):
 *   void mj_step1(const mjModel*, mjData*), mj_step2, mj_fwdActuation, mj_fwdAcceleration;
 *   void mj_fullM(const mjModel*, const mjData*, mjtNum* dst);
 *   mjfLogHandler _mjPRIVATE_setTlsLogHandler(mjfLogHandler);  (the hook the mujoco Python
 *   mjfLogHandler _mjPRIVATE_getGlobalLogHandler(void);         bindings trap errors with)
 *   struct mjLogMessage { int level; int topic; char subject[1024]; ... }, mjLOG_ERROR = 3.
 * A MuJoCo error (mju_error) inside the step is trapped as the bindings trap it (a thread-local
 * log handler that longjmps back here; other messages go on to the previous handler) and raised
 * as mujoco.FatalError, or as the Python exception a Python callback raised.
 *
 * kernel(h, disableflags, disableactuator): one step with the model's current timestep and
 * flags (FrictionStepper.step passes model.opt's). kernel.reset(): forget the warm start.
 * Results go to buffers shared with FrictionStepper: friction_torque, stuck, the step counters
 * and the last step's constraint torques.
 *
 * No numpy C API: the arrays are reached through the buffer protocol.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- MuJoCo 4.x declarations (see above) ------------------------------------------------ */
typedef void (*mj_stage_fn)(const void *m, void *d);
typedef void (*mj_fullm_fn)(const void *m, const void *d, double *dst);
typedef struct {
    int level;
    int topic;
    char subject[1024];
} log_head;                             /* the leading fields of mjLogMessage */
typedef void (*log_handler)(const log_head *);
typedef log_handler (*set_tls_fn)(log_handler);
typedef log_handler (*get_global_fn)(void);
#define LOG_ERROR 3

#define TIE (8.0 * 2.220446049250313e-16)  /* fric_core.transmission.dai._TIE */

/* ---- error trap --------------------------------------------------------------------------- */
typedef struct Guard {
    jmp_buf jump;
    log_handler forward;                /* where non-error messages go (NULL: the global one) */
    get_global_fn get_global;
    struct Guard *outer;
    char msg[1024];
} Guard;

static _Thread_local Guard *tls_guard = NULL;

static void
trap_handler(const log_head *msg)
{
    Guard *g = tls_guard;
    if (g == NULL)
        return;
    if (msg->level == LOG_ERROR) {
        strncpy(g->msg, msg->subject, sizeof(g->msg) - 1);
        g->msg[sizeof(g->msg) - 1] = '\0';
        longjmp(g->jump, 1);
    }
    log_handler f = g->forward ? g->forward : g->get_global();
    if (f != NULL && f != trap_handler)
        f(msg);
}

/* ---- the kernel ------------------------------------------------------------------------- */
enum {                                   /* buffers: data (written by MuJoCo / us) */
    B_QVEL, B_APPLIED, B_SMOOTH, B_ACTUATOR, B_CONSTRAINT_D, B_ACT_FORCE, B_CTRL,
    /* model arrays read each step */
    B_FORCELIMITED, B_FORCERANGE, B_GROUP,
    /* constants */
    B_DOFS, B_DAMPING, B_KV_ACT, B_KV_DOF, B_KV_CTRL, B_KV_GEAR2, B_KV_BIAS, B_KV_GAIN,
    B_BP, B_BN, B_BREST, B_COULOMB, B_OFFSET, B_CP, B_CN, B_GU, B_GV, B_ARMATURE,
    B_CV_POS, B_CC_POS, B_CS_POS, B_CV_NEG, B_CC_NEG, B_CS_NEG,
    /* shared state and results */
    B_CONSTRAINT, B_FRICTION, B_STUCK, B_COUNTS, B_PBUF,
    NBUF
};

static const char *const BUF_NAMES[NBUF] = {
    "qvel", "qfrc_applied", "qfrc_smooth", "qfrc_actuator", "qfrc_constraint",
    "actuator_force", "ctrl",
    "actuator_forcelimited", "actuator_forcerange", "actuator_group",
    "dofs", "damping", "kv_act", "kv_dof", "kv_ctrl", "kv_gear2", "kv_bias", "kv_gain",
    "bp", "bn", "b_rest", "coulomb", "offset", "Cp", "Cn", "gamma_u", "gamma_v", "armature",
    "curve_v_pos", "curve_c_pos", "curve_s_pos", "curve_v_neg", "curve_c_neg", "curve_s_neg",
    "constraint", "friction_torque", "stuck", "counts", "P",
};

/* the element type of each buffer: d float64, q int64, i int32, ? bool */
static const char BUF_TYPE[NBUF] = {
    'd', 'd', 'd', 'd', 'd', 'd', 'd',
    '?', 'd', 'i',
    'q', 'd', 'q', 'q', 'q', 'd', 'd', 'd',
    'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd',
    'd', 'd', 'd', 'd', 'd', 'd',
    'd', 'd', '?', 'q', 'd',
};

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    mj_stage_fn step1, step2, fwd_actuation, fwd_acceleration;
    mj_fullm_fn full_m;
    set_tls_fn set_tls;
    get_global_fn get_global;
    const void *m;
    void *d;
    Py_ssize_t nv, k, nu, nkv, kpos, kneg;   /* sizes; kpos/kneg: knots per curve side */
    int implicitfast, curve_any, gear, max_iter, sweeps, warned;
    long dsbl_damper, dsbl_eulerdamp, dsbl_actuation;  /* mjtDisableBit masks (from mujoco) */
    double tol;
    Py_buffer buf[NBUF];
    int have[NBUF];
    void *p[NBUF];                      /* buf[i].buf */
    /* solver state: the warm start and the last solve's pieces */
    int warm, have_last;
    double *f_warm, *last;              /* k; 5k: lam_up, lam_dn, z, lo, hi */
    double *work;                       /* one block for every work array */
    int *ipiv;
    signed char *seen;                  /* max_iter keys of k bytes */
    PyObject *owners;                   /* the MjModel / MjData kept alive */
    PyObject *norm2;                    /* callable: spectral norm of the P buffer */
    PyObject *ill_posed_warning;        /* IllPosedWarning */
    PyObject *fatal_error;              /* mujoco.FatalError */
    /* work arrays (into work) */
    double *M, *LU, *Minv, *col, *tau_a, *B, *PB, *A, *P, *K, *v, *b, *C, *c0, *tau_u, *vstar,
        *phi, *g, *y, *fsol, *fnew, *ev, *tmp, *trial, *step, *rhs, *vnew, *adiag, *r, *deriv,
        *saved;
    unsigned char *stuck;
} Kernel;

#define DP(k, i) ((double *)(k)->p[i])
#define QP(k, i) ((int64_t *)(k)->p[i])

/* numpy's maximum / minimum (NaN propagates) and Python's max / min of two floats */
static inline double np_max(double a, double b) { return (a != a || a >= b) ? a : b; }
static inline double np_min(double a, double b) { return (a != a || a <= b) ? a : b; }
static inline double py_max(double a, double b) { return b > a ? b : a; }
static inline double py_min(double a, double b) { return b < a ? b : a; }

/* ---- linear algebra (LU with partial pivoting, as LAPACK's getrf) ------------------------- */
/* factor the n x n row-major A in place; 0, or 1 for an exactly zero pivot (singular) */
static int
lu_factor(Py_ssize_t n, double *A, int *ipiv)
{
    int singular = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t p = j;
        double best = fabs(A[j * n + j]);
        for (Py_ssize_t i = j + 1; i < n; i++) {
            double a = fabs(A[i * n + j]);
            if (a > best || (best != best)) {
                best = a;
                p = i;
            }
        }
        ipiv[j] = (int)p;
        if (p != j)
            for (Py_ssize_t c = 0; c < n; c++) {
                double t = A[j * n + c];
                A[j * n + c] = A[p * n + c];
                A[p * n + c] = t;
            }
        double piv = A[j * n + j];
        if (piv == 0.0) {
            singular = 1;
            continue;
        }
        for (Py_ssize_t i = j + 1; i < n; i++) {
            double l = A[i * n + j] / piv;
            A[i * n + j] = l;
            for (Py_ssize_t c = j + 1; c < n; c++)
                A[i * n + c] -= l * A[j * n + c];
        }
    }
    return singular;
}

/* solve with the factors, x in place (b on entry) */
static void
lu_solve(Py_ssize_t n, const double *LU, const int *ipiv, double *x)
{
    for (Py_ssize_t j = 0; j < n; j++)
        if (ipiv[j] != j) {
            double t = x[j];
            x[j] = x[ipiv[j]];
            x[ipiv[j]] = t;
        }
    for (Py_ssize_t i = 1; i < n; i++) {
        double s = x[i];
        for (Py_ssize_t c = 0; c < i; c++)
            s -= LU[i * n + c] * x[c];
        x[i] = s;
    }
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (Py_ssize_t c = i + 1; c < n; c++)
            s -= LU[i * n + c] * x[c];
        x[i] = s / LU[i * n + i];
    }
}

/* x = K^-1 rhs for the k x k K (copied to LU); 1 where K is singular (x then NaN) */
static int
solve_small(Kernel *kn, const double *K, const double *rhs, double *x)
{
    Py_ssize_t n = kn->k;
    memcpy(kn->LU, K, (size_t)(n * n) * sizeof(double));
    memcpy(x, rhs, (size_t)n * sizeof(double));
    if (lu_factor(n, kn->LU, kn->ipiv)) {
        for (Py_ssize_t i = 0; i < n; i++)
            x[i] = NAN;
        return 1;
    }
    lu_solve(n, kn->LU, kn->ipiv, x);
    return 0;
}

static inline double
dot(const double *a, const double *b, Py_ssize_t n)
{
    double s = 0.0;
    for (Py_ssize_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* ---- the law of the step: InputFriction.terms ---------------------------------------------- */
static Py_ssize_t
segment(const double *V, Py_ssize_t K, double r)
{
    Py_ssize_t c = 0;
    for (Py_ssize_t j = 1; j < K; j++)
        c += r >= V[j];
    return c;
}

static void
law_terms(Kernel *kn, const double *v, double *b, double *C, double *c0)
{
    Py_ssize_t n = kn->k;
    const double *bp = DP(kn, B_BP), *bn = DP(kn, B_BN), *brest = DP(kn, B_BREST);
    if (!kn->curve_any) {
        const double *cou = DP(kn, B_COULOMB), *off = DP(kn, B_OFFSET);
        for (Py_ssize_t i = 0; i < n; i++) {
            b[i] = v[i] > 0.0 ? bp[i] : (v[i] < 0.0 ? bn[i] : brest[i]);
            C[i] = cou[i];
            c0[i] = off[i];
        }
        return;
    }
    const double *Cp0 = DP(kn, B_CP), *Cn0 = DP(kn, B_CN);
    Py_ssize_t KP = kn->kpos, KN = kn->kneg;
    for (Py_ssize_t i = 0; i < n; i++) {
        double r = fabs(v[i]);
        Py_ssize_t sp_ = segment(DP(kn, B_CV_POS) + i * KP, KP, r);
        Py_ssize_t sn_ = segment(DP(kn, B_CV_NEG) + i * KN, KN, r);
        double cp = DP(kn, B_CC_POS)[i * KP + sp_], sp = DP(kn, B_CS_POS)[i * KP + sp_];
        double cn = DP(kn, B_CC_NEG)[i * KN + sn_], sn = DP(kn, B_CS_NEG)[i * KN + sn_];
        int fwd = v[i] > 0.0, bwd = v[i] < 0.0;
        double Cp = fwd ? cp : (bwd ? np_max(Cp0[i], -cn) : Cp0[i]);
        double Cn = bwd ? cn : (fwd ? np_max(Cn0[i], -cp) : Cn0[i]);
        b[i] = fwd ? sp : (bwd ? sn : brest[i]);
        C[i] = np_max(0.5 * (Cp + Cn), 0.0);
        c0[i] = 0.5 * (Cp - Cn);
    }
}

/* ---- the joint-friction solve: coulomb_projection ----------------------------------------- */
/* coulomb_gear_bounds for one joint */
static inline void
gear_bounds(double phi, double p, double C, double g, double *lo, double *hi)
{
    double a = phi - g;
    int pos = a + p * C >= 0.0;
    double den = pos ? 1.0 - p : 1.0 + p;
    *hi = den > 0.0 ? (pos ? C + a : C - a) / den : INFINITY;
    a = phi + g;
    pos = a - p * C >= 0.0;
    den = pos ? 1.0 + p : 1.0 - p;
    *lo = den > 0.0 ? -(pos ? C + a : C - a) / den : -INFINITY;
}

/* CoulombAxproj._evaluate: the pieces into lam_up, lam_dn, z, lo, hi (ev = 5 k), the residual */
static double
evaluate(Kernel *kn, const double *f, const double *v, const double *A, const double *phi,
         const double *P, const double *C, const double *g, const double *r,
         const double *adiag, double *ev)
{
    Py_ssize_t n = kn->k;
    double *lu = ev, *ld = ev + n, *z = ev + 2 * n, *lo = ev + 3 * n, *hi = ev + 4 * n;
    double res = -INFINITY;
    int first = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        double psi = phi[i] + dot(P + i * n, f, n);
        lu[i] = psi - g[i];
        ld[i] = psi + g[i];
        hi[i] = C[i] + fabs(lu[i]);
        lo[i] = -C[i] - fabs(ld[i]);
        double w = v[i] - dot(A + i * n, f, n);
        z[i] = f[i] + r[i] * w;
        double G = f[i] - np_min(np_max(z[i], lo[i]), hi[i]);
        double e = fabs(G) * adiag[i];
        res = first ? e : np_max(res, e);
        first = 0;
    }
    return res;
}

static double
abs_max(const double *x, Py_ssize_t n)
{
    double m = fabs(x[0]);
    for (Py_ssize_t i = 1; i < n; i++)
        m = np_max(m, fabs(x[i]));
    return m;
}

/* the pieces of an evaluation: d, sigma per joint (as in solve and solve_fast) */
static inline void
pieces(const double *ev, Py_ssize_t n, Py_ssize_t i, double *d, double *sigma)
{
    const double *lu = ev, *ld = ev + n, *z = ev + 2 * n, *lo = ev + 3 * n, *hi = ev + 4 * n;
    *d = z[i] > hi[i] ? 1.0 : (z[i] < lo[i] ? -1.0 : 0.0);
    *sigma = (*d > 0.0 ? lu[i] : ld[i]) < 0.0 ? -1.0 : 1.0;
}

/* the system of the pieces of ev: K f = rhs */
static void
piece_system(Kernel *kn, const double *ev, const double *v, const double *A, const double *phi,
             const double *P, const double *C, const double *g, double *K, double *rhs,
             signed char *key)
{
    Py_ssize_t n = kn->k;
    for (Py_ssize_t i = 0; i < n; i++) {
        double d, sigma;
        pieces(ev, n, i, &d, &sigma);
        double cc = d * sigma;
        if (key)
            key[i] = (signed char)(3 * (int)d + (int)sigma);  /* d and the sign of d*sigma */
        if (d == 0.0) {
            memcpy(K + i * n, A + i * n, (size_t)n * sizeof(double));
            rhs[i] = v[i];
        } else {
            for (Py_ssize_t j = 0; j < n; j++)
                K[i * n + j] = (i == j ? 1.0 : 0.0) - cc * P[i * n + j];
            rhs[i] = d * C[i] + cc * phi[i] - sigma * g[i];
        }
    }
}

/* CoulombAxproj._gauss_seidel: f in place; the sweeps made */
static int
gauss_seidel(Kernel *kn, double *f, const double *v, const double *A, const double *phi,
             const double *P, const double *C, const double *g, const double *adiag,
             const double *r)
{
    Py_ssize_t n = kn->k;
    for (int sweep = 1; sweep <= kn->sweeps; sweep++) {
        for (Py_ssize_t i = 0; i < n; i++) {
            double pd = P[i * n + i];
            double vi = v[i] - dot(A + i * n, f, n) + adiag[i] * f[i];
            double ph = phi[i] + dot(P + i * n, f, n) - pd * f[i];
            double lo, hi;
            gear_bounds(ph, pd, C[i], g[i], &lo, &hi);
            f[i] = py_min(py_max(vi * r[i], lo), hi);
        }
        double res = evaluate(kn, f, v, A, phi, P, C, g, r, adiag, kn->ev);
        if (res <= kn->tol * py_max(abs_max(v, n), 1e-300))
            return sweep;
    }
    return kn->sweeps;
}

/* the solution's velocity change y = A f, exactly v where stuck */
static void
finish(Kernel *kn, const double *f, const double *v, const double *A, double res, double *y,
       unsigned char *stuck)
{
    Py_ssize_t n = kn->k;
    double vel_tol = py_max(res, kn->tol * py_max(abs_max(v, n), 1e-300)) * 10.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double af = dot(A + i * n, f, n);
        stuck[i] = fabs(v[i] - af) <= vel_tol;
        y[i] = stuck[i] ? v[i] : af;
    }
}

/* CoulombAxproj.solve: y, f, stuck; returns converged */
static int
solve_newton(Kernel *kn, const double *v, const double *A, const double *phi, const double *P,
             const double *C, const double *g, double *y, double *f, unsigned char *stuck)
{
    Py_ssize_t n = kn->k;
    double *adiag = kn->adiag, *r = kn->r, *ev = kn->ev, *fnew = kn->fnew, *K = kn->K,
           *rhs = kn->rhs, *tmp = kn->tmp;
    for (Py_ssize_t i = 0; i < n; i++) {
        adiag[i] = A[i * n + i];
        r[i] = 1.0 / adiag[i];
    }
    if (kn->warm) {
        memcpy(f, kn->f_warm, (size_t)n * sizeof(double));
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            double lo, hi;
            gear_bounds(phi[i], P[i * n + i], C[i], g[i], &lo, &hi);
            double x = np_min(np_max(v[i] * r[i], lo), hi);
            f[i] = isfinite(x) ? x : 0.0;
        }
    }
    double res = evaluate(kn, f, v, A, phi, P, C, g, r, adiag, ev);
    double *lo = ev + 3 * n, *hi = ev + 4 * n;
    double sc = -INFINITY;
    for (Py_ssize_t i = 0; i < n; i++) {
        double e = adiag[i] * np_max(hi[i], -lo[i]);
        sc = i == 0 ? e : np_max(sc, e);
    }
    double scale = py_max(py_max(abs_max(v, n), sc), 1e-300);
    double tol = kn->tol * scale;
    int it = 0, damped = 0, nseen = 0;
    while (res > tol && it < kn->max_iter) {
        it++;
        signed char *key = kn->seen + (size_t)nseen * (size_t)n;
        piece_system(kn, ev, v, A, phi, P, C, g, K, rhs, key);
        for (int s = 0; s < nseen; s++)
            if (memcmp(kn->seen + (size_t)s * (size_t)n, key, (size_t)n) == 0) {
                damped = 1;
                break;
            }
        nseen++;
        if (solve_small(kn, K, rhs, fnew))
            break;
        int finite = 1;
        for (Py_ssize_t i = 0; i < n; i++)
            finite &= isfinite(fnew[i]) != 0;
        if (!finite)
            break;
        /* evaluate the new iterate into the spare half of ev's twin (tmp holds 5 k) */
        double res_new = evaluate(kn, fnew, v, A, phi, P, C, g, r, adiag, tmp);
        if (damped && res_new > (1.0 - 1e-4) * res && res_new > tol) {
            /* _backtrack along fnew - f */
            double *trial = kn->trial, *stp = kn->step;
            for (Py_ssize_t i = 0; i < n; i++)
                stp[i] = fnew[i] - f[i];
            double t = 0.5;
            int found = 0;
            while (t > 1e-6) {
                for (Py_ssize_t i = 0; i < n; i++)
                    trial[i] = f[i] + t * stp[i];
                res_new = evaluate(kn, trial, v, A, phi, P, C, g, r, adiag, tmp);
                if (res_new < (1.0 - 1e-4 * t) * res) {
                    found = 1;
                    break;
                }
                t *= 0.5;
            }
            if (!found)
                break;
            memcpy(fnew, trial, (size_t)n * sizeof(double));
        }
        memcpy(f, fnew, (size_t)n * sizeof(double));
        memcpy(ev, tmp, (size_t)(5 * n) * sizeof(double));
        res = res_new;
    }
    if (res > tol) {
        gauss_seidel(kn, f, v, A, phi, P, C, g, adiag, r);
        res = evaluate(kn, f, v, A, phi, P, C, g, r, adiag, ev);
    }
    memcpy(kn->last, ev, (size_t)(5 * n) * sizeof(double));
    kn->have_last = 1;
    int converged = res <= tol;
    memcpy(kn->f_warm, f, (size_t)n * sizeof(double));
    kn->warm = 1;
    finish(kn, f, v, A, res, y, stuck);
    return converged;
}

/* CoulombAxproj.solve_fast */
static int
solve_fast(Kernel *kn, const double *v, const double *A, const double *phi, const double *P,
           const double *C, const double *g, double *y, double *f, unsigned char *stuck)
{
    Py_ssize_t n = kn->k;
    if (kn->have_last && kn->warm) {
        double *K = kn->K, *rhs = kn->rhs, *adiag = kn->adiag, *r = kn->r, *ev = kn->tmp;
        piece_system(kn, kn->last, v, A, phi, P, C, g, K, rhs, NULL);
        solve_small(kn, K, rhs, f);
        for (Py_ssize_t i = 0; i < n; i++) {
            adiag[i] = A[i * n + i];
            r[i] = 1.0 / adiag[i];
        }
        double res = evaluate(kn, f, v, A, phi, P, C, g, r, adiag, ev);
        double vmax = abs_max(v, n), tol = kn->tol;
        double *lo = ev + 3 * n, *hi = ev + 4 * n;
        double sc = -INFINITY;
        for (Py_ssize_t i = 0; i < n; i++) {
            double e = adiag[i] * np_max(hi[i], -lo[i]);
            sc = i == 0 ? e : np_max(sc, e);
        }
        if (res <= tol * vmax || res <= tol * py_max(py_max(vmax, sc), 1e-300)) {
            memcpy(kn->f_warm, f, (size_t)n * sizeof(double));
            memcpy(kn->last, ev, (size_t)(5 * n) * sizeof(double));
            finish(kn, f, v, A, res, y, stuck);
            return 1;
        }
    }
    return solve_newton(kn, v, A, phi, P, C, g, y, f, stuck);
}

/* solve_joint_friction: the closed form (70) for diagonal A and P, else solve_fast */
static int
solve_joint_friction(Kernel *kn, const double *v, const double *A, const double *phi,
                     const double *P, const double *C, const double *g, double *y, double *f,
                     unsigned char *stuck)
{
    Py_ssize_t n = kn->k;
    int diagonal = 1;
    if (n > 1)
        for (Py_ssize_t i = 0; i < n && diagonal; i++)
            for (Py_ssize_t j = 0; j < n; j++)
                if (i != j && (A[i * n + j] != 0.0 || P[i * n + j] != 0.0)) {
                    diagonal = 0;
                    break;
                }
    if (!diagonal)
        return solve_fast(kn, v, A, phi, P, C, g, y, f, stuck);
    for (Py_ssize_t i = 0; i < n; i++) {
        double a = A[i * n + i], lo, hi;
        gear_bounds(phi[i], P[i * n + i], C[i], g[i], &lo, &hi);
        lo = a * lo;
        hi = a * hi;
        double tie = TIE * fabs(v[i]);
        stuck[i] = (v[i] >= lo - tie) && (v[i] <= hi + tie);
        y[i] = stuck[i] ? v[i] : np_min(np_max(v[i], lo), hi);
        f[i] = y[i] / a;
    }
    return 1;
}

/* ---- one step ----------------------------------------------------------------------------- */
/* the MuJoCo stages of a step under the error trap: 1 = mj_step1, actuation, acceleration and
 * the dense mass matrix; 2 = mj_step2. 0, or -1 with the message in msg */
static int
run_stage(Kernel *kn, int stage, char *msg)
{
    Guard g;
    g.outer = tls_guard;
    g.get_global = kn->get_global;
    g.msg[0] = '\0';
    log_handler prev = kn->set_tls(trap_handler);
    g.forward = prev == trap_handler ? (g.outer ? g.outer->forward : NULL) : prev;
    tls_guard = &g;
    if (setjmp(g.jump) == 0) {
        if (stage == 1) {
            kn->step1(kn->m, kn->d);
            kn->fwd_actuation(kn->m, kn->d);
            kn->fwd_acceleration(kn->m, kn->d);
            kn->full_m(kn->m, kn->d, kn->M);
        } else {
            kn->step2(kn->m, kn->d);
        }
        tls_guard = g.outer;
        kn->set_tls(prev);
        return 0;
    }
    tls_guard = g.outer;
    kn->set_tls(prev);
    memcpy(msg, g.msg, sizeof(g.msg));
    return -1;
}

static PyObject *
raise_stage_error(Kernel *kn, const char *msg)
{
    if (!PyErr_Occurred())              /* a Python callback's exception stays the error */
        PyErr_SetString(kn->fatal_error, msg);
    return NULL;
}

/* the ill-posedness check of a step whose ||P||_F >= 1: -1 on a Python error */
static int
check_ill_posed(Kernel *kn)
{
    Py_ssize_t n = kn->k;
    memcpy(kn->p[B_PBUF], kn->P, (size_t)(n * n) * sizeof(double));
    PyObject *s = PyObject_CallNoArgs(kn->norm2);
    if (s == NULL)
        return -1;
    double smax = PyFloat_AsDouble(s);
    Py_DECREF(s);
    if (smax == -1.0 && PyErr_Occurred())
        return -1;
    if (!(smax >= 1.0))
        return 0;
    QP(kn, B_COUNTS)[2] += 1;
    if (kn->warned)
        return 0;
    kn->warned = 1;
    char *txt = PyOS_double_to_string(smax, 'g', 4, 0, NULL);
    if (txt == NULL)
        return -1;
    PyObject *m = PyUnicode_FromFormat(
        "FrictionStepper: sigma_max(P) = %s >= 1: the gear friction's well-posedness condition "
        "(57) fails (larger armature or smaller |gamma_v| restore it); warned once, see "
        "ill_posed_steps", txt);
    PyMem_Free(txt);
    if (m == NULL)
        return -1;
    int rc = PyErr_WarnEx(kn->ill_posed_warning, PyUnicode_AsUTF8(m), 2);
    Py_DECREF(m);
    return rc;
}

/* FrictionStepper._friction_force: F into kn->fsol's twin (returns it), NULL on error */
static double *
friction_force(Kernel *kn, double h, long dsbl, long dsblact)
{
    Py_ssize_t nv = kn->nv, n = kn->k;
    const int64_t *dofs = QP(kn, B_DOFS);
    const double *qvel = DP(kn, B_QVEL), *qact = DP(kn, B_ACTUATOR), *smooth = DP(kn, B_SMOOTH);
    const double *cons = DP(kn, B_CONSTRAINT), *gu = DP(kn, B_GU), *gv = DP(kn, B_GV);
    const double *arm = DP(kn, B_ARMATURE);
    double *M = kn->M, *v = kn->v, *b = kn->b, *C = kn->C, *c0 = kn->c0, *vlaw = kn->y;
    const unsigned char *was_stuck = (const unsigned char *)kn->p[B_STUCK];
    for (Py_ssize_t i = 0; i < n; i++) {
        v[i] = qvel[dofs[i]];
        vlaw[i] = was_stuck[i] ? 0.0 : v[i];    /* left stuck by the last step: at rest */
    }
    law_terms(kn, vlaw, b, C, c0);
    /* effective_mass: M (mj_fullM, done in stage 1) and the integrator's diagonal terms */
    const double *damping = DP(kn, B_DAMPING);
    if (!kn->implicitfast) {
        if (!((dsbl & kn->dsbl_eulerdamp) || (dsbl & kn->dsbl_damper)))
            for (Py_ssize_t i = 0; i < nv; i++)
                M[i * nv + i] += h * damping[i];
    } else {
        double *deriv = kn->deriv;
        for (Py_ssize_t i = 0; i < nv; i++)
            deriv[i] = 0.0;
        if (!(dsbl & kn->dsbl_damper))
            for (Py_ssize_t i = 0; i < nv; i++)
                deriv[i] -= damping[i];
        if (kn->nkv && !(dsbl & kn->dsbl_actuation)) {
            const int64_t *act = QP(kn, B_KV_ACT), *kdof = QP(kn, B_KV_DOF),
                          *kctrl = QP(kn, B_KV_CTRL);
            const double *gear2 = DP(kn, B_KV_GEAR2), *bias = DP(kn, B_KV_BIAS),
                         *gain = DP(kn, B_KV_GAIN), *ctrl = DP(kn, B_CTRL),
                         *force = DP(kn, B_ACT_FORCE), *range = DP(kn, B_FORCERANGE);
            const unsigned char *lim = (const unsigned char *)kn->p[B_FORCELIMITED];
            const int32_t *group = (const int32_t *)kn->p[B_GROUP];
            for (Py_ssize_t j = 0; j < kn->nkv; j++) {
                int64_t a = act[j];
                double vel = bias[j] + gain[j] * ctrl[kctrl[j]];
                double fa = force[a];
                int clamped = lim[a] && ((fa <= range[2 * a]) || (fa >= range[2 * a + 1]));
                int32_t gr = group[a];
                int off = (0 <= gr && gr < 31) && (dsblact & (1L << gr));
                deriv[kdof[j]] += (clamped || off) ? 0.0 : gear2[j] * vel;
            }
        }
        for (Py_ssize_t i = 0; i < nv; i++)
            M[i * nv + i] -= h * deriv[i];
    }
    for (Py_ssize_t i = 0; i < n; i++)
        M[dofs[i] * nv + dofs[i]] += h * b[i];      /* implicit viscosity */
    /* Minv (69a) */
    double *LU = kn->LU, *Minv = kn->Minv, *col = kn->col;
    memcpy(LU, M, (size_t)(nv * nv) * sizeof(double));
    int singular = lu_factor(nv, LU, kn->ipiv);
    int finite = !singular;
    if (finite)
        for (Py_ssize_t c = 0; c < nv; c++) {
            for (Py_ssize_t i = 0; i < nv; i++)
                col[i] = i == c ? 1.0 : 0.0;
            lu_solve(nv, LU, kn->ipiv, col);
            for (Py_ssize_t i = 0; i < nv; i++) {
                Minv[i * nv + c] = col[i];
                finite &= isfinite(col[i]) != 0;
            }
        }
    if (!finite) {
        PyErr_SetString(PyExc_ValueError,
                        "model: the effective mass matrix is singular (massless bodies?)");
        return NULL;
    }
    double *tau_u = kn->tau_u, *tau_a = kn->tau_a, *vstar = kn->vstar, *A = kn->A, *P = kn->P,
           *phi = kn->phi, *g = kn->g;
    for (Py_ssize_t i = 0; i < n; i++)
        tau_u[i] = qact[dofs[i]] - c0[i] - b[i] * v[i];
    for (Py_ssize_t j = 0; j < nv; j++)
        tau_a[j] = smooth[j] + cons[j];
    for (Py_ssize_t i = 0; i < n; i++)
        tau_a[dofs[i]] -= c0[i] + b[i] * v[i];
    for (Py_ssize_t i = 0; i < n; i++) {
        vstar[i] = v[i] + h * dot(Minv + dofs[i] * nv, tau_a, nv);              /* (69e) */
        for (Py_ssize_t j = 0; j < n; j++)
            A[i * n + j] = h * Minv[dofs[i] * nv + dofs[j]];
    }
    if (kn->gear) {
        double *B = kn->B, *PB = kn->PB;
        for (Py_ssize_t i = 0; i < n; i++) {
            for (Py_ssize_t l = 0; l < nv; l++)
                B[i * nv + l] = -gv[i] * M[dofs[i] * nv + l];
            double in = arm[i] + h * b[i];
            B[i * nv + dofs[i]] += gv[i] * in + gu[i] * in;                         /* (69b) */
        }
        for (Py_ssize_t i = 0; i < n; i++)
            for (Py_ssize_t c = 0; c < nv; c++) {
                double s = 0.0;
                for (Py_ssize_t l = 0; l < nv; l++)
                    s += B[i * nv + l] * Minv[l * nv + c];
                PB[i * nv + c] = s;
            }
        double fro = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            double tau_v = qact[dofs[i]] - tau_a[dofs[i]] - c0[i] - b[i] * v[i];
            for (Py_ssize_t j = 0; j < n; j++) {
                double x = PB[i * nv + dofs[j]];
                P[i * n + j] = x;
                fro += x * x;
            }
            phi[i] = gu[i] * tau_u[i] + gv[i] * tau_v - dot(PB + i * nv, tau_a, nv);  /* (69d) */
        }
        if (sqrt(fro) >= 1.0 && check_ill_posed(kn) < 0)
            return NULL;
    } else {
        memset(P, 0, (size_t)(n * n) * sizeof(double));
        memset(phi, 0, (size_t)n * sizeof(double));
    }
    for (Py_ssize_t i = 0; i < n; i++)
        g[i] = gu[i] * C[i];
    double *y = kn->y, *f = kn->fsol, *vnew = kn->vnew;
    unsigned char *stuck = kn->stuck;
    if (!solve_joint_friction(kn, vstar, A, phi, P, C, g, y, f, stuck))
        QP(kn, B_COUNTS)[1] += 1;
    double *F = DP(kn, B_FRICTION);
    unsigned char *st = (unsigned char *)kn->p[B_STUCK];
    for (Py_ssize_t i = 0; i < n; i++) {
        vnew[i] = stuck[i] ? 0.0 : vstar[i] - y[i];                                /* (69f) */
        F[i] = f[i] + c0[i] + b[i] * vnew[i];
        st[i] = stuck[i];
    }
    return F;
}

static PyObject *
kernel_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Kernel *kn = (Kernel *)self;
    if (PyVectorcall_NARGS(nargsf) != 3 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "kernel(h, disableflags, disableactuator)");
        return NULL;
    }
    double h = PyFloat_AsDouble(args[0]);
    long dsbl = PyLong_AsLong(args[1]);
    long dsblact = PyLong_AsLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    char msg[1024];
    if (run_stage(kn, 1, msg) < 0)
        return raise_stage_error(kn, msg);
    const double *F = friction_force(kn, h, dsbl, dsblact);
    if (F == NULL)
        return NULL;
    Py_ssize_t nv = kn->nv;
    const int64_t *dofs = QP(kn, B_DOFS);
    double *applied = DP(kn, B_APPLIED), *saved = kn->saved;
    memcpy(saved, applied, (size_t)nv * sizeof(double));
    for (Py_ssize_t i = 0; i < kn->k; i++)
        applied[dofs[i]] -= F[i];
    int rc = run_stage(kn, 2, msg);
    memcpy(applied, saved, (size_t)nv * sizeof(double));
    if (rc < 0)
        return raise_stage_error(kn, msg);
    memcpy(kn->p[B_CONSTRAINT], kn->p[B_CONSTRAINT_D], (size_t)nv * sizeof(double));
    QP(kn, B_COUNTS)[0] += 1;
    Py_RETURN_NONE;
}

static PyObject *
kernel_reset(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    Kernel *kn = (Kernel *)self;
    kn->warm = 0;
    kn->have_last = 0;
    memset(kn->f_warm, 0, (size_t)kn->k * sizeof(double));
    Py_RETURN_NONE;
}

/* ---- construction ------------------------------------------------------------------------ */
static void
kernel_dealloc(PyObject *self)
{
    Kernel *kn = (Kernel *)self;
    for (int i = 0; i < NBUF; i++)
        if (kn->have[i])
            PyBuffer_Release(&kn->buf[i]);
    PyMem_Free(kn->work);
    PyMem_Free(kn->ipiv);
    PyMem_Free(kn->seen);
    PyMem_Free(kn->stuck);
    Py_XDECREF(kn->owners);
    Py_XDECREF(kn->norm2);
    Py_XDECREF(kn->ill_posed_warning);
    Py_XDECREF(kn->fatal_error);
    Py_TYPE(self)->tp_free(self);
}

static int
get_address(PyObject *spec, const char *key, void **out)
{
    PyObject *o = PyDict_GetItemString(spec, key);
    if (o == NULL) {
        PyErr_Format(PyExc_KeyError, "Kernel: missing %s", key);
        return -1;
    }
    void *p = PyLong_AsVoidPtr(o);
    if (p == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "Kernel: %s is NULL", key);
        return -1;
    }
    *out = p;
    return 0;
}

static int
get_int(PyObject *spec, const char *key, long *out)
{
    PyObject *o = PyDict_GetItemString(spec, key);
    if (o == NULL) {
        PyErr_Format(PyExc_KeyError, "Kernel: missing %s", key);
        return -1;
    }
    *out = PyLong_AsLong(o);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *
get_object(PyObject *spec, const char *key)
{
    PyObject *o = PyDict_GetItemString(spec, key);
    if (o == NULL)
        PyErr_Format(PyExc_KeyError, "Kernel: missing %s", key);
    else
        Py_INCREF(o);
    return o;
}

/* the element count each buffer must have */
static Py_ssize_t
buf_len(Kernel *kn, int i)
{
    Py_ssize_t nv = kn->nv, n = kn->k, nu = kn->nu, nkv = kn->nkv;
    switch (i) {
    case B_QVEL: case B_APPLIED: case B_SMOOTH: case B_ACTUATOR: case B_CONSTRAINT_D:
    case B_DAMPING: case B_CONSTRAINT:
        return nv;
    case B_ACT_FORCE: case B_FORCELIMITED: case B_GROUP:
        return nu;
    case B_CTRL:
        return -1;                      /* any length: read through kv_ctrl only */
    case B_FORCERANGE:
        return 2 * nu;
    case B_KV_ACT: case B_KV_DOF: case B_KV_CTRL: case B_KV_GEAR2: case B_KV_BIAS:
    case B_KV_GAIN:
        return nkv;
    case B_CV_POS: case B_CC_POS: case B_CS_POS:
        return n * kn->kpos;
    case B_CV_NEG: case B_CC_NEG: case B_CS_NEG:
        return n * kn->kneg;
    case B_COUNTS:
        return 3;
    case B_PBUF:
        return n * n;
    default:
        return n;
    }
}

static int
get_buffer(Kernel *kn, PyObject *spec, int i)
{
    PyObject *o = PyDict_GetItemString(spec, BUF_NAMES[i]);
    if (o == NULL) {
        PyErr_Format(PyExc_KeyError, "Kernel: missing %s", BUF_NAMES[i]);
        return -1;
    }
    if (PyObject_GetBuffer(o, &kn->buf[i], PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)
        < 0)
        return -1;
    kn->have[i] = 1;
    Py_buffer *b = &kn->buf[i];
    char t = BUF_TYPE[i];
    const char *fmt = b->format ? b->format : "B";
    if (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@')
        fmt++;
    int ok;
    switch (t) {
    case 'd': ok = b->itemsize == 8 && strcmp(fmt, "d") == 0; break;
    case 'q': ok = b->itemsize == 8 && (strcmp(fmt, "q") == 0 || strcmp(fmt, "l") == 0); break;
    case 'i': ok = b->itemsize == 4 && (strcmp(fmt, "i") == 0 || strcmp(fmt, "l") == 0); break;
    default: ok = b->itemsize == 1 && strcmp(fmt, "?") == 0; break;
    }
    Py_ssize_t want = buf_len(kn, i);
    if (!ok || (want >= 0 && b->len != want * b->itemsize)) {
        PyErr_Format(PyExc_ValueError, "Kernel: %s: expected %zd contiguous items of type %c",
                     BUF_NAMES[i], want, t);
        return -1;
    }
    kn->p[i] = b->buf;
    return 0;
}

static PyObject *
kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0 || kwds == NULL) {
        PyErr_SetString(PyExc_TypeError, "Kernel(**spec): keyword arguments only");
        return NULL;
    }
    Kernel *kn = (Kernel *)type->tp_alloc(type, 0);
    if (kn == NULL)
        return NULL;
    kn->vectorcall = kernel_vectorcall;
    PyObject *spec = kwds;
    long nv, k, nu, nkv, kpos, kneg, implicitfast, curve_any, gear, max_iter, sweeps;
    long damper, eulerdamp, actuation;
    void *fp[7], *m, *d;
    static const char *const fn_keys[7] = {
        "mj_step1", "mj_step2", "mj_fwdActuation", "mj_fwdAcceleration", "mj_fullM",
        "_mjPRIVATE_setTlsLogHandler", "_mjPRIVATE_getGlobalLogHandler"};
    for (int i = 0; i < 7; i++)
        if (get_address(spec, fn_keys[i], &fp[i]) < 0)
            goto fail;
    if (get_address(spec, "model_address", &m) < 0 || get_address(spec, "data_address", &d) < 0
        || get_int(spec, "nv", &nv) < 0 || get_int(spec, "k", &k) < 0
        || get_int(spec, "nu", &nu) < 0 || get_int(spec, "nkv", &nkv) < 0
        || get_int(spec, "kpos", &kpos) < 0 || get_int(spec, "kneg", &kneg) < 0
        || get_int(spec, "implicitfast", &implicitfast) < 0
        || get_int(spec, "curve_any", &curve_any) < 0 || get_int(spec, "gear", &gear) < 0
        || get_int(spec, "max_iter", &max_iter) < 0 || get_int(spec, "sweeps", &sweeps) < 0
        || get_int(spec, "dsbl_damper", &damper) < 0
        || get_int(spec, "dsbl_eulerdamp", &eulerdamp) < 0
        || get_int(spec, "dsbl_actuation", &actuation) < 0)
        goto fail;
    if (nv < 1 || k < 1 || k > nv || nu < 0 || nkv < 0 || kpos < 1 || kneg < 1 || max_iter < 0
        || sweeps < 0) {
        PyErr_SetString(PyExc_ValueError, "Kernel: bad sizes");
        goto fail;
    }
    {
        PyObject *t = PyDict_GetItemString(spec, "tol");
        if (t == NULL) {
            PyErr_SetString(PyExc_KeyError, "Kernel: missing tol");
            goto fail;
        }
        kn->tol = PyFloat_AsDouble(t);
        if (PyErr_Occurred())
            goto fail;
    }
    kn->step1 = (mj_stage_fn)fp[0];
    kn->step2 = (mj_stage_fn)fp[1];
    kn->fwd_actuation = (mj_stage_fn)fp[2];
    kn->fwd_acceleration = (mj_stage_fn)fp[3];
    kn->full_m = (mj_fullm_fn)fp[4];
    kn->set_tls = (set_tls_fn)fp[5];
    kn->get_global = (get_global_fn)fp[6];
    kn->m = m;
    kn->d = d;
    kn->nv = nv;
    kn->k = k;
    kn->nu = nu;
    kn->nkv = nkv;
    kn->kpos = kpos;
    kn->kneg = kneg;
    kn->implicitfast = implicitfast != 0;
    kn->curve_any = curve_any != 0;
    kn->gear = gear != 0;
    kn->max_iter = (int)max_iter;
    kn->sweeps = (int)sweeps;
    kn->dsbl_damper = damper;
    kn->dsbl_eulerdamp = eulerdamp;
    kn->dsbl_actuation = actuation;
    for (int i = 0; i < NBUF; i++)
        if (get_buffer(kn, spec, i) < 0)
            goto fail;
    {   /* the dof and actuator indices in range */
        const int64_t *dofs = QP(kn, B_DOFS), *act = QP(kn, B_KV_ACT), *kdof = QP(kn, B_KV_DOF),
                      *kctrl = QP(kn, B_KV_CTRL);
        Py_ssize_t nctrl = kn->buf[B_CTRL].len / 8;
        for (Py_ssize_t i = 0; i < k; i++)
            if (dofs[i] < 0 || dofs[i] >= nv) {
                PyErr_SetString(PyExc_ValueError, "Kernel: dofs out of range");
                goto fail;
            }
        for (Py_ssize_t j = 0; j < nkv; j++)
            if (act[j] < 0 || act[j] >= nu || kdof[j] < 0 || kdof[j] >= nv || kctrl[j] < 0
                || kctrl[j] >= nctrl) {
                PyErr_SetString(PyExc_ValueError, "Kernel: kv indices out of range");
                goto fail;
            }
    }
    if ((kn->owners = get_object(spec, "owners")) == NULL
        || (kn->norm2 = get_object(spec, "norm2")) == NULL
        || (kn->ill_posed_warning = get_object(spec, "ill_posed_warning")) == NULL
        || (kn->fatal_error = get_object(spec, "fatal_error")) == NULL)
        goto fail;
    {   /* work arrays */
        size_t NV = (size_t)nv, N = (size_t)k;
        size_t total = 3 * NV * NV + 2 * N * NV + 3 * N * N + 4 * NV + 33 * N;
        kn->work = PyMem_Calloc(total, sizeof(double));
        kn->ipiv = PyMem_Calloc(NV, sizeof(int));
        kn->seen = PyMem_Calloc((size_t)(max_iter + 1) * N, 1);
        kn->stuck = PyMem_Calloc(N, 1);
        if (!kn->work || !kn->ipiv || !kn->seen || !kn->stuck) {
            PyErr_NoMemory();
            goto fail;
        }
        double *w = kn->work;
#define TAKE(name, count) (kn->name = w, w += (count))
        TAKE(M, NV * NV); TAKE(LU, NV * NV); TAKE(Minv, NV * NV);
        TAKE(B, N * NV); TAKE(PB, N * NV);
        TAKE(A, N * N); TAKE(P, N * N); TAKE(K, N * N);
        TAKE(col, NV); TAKE(tau_a, NV); TAKE(deriv, NV); TAKE(saved, NV);
        TAKE(ev, 5 * N); TAKE(tmp, 5 * N); TAKE(last, 5 * N);
        TAKE(v, N); TAKE(b, N); TAKE(C, N); TAKE(c0, N); TAKE(tau_u, N); TAKE(vstar, N);
        TAKE(phi, N); TAKE(g, N); TAKE(y, N); TAKE(fsol, N); TAKE(fnew, N); TAKE(trial, N);
        TAKE(step, N); TAKE(rhs, N); TAKE(vnew, N); TAKE(adiag, N); TAKE(r, N);
        TAKE(f_warm, N);
#undef TAKE
        if ((size_t)(w - kn->work) != total) {
            PyErr_SetString(PyExc_SystemError, "Kernel: work arrays miscounted");
            goto fail;
        }
    }
    return (PyObject *)kn;
fail:
    Py_DECREF(kn);
    return NULL;
}

static PyMethodDef kernel_methods[] = {
    {"reset", (PyCFunction)kernel_reset, METH_NOARGS, "Forget the solver's warm start."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fric_core._mujoco_kernel.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_dealloc = kernel_dealloc,
    .tp_vectorcall_offset = offsetof(Kernel, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One FrictionStepper step of one (model, data, friction) (see the module).",
    .tp_methods = kernel_methods,
    .tp_new = kernel_new,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_mujoco_kernel",
    "The compiled step of fric_core.mujoco.FrictionStepper (see fric_core/mujoco_kernel.py).",
    -1, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__mujoco_kernel(void)
{
    if (PyType_Ready(&KernelType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&moduledef);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(mod, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
