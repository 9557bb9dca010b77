/* The inline loop of perfreport.read.kineto.Collector.add, in C (optional; see kineto.py).
 *
 * add(collector, batch) does what Collector.add_python does for one batch of
 * perfreport.read.schema.Ev: the same rows in the same columns, the same interning order, the
 * same n_events, and every event the inline loop would hand to an exact path
 * (perfreport/read/exact.py) is handed to that same Python method, in reading order.
 *
 * The args of a kept event are read by a small scanner for the usual case (plain ASCII keys
 * and strings, integer ids of at most 18 digits, no duplicate known key, no exponent): what it
 * accepts decodes, by msgspec, to exactly the values it finds. Anything else it is unsure of
 * goes through the msgspec decoder the Python loop calls (schema.fast_*_args), with the same
 * outcome. Rows are collected in C buffers and appended to the array.array columns once per
 * batch, and before any call of an exact path (which appends to the same columns).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* schema's category codes and the columns' sentinels, given by setup() (kineto passes schema's own,
 * so a build never disagrees with the Python side) */
static long g_c_runtime, g_c_driver, g_c_kernel;
static long long g_none, g_flow_hi;
#define C_RUNTIME g_c_runtime
#define C_DRIVER g_c_driver
#define C_KERNEL g_c_kernel
#define NONE_V g_none
#define FLOW_HI g_flow_hi
#define MAX_DEPTH 64
#define MAX_DIGITS 18 /* any such integer is inside the columns' int64 range */

/* ---- set up once (setup()): decoders, struct field offsets, names ------------------------- */

static PyObject *g_ev_type, *g_gpu_type, *g_rt_type, *g_rtk_type, *g_op_type;
static PyObject *g_gpu_dec, *g_rt_dec, *g_rtk_dec, *g_op_dec, *g_errors, *g_flow_cats, *g_ev1_dec;
static int g_ready = 0;

enum { E_PH, E_CAT, E_NAME, E_PID, E_TID, E_TS, E_DUR, E_ID, E_ARGS, E_N };
static const char *ev_fields[E_N] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "args"};
static Py_ssize_t ev_off[E_N];

enum { G_CORR, G_STREAM, G_DEV, G_EXT, G_EXTOLD, G_NB, G_COLL, G_N };
static const char *gpu_fields[G_N] = {"correlation", "stream", "device", "ext", "ext_old", "nbytes", "coll"};
static Py_ssize_t gpu_off[G_N];

enum { R_CORR, R_EXT, R_EXTOLD, R_KERNEL, R_N };
static const char *rt_fields[R_N] = {"correlation", "ext", "ext_old", "kernel"};
static Py_ssize_t rt_off[R_N], rtk_off[R_N];

enum { O_EXT, O_SEQ, O_CI, O_IT, O_IST, O_IDM, O_FWD, O_N };
static const char *op_fields[O_N] = {"ext", "seq", "ci", "it", "ist", "idm", "fwd"};
static Py_ssize_t op_off[O_N];

/* how the args of kept events were read: by the scanner, by msgspec (the scanner unsure) */
static unsigned long long n_scanned, n_msgspec;

static PyObject *s_gpu, *s_cpu, *s_cpu_row, *s_flow, *s_metadata, *s_frombytes, *s_n_events, *s_typecode;

#define FLD(o, off) (*(PyObject **)((char *)(o) + (off)))

/* offset of each named field of a msgspec Struct type (a member descriptor of an object slot) */
static int offsets(PyObject *type, const char **names, int n, Py_ssize_t *out)
{
    for (int i = 0; i < n; i++) {
        PyObject *d = PyObject_GetAttrString(type, names[i]);
        if (d == NULL)
            return -1;
        int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
        if (ok)
            out[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "%R.%s is not an object slot", type, names[i]);
            return -1;
        }
    }
    return 0;
}

static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *ev, *gd, *rd, *rkd, *od, *gt, *rt, *rkt, *ot, *errs, *fc, *codes, *ev1;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOO", &ev, &gt, &rt, &rkt, &ot, &gd, &rd, &rkd, &od, &errs, &fc, &codes,
                          &ev1))
        return NULL;
    long rt_c, drv_c, k_c;
    long long none_v, flow_hi;
    if (!PyTuple_Check(codes) || !PyArg_ParseTuple(codes, "lllLL", &rt_c, &drv_c, &k_c, &none_v, &flow_hi)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "setup: codes (runtime, driver, kernel, NONE, flow id limit) expected");
        return NULL;
    }
    if (!PyType_Check(ev) || !PyType_Check(gt) || !PyType_Check(rt) || !PyType_Check(rkt) || !PyType_Check(ot)) {
        PyErr_SetString(PyExc_TypeError, "setup: struct types expected");
        return NULL;
    }
    if (!PyTuple_Check(errs) || !PyAnySet_Check(fc)) {
        PyErr_SetString(PyExc_TypeError, "setup: an exception tuple and a set of flow categories expected");
        return NULL;
    }
    if (offsets(ev, ev_fields, E_N, ev_off) < 0 || offsets(gt, gpu_fields, G_N, gpu_off) < 0 ||
        offsets(rt, rt_fields, R_N - 1, rt_off) < 0 || offsets(rkt, rt_fields, R_N, rtk_off) < 0 ||
        offsets(ot, op_fields, O_N, op_off) < 0)
        return NULL;
    PyObject **slots[] = {&g_ev_type, &g_gpu_type, &g_rt_type, &g_rtk_type, &g_op_type, &g_gpu_dec,
                          &g_rt_dec,  &g_rtk_dec,  &g_op_dec,  &g_errors,   &g_flow_cats, &g_ev1_dec};
    PyObject *vals[] = {ev, gt, rt, rkt, ot, gd, rd, rkd, od, errs, fc, ev1};
    for (int i = 0; i < 12; i++) {
        Py_INCREF(vals[i]);
        Py_XSETREF(*slots[i], vals[i]);
    }
    g_c_runtime = rt_c, g_c_driver = drv_c, g_c_kernel = k_c, g_none = none_v, g_flow_hi = flow_hi;
    if (PyObject_SetAttrString(self, "CODES", codes) < 0) /* the codes in use, for inspection */
        return NULL;
    g_ready = 1;
    Py_RETURN_NONE;
}

/* ---- a conservative JSON scanner for args ---------------------------------------------------- */

/* byte classes: JSON blanks; bytes that end the plain run of a string (the quote, a backslash, a
 * control character, any non-ASCII byte); digits */
enum { C_WS = 1, C_STOP = 2, C_DIGIT = 4 };
static unsigned char cls[256];

static void init_classes(void)
{
    for (int c = 0; c < 256; c++)
        cls[c] = (unsigned char)(((c == ' ' || c == '\t' || c == '\n' || c == '\r') ? C_WS : 0) |
                                 ((c == '"' || c == '\\' || c < 0x20 || c >= 0x80) ? C_STOP : 0) |
                                 ((c >= '0' && c <= '9') ? C_DIGIT : 0));
}

#define CLS(p) cls[(unsigned char)*(p)]

static inline const char *ws(const char *p, const char *e)
{
    /* the usual blank is one space (", ", ": "): taken without a branch on it */
    p += p < e && *p == ' ';
    while (p < e && (CLS(p) & C_WS))
        p++;
    return p;
}

/* past the digits at p */
static inline const char *digits(const char *p, const char *e)
{
#ifdef __SSE2__
    const __m128i lo = _mm_set1_epi8('0' - 1), hi = _mm_set1_epi8('9' + 1);
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)p);
        int m = ~_mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(x, lo), _mm_cmplt_epi8(x, hi))) & 0xffff;
        if (m)
            return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#endif
    while (p < e && (CLS(p) & C_DIGIT))
        p++;
    return p;
}

/* A string at p ('"'): past its end, or NULL when unsure (a \u escape, a control character, a
 * non-ASCII byte). *plain: no escape at all. */
static inline const char *plain_run(const char *p, const char *e)
{
#ifdef __SSE2__
    /* 16 bytes at a time: the quote, a backslash, or (signed) below 0x20: a control character
     * or any byte from 0x80 up */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)p);
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                    _mm_cmplt_epi8(x, space));
        int m = _mm_movemask_epi8(stop);
        if (m)
            return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#endif
    while (p < e && !(CLS(p) & C_STOP))
        p++;
    return p;
}

static const char *skip_string(const char *p, const char *e, int *plain)
{
    *plain = 1;
    for (p++;; p++) {
        p = plain_run(p, e);
        if (p >= e)
            return NULL;
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c != '\\' || ++p >= e)
            return NULL; /* a control character or a non-ASCII byte */
        *plain = 0;
        c = (unsigned char)*p;
        if (!(c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't'))
            return NULL;
    }
}

/* A number at p: past it, or NULL when unsure (an exponent, many digits, bad grammar). */
static const char *skip_number(const char *p, const char *e)
{
    const char *s = p;
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return NULL;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p = digits(p, e);
    else
        return NULL;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9')
            return NULL;
        p = digits(p, e);
    }
    if (p < e && (*p == 'e' || *p == 'E'))
        return NULL;
    if (p - s > 24)
        return NULL;
    return p;
}

static const char *skip_value(const char *p, const char *e, int depth);

static const char *skip_container(const char *p, const char *e, int depth, char close)
{
    int plain;
    if (depth > MAX_DEPTH)
        return NULL;
    p = ws(p + 1, e);
    if (p < e && *p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if (p >= e || *p != '"' || (p = skip_string(p, e, &plain)) == NULL)
                return NULL;
            p = ws(p, e);
            if (p >= e || *p != ':')
                return NULL;
            p = ws(p + 1, e);
        }
        if ((p = skip_value(p, e, depth + 1)) == NULL)
            return NULL;
        p = ws(p, e);
        if (p >= e)
            return NULL;
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return NULL;
        p = ws(p + 1, e);
    }
}

static const char *skip_value(const char *p, const char *e, int depth)
{
    int plain;
    if (p >= e)
        return NULL;
    switch (*p) {
    case '"':
        return skip_string(p, e, &plain);
    case '{':
        return skip_container(p, e, depth, '}');
    case '[':
        return skip_container(p, e, depth, ']');
    case 't':
        return (e - p >= 4 && memcmp(p, "true", 4) == 0) ? p + 4 : NULL;
    case 'f':
        return (e - p >= 5 && memcmp(p, "false", 5) == 0) ? p + 5 : NULL;
    case 'n':
        return (e - p >= 4 && memcmp(p, "null", 4) == 0) ? p + 4 : NULL;
    default:
        return skip_number(p, e);
    }
}

typedef struct {
    const char *s, *e; /* the value's bytes; s == NULL: key absent */
} Span;

/* A plain integer literal of at most MAX_DIGITS digits (not "-0"): 1 and *out, else 0. */
static int span_int(Span v, long long *out)
{
    const char *p = v.s;
    int neg = 0;
    if (p < v.e && *p == '-') {
        neg = 1;
        p++;
    }
    Py_ssize_t n = v.e - p;
    if (n < 1 || n > MAX_DIGITS || (*p == '0' && (n > 1 || neg)))
        return 0;
    long long x = 0;
    for (; p < v.e; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        x = x * 10 + (*p - '0');
    }
    *out = neg ? -x : x;
    return 1;
}

static inline int span_is(Span v, const char *lit, Py_ssize_t n)
{
    return v.e - v.s == n && memcmp(v.s, lit, n) == 0;
}

/* A plain string (no escape) as str, null as None: a new reference, or NULL and *unsure. */
static PyObject *span_str(Span v, int *unsure)
{
    if (span_is(v, "null", 4))
        Py_RETURN_NONE;
    if (v.e - v.s >= 2 && *v.s == '"' && memchr(v.s, '\\', v.e - v.s) == NULL)
        return PyUnicode_DecodeASCII(v.s + 1, v.e - v.s - 2, NULL);
    *unsure = 1;
    return NULL;
}

/* An int, a plain string or null (`int | str | None`, or `int | None` if !strs): new ref. */
static PyObject *span_id(Span v, int strs, int *unsure)
{
    long long x;
    if (v.s == NULL)
        Py_RETURN_NONE;
    if (span_int(v, &x))
        return PyLong_FromLongLong(x);
    if (strs || span_is(v, "null", 4))
        return span_str(v, unsure);
    *unsure = 1;
    return NULL;
}

/* An int64 column id (schema._Col): 1 and *out (NONE when absent), 0 when unsure. */
static inline int span_col(Span v, long long *out)
{
    if (v.s == NULL) {
        *out = NONE_V;
        return 1;
    }
    return span_int(v, out);
}

typedef struct {
    const char *key;
    Py_ssize_t len;
} Key;

/* Scan the args object, filling spans[i] for keys[i]. Returns 1 (done), 0 (unsure: ask msgspec)
 * or 2 (a key outside `keys` while unknown keys are refused). */
static int scan_args(const char *p, const char *e, const Key *keys, int nkeys, Span *spans, int refuse_unknown)
{
    int plain;
    unsigned seen = 0;
    for (int i = 0; i < nkeys; i++)
        spans[i].s = spans[i].e = NULL;
    p = ws(p, e);
    if (p >= e || *p != '{')
        return 0;
    p = ws(p + 1, e);
    if (p < e && *p == '}')
        return ws(p + 1, e) == e;
    int other = 0;
    for (;;) {
        const char *ks = p;
        if (p >= e || *p != '"' || (p = skip_string(p, e, &plain)) == NULL || !plain)
            return 0;
        Py_ssize_t kl = p - ks - 2;
        int k = -1;
        for (int i = 0; i < nkeys; i++)
            if (keys[i].len == kl && memcmp(keys[i].key, ks + 1, kl) == 0) {
                k = i;
                break;
            }
        p = ws(p, e);
        if (p >= e || *p != ':')
            return 0;
        p = ws(p + 1, e);
        const char *vs = p;
        if ((p = skip_value(p, e, 1)) == NULL)
            return 0;
        if (k >= 0) {
            if (seen & (1u << k))
                return 0; /* a duplicate: msgspec keeps the last, but ask it */
            seen |= 1u << k;
            spans[k].s = vs;
            spans[k].e = p;
        } else
            other = 1;
        p = ws(p, e);
        if (p >= e)
            return 0;
        if (*p == '}')
            break;
        if (*p != ',')
            return 0;
        p = ws(p + 1, e);
    }
    if (ws(p + 1, e) != e)
        return 0;
    return (other && refuse_unknown) ? 2 : 1;
}

/* An args object's top-level keys and values, as add_doc's first pass found them (keys
 * plain, without their quotes; values checked by skip_value). n < 0: not found (not an object,
 * a key that is not plain): the bytes are scanned. */
typedef struct {
    Span k, v;
} Pair;
typedef struct {
    const Pair *p;
    int n;
} Pairs;

/* scan_args' answer from the pairs of an object scan_args would read whole */
static int match_args(const Pairs *pp, const Key *keys, int nkeys, Span *spans, int refuse_unknown)
{
    unsigned seen = 0;
    int other = 0;
    for (int i = 0; i < nkeys; i++)
        spans[i].s = spans[i].e = NULL;
    for (int j = 0; j < pp->n; j++) {
        Span ks = pp->p[j].k;
        Py_ssize_t kl = ks.e - ks.s;
        int k = -1;
        for (int i = 0; i < nkeys; i++)
            if (keys[i].len == kl && memcmp(keys[i].key, ks.s, kl) == 0) {
                k = i;
                break;
            }
        if (k < 0) {
            other = 1;
            continue;
        }
        if (seen & (1u << k))
            return 0;
        seen |= 1u << k;
        spans[k] = pp->p[j].v;
    }
    return (other && refuse_unknown) ? 2 : 1;
}

static inline int args_spans(const char *p, const char *e, const Pairs *pp, const Key *keys, int nkeys, Span *spans,
                             int refuse_unknown)
{
    if (pp != NULL && pp->n >= 0)
        return match_args(pp, keys, nkeys, spans, refuse_unknown);
    return scan_args(p, e, keys, nkeys, spans, refuse_unknown);
}

#define K(s) {s, sizeof(s) - 1}
static const Key gpu_keys[] = {K("correlation"), K("stream"), K("device"), K("External id"),
                               K("external id"), K("bytes"),  K("Collective name")};
static const Key rt_keys[] = {K("correlation"), K("External id"), K("external id"), K("kernel")};
/* FastOpArgs' keys: the two ids, the three volatile ones (skipped), the five of the interning key */
static const Key op_keys[] = {K("External id"),   K("Sequence number"), K("Record function id"), K("Ev Idx"),
                              K("finished"),      K("Concrete Inputs"), K("Input type"),         K("Input Strides"),
                              K("Input Dims"),    K("Fwd thread id")};
#undef K

/* ---- the decoders' results as C values ----------------------------------------------------- */

typedef struct {
    long long corr, ext, nb;
    PyObject *dev, *stream; /* new references (None when absent) */
} GpuRes;

typedef struct {
    long long corr, ext;
    PyObject *kernel; /* new reference, or NULL when not asked */
} RtRes;

typedef struct {
    long long ext, seq;
    Py_ssize_t ai;
} OpRes;

/* The bytes of a msgspec.Raw. Its spans stay valid after the view is released: the Raw (alive in
 * its event, or in the decoded struct) owns them and never changes them. */
static int raw_view(PyObject *raw, Py_buffer *view)
{
    return PyObject_GetBuffer(raw, view, PyBUF_SIMPLE);
}

/* Call a msgspec decoder on raw: a new reference; NULL with no error set when it raised one of
 * the errors the Python loop catches (the exact path), NULL with an error otherwise. */
static PyObject *decode(PyObject *dec, PyObject *raw, PyObject *type)
{
    PyObject *a = PyObject_Vectorcall(dec, &raw, 1, NULL);
    if (a == NULL) {
        if (PyErr_ExceptionMatches(g_errors))
            PyErr_Clear();
        return NULL;
    }
    if ((PyObject *)Py_TYPE(a) != type) {
        Py_DECREF(a);
        PyErr_SetString(PyExc_TypeError, "_collect: a decoder returned an unexpected type");
        return NULL;
    }
    return a;
}

static inline long long as_ll(PyObject *o)
{
    return PyLong_AsLongLong(o); /* the decoders' constraints keep these in int64 */
}

/* 1: *r filled; 0: the exact path; -1: error. */
/* The msgspec decoder's answer for args bytes [p, e): raw when the caller has it as an object,
 * else a copy of the bytes (add_doc's events). */
static PyObject *decode_at(PyObject *dec, const char *p, const char *e, PyObject *raw, PyObject *type)
{
    if (raw != NULL)
        return decode(dec, raw, type);
    PyObject *b = PyBytes_FromStringAndSize(p, e - p);
    if (b == NULL)
        return NULL;
    PyObject *a = decode(dec, b, type);
    Py_DECREF(b);
    return a;
}

/* gpu_args on the bytes [p, e) (raw: the same bytes as an object, or NULL) */
static int gpu_args_at(const char *p, const char *e, const Pairs *pp, PyObject *raw, GpuRes *r)
{
    Span sp[G_N];
    int got = args_spans(p, e, pp, gpu_keys, G_N, sp, 0);
    if (got == 1) {
        long long ext_old;
        int unsure = 0;
        if (sp[G_COLL].s != NULL)
            return 0;
        if (span_col(sp[G_CORR], &r->corr) && span_col(sp[G_EXT], &r->ext) && span_col(sp[G_EXTOLD], &ext_old) &&
            span_col(sp[G_NB], &r->nb)) {
            r->dev = span_id(sp[G_DEV], 0, &unsure);
            r->stream = r->dev ? span_id(sp[G_STREAM], 1, &unsure) : NULL;
            if (r->dev && r->stream) {
                n_scanned++;
                if (r->ext == NONE_V)
                    r->ext = ext_old;
                return 1;
            }
            Py_CLEAR(r->dev);
            if (!unsure)
                return -1;
            PyErr_Clear();
        }
    }
    n_msgspec++;
    PyObject *a = decode_at(g_gpu_dec, p, e, raw, g_gpu_type);
    if (a == NULL)
        return PyErr_Occurred() ? -1 : 0;
    int coll = PyObject_IsTrue(FLD(a, gpu_off[G_COLL]));
    if (coll != 0) {
        Py_DECREF(a);
        return coll < 0 ? -1 : 0;
    }
    r->corr = as_ll(FLD(a, gpu_off[G_CORR]));
    r->ext = as_ll(FLD(a, gpu_off[G_EXT]));
    if (r->ext == NONE_V)
        r->ext = as_ll(FLD(a, gpu_off[G_EXTOLD]));
    r->nb = as_ll(FLD(a, gpu_off[G_NB]));
    r->dev = Py_NewRef(FLD(a, gpu_off[G_DEV]));
    r->stream = Py_NewRef(FLD(a, gpu_off[G_STREAM]));
    Py_DECREF(a);
    if (PyErr_Occurred()) {
        Py_CLEAR(r->dev);
        Py_CLEAR(r->stream);
        return -1;
    }
    return 1;
}

static int rt_args_at(const char *p, const char *e, const Pairs *pp, PyObject *raw, int kernel, RtRes *r)
{
    Span sp[R_N];
    r->kernel = NULL;
    int got = args_spans(p, e, pp, rt_keys, kernel ? R_N : R_N - 1, sp, 0);
    if (got == 1) {
        long long ext_old;
        int unsure = 0;
        if (span_col(sp[R_CORR], &r->corr) && span_col(sp[R_EXT], &r->ext) && span_col(sp[R_EXTOLD], &ext_old)) {
            if (r->ext == NONE_V)
                r->ext = ext_old;
            if (kernel)
                r->kernel = sp[R_KERNEL].s == NULL ? Py_NewRef(Py_None) : span_str(sp[R_KERNEL], &unsure);
            if (!kernel || r->kernel) {
                n_scanned++;
                return 1;
            }
            if (!unsure)
                return -1;
        }
    }
    n_msgspec++;
    PyObject *a = decode_at(kernel ? g_rtk_dec : g_rt_dec, p, e, raw, kernel ? g_rtk_type : g_rt_type);
    if (a == NULL)
        return PyErr_Occurred() ? -1 : 0;
    const Py_ssize_t *off = kernel ? rtk_off : rt_off;
    r->corr = as_ll(FLD(a, off[R_CORR]));
    r->ext = as_ll(FLD(a, off[R_EXT]));
    if (r->ext == NONE_V)
        r->ext = as_ll(FLD(a, off[R_EXTOLD]));
    if (kernel)
        r->kernel = Py_NewRef(FLD(a, off[R_KERNEL]));
    Py_DECREF(a);
    if (PyErr_Occurred()) {
        Py_CLEAR(r->kernel);
        return -1;
    }
    return 1;
}

/* The interning keys args_fast answered in this batch, by a cheap hash of their parts: a hit
 * takes no bytes object, no siphash and no dict lookup. args_fast only ever gains keys, and a
 * key's index never changes, so what it answered once stays true. */
#define KC_SLOTS 2048 /* a power of 2, twice KC_MAX: a probe always ends on an empty slot */
#define KC_MAX 1024
typedef struct {
    uint32_t slot[KC_SLOTS]; /* entry + 1; 0: empty */
    uint64_t hash[KC_MAX];
    PyObject *key[KC_MAX]; /* the bytes args_fast was asked with (a reference) */
    Py_ssize_t ai[KC_MAX];
    int n;
} KeyCache;

static uint64_t parts_hash(const Span *parts)
{
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int i = 0; i < 5; i++) {
        const char *p = parts[i].s;
        Py_ssize_t n = parts[i].e - p;
        uint64_t w;
        for (; n >= 8; p += 8, n -= 8) {
            memcpy(&w, p, 8);
            h = (h ^ w) * 0x9E3779B97F4A7C15ull;
            h ^= h >> 31;
        }
        w = 0;
        memcpy(&w, p, (size_t)n);
        h = (h ^ w ^ ((uint64_t)(parts[i].e - parts[i].s) << 40)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
    }
    return h;
}

/* the parts joined by NUL bytes equal key's bytes */
static int parts_equal(const Span *parts, PyObject *key)
{
    const char *q = PyBytes_AS_STRING(key), *end = q + PyBytes_GET_SIZE(key);
    for (int i = 0; i < 5; i++) {
        Py_ssize_t n = parts[i].e - parts[i].s;
        if (i && (q >= end || *q++ != '\0'))
            return 0;
        if (end - q < n || memcmp(q, parts[i].s, n) != 0)
            return 0;
        q += n;
    }
    return q == end;
}

/* b"\0".join of the five interning-key parts, looked up in args_fast (kc: that batch's cache, or
 * NULL): 1 (found, r->ai), 0 (not there), -1. */
static int op_lookup(PyObject *args_fast, const Span *parts, OpRes *r, KeyCache *kc)
{
    uint64_t h = 0;
    uint32_t at = 0;
    if (kc != NULL) {
        h = parts_hash(parts);
        for (at = (uint32_t)h & (KC_SLOTS - 1); kc->slot[at]; at = (at + 1) & (KC_SLOTS - 1)) {
            uint32_t k = kc->slot[at] - 1;
            if (kc->hash[k] == h && parts_equal(parts, kc->key[k])) {
                r->ai = kc->ai[k];
                return 1;
            }
        }
    }
    Py_ssize_t n = 4;
    for (int i = 0; i < 5; i++)
        n += parts[i].e - parts[i].s;
    PyObject *key = PyBytes_FromStringAndSize(NULL, n);
    if (key == NULL)
        return -1;
    char *q = PyBytes_AS_STRING(key);
    for (int i = 0; i < 5; i++) {
        if (i)
            *q++ = '\0';
        memcpy(q, parts[i].s, parts[i].e - parts[i].s);
        q += parts[i].e - parts[i].s;
    }
    PyObject *ai = PyDict_GetItemWithError(args_fast, key);
    if (ai == NULL) {
        Py_DECREF(key);
        return PyErr_Occurred() ? -1 : 0;
    }
    r->ai = PyLong_AsSsize_t(ai);
    if (r->ai == -1 && PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    if (kc != NULL && kc->n < KC_MAX) {
        kc->slot[at] = (uint32_t)kc->n + 1;
        kc->hash[kc->n] = h;
        kc->key[kc->n] = key; /* the cache's reference now */
        kc->ai[kc->n++] = r->ai;
    } else
        Py_DECREF(key);
    return 1;
}

static KeyCache *kc_new(void)
{
    KeyCache *kc = PyMem_Malloc(sizeof(KeyCache));
    if (kc == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memset(kc->slot, 0, sizeof(kc->slot));
    kc->n = 0;
    return kc;
}

static void kc_free(KeyCache *kc)
{
    if (kc == NULL)
        return;
    for (int i = 0; i < kc->n; i++)
        Py_DECREF(kc->key[i]);
    PyMem_Free(kc);
}

static int op_args_at(const char *p, const char *e, const Pairs *pp, PyObject *raw, PyObject *args_fast, OpRes *r,
                      KeyCache *kc)
{
    Span sp[O_N + 3]; /* in op_keys' order */
    int got = args_spans(p, e, pp, op_keys, O_N + 3, sp, 1);
    if (got == 1 && span_col(sp[0], &r->ext) && span_col(sp[1], &r->seq)) {
        for (int i = 5; i < 10; i++)
            if (sp[i].s == NULL)
                sp[i].s = sp[i].e = "";
        n_scanned++;
        return op_lookup(args_fast, sp + 5, r, kc);
    }
    if (got == 2) {
        n_scanned++;
        return 0; /* an unknown key: FastOpArgs refuses it */
    }
    n_msgspec++;
    PyObject *a = decode_at(g_op_dec, p, e, raw, g_op_type);
    if (a == NULL)
        return PyErr_Occurred() ? -1 : 0;
    Span parts[5];
    Py_buffer views[5];
    int nv = 0, found = -1;
    for (; nv < 5; nv++) {
        if (raw_view(FLD(a, op_off[O_CI + nv]), &views[nv]) < 0)
            break;
        parts[nv].s = views[nv].buf;
        parts[nv].e = (const char *)views[nv].buf + views[nv].len;
    }
    if (nv == 5) {
        r->ext = as_ll(FLD(a, op_off[O_EXT]));
        r->seq = as_ll(FLD(a, op_off[O_SEQ]));
        found = PyErr_Occurred() ? -1 : op_lookup(args_fast, parts, r, NULL);
    }
    while (nv-- > 0)
        PyBuffer_Release(&views[nv]);
    Py_DECREF(a);
    return found;
}

/* The three on a msgspec.Raw (an Ev's args). The spans stay valid after the view is released
 * (raw_view). */
#define ON_RAW(call)                                                                                               \
    Py_buffer v;                                                                                                   \
    if (raw_view(raw, &v) < 0)                                                                                     \
        return -1;                                                                                                 \
    const char *p = v.buf, *e = (const char *)v.buf + v.len;                                                       \
    PyBuffer_Release(&v);                                                                                          \
    return call;

static int gpu_args(PyObject *raw, GpuRes *r) { ON_RAW(gpu_args_at(p, e, NULL, raw, r)) }
static int rt_args(PyObject *raw, int kernel, RtRes *r) { ON_RAW(rt_args_at(p, e, NULL, raw, kernel, r)) }
static int op_args(PyObject *raw, PyObject *args_fast, OpRes *r, KeyCache *kc)
{
    ON_RAW(op_args_at(p, e, NULL, raw, args_fast, r, kc))
}
#undef ON_RAW

/* ---- the columns ------------------------------------------------------------------------------ */

enum {
    CTS, CDUR, CNAME, CCAT, CTHR, CEXT, CCS, CARGS,          /* Collector.c */
    GTS, GDUR, GNAME, GCAT, GDS, GCORR, GEXT, GNB,           /* Collector.g */
    SID, SLOC, STS, FID, FLOC, FTS,                          /* flow_s, flow_f */
    NCOL
};
static const char *col_attr[NCOL] = {"ts", "dur", "name", "cat", "thr", "ext", "cs", "args",
                                     "ts", "dur", "name", "cat", "ds", "corr", "ext", "nbytes",
                                     "id", "loc", "ts", "id", "loc", "ts"};
static const char col_code[NCOL + 1] = "ddibiqqiddibiqqqqidqid";
static PyObject *s_col_attr[NCOL]; /* interned at import: no new str per batch */
static const int col_table[NCOL] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3};

typedef struct {
    PyObject *arr[NCOL];
    char *buf[NCOL];
    Py_ssize_t rows[4]; /* pending rows of c, g, flow_s, flow_f */
    KeyCache *kc;       /* this batch's interning keys */
} Cols;

static Py_ssize_t itemsize(char code)
{
    switch (code) {
    case 'd':
        return sizeof(double);
    case 'q':
        return sizeof(long long);
    case 'i':
        return sizeof(int);
    default:
        return 1;
    }
}

static void cols_free(Cols *cs)
{
    for (int i = 0; i < NCOL; i++) {
        Py_CLEAR(cs->arr[i]);
        PyMem_Free(cs->buf[i]);
        cs->buf[i] = NULL;
    }
    kc_free(cs->kc);
    cs->kc = NULL;
}

static int cols_init(Cols *cs, PyObject **tables, Py_ssize_t n)
{
    memset(cs, 0, sizeof(*cs));
    if ((cs->kc = kc_new()) == NULL)
        return -1;
    for (int i = 0; i < NCOL; i++) {
        cs->arr[i] = PyObject_GetAttr(tables[col_table[i]], s_col_attr[i]);
        if (cs->arr[i] == NULL)
            return -1;
        PyObject *tc = PyObject_GetAttr(cs->arr[i], s_typecode);
        if (tc == NULL)
            return -1;
        int ok = PyUnicode_Check(tc) && PyUnicode_GET_LENGTH(tc) == 1 && PyUnicode_READ_CHAR(tc, 0) == (Py_UCS4)col_code[i];
        Py_DECREF(tc);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "_collect: column %s is not array('%c')", col_attr[i], col_code[i]);
            return -1;
        }
        /* the inline path adds at most one row per event to each column between two flushes */
        cs->buf[i] = PyMem_Malloc((n ? n : 1) * itemsize(col_code[i]));
        if (cs->buf[i] == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

static int cols_flush(Cols *cs)
{
    int err = 0;
    for (int i = 0; i < NCOL; i++) {
        Py_ssize_t rows = cs->rows[col_table[i]];
        if (rows == 0 || err)
            continue;
        PyObject *mv = PyMemoryView_FromMemory(cs->buf[i], rows * itemsize(col_code[i]), PyBUF_READ);
        PyObject *r = mv ? PyObject_CallMethodOneArg(cs->arr[i], s_frombytes, mv) : NULL;
        Py_XDECREF(mv);
        if (r == NULL)
            err = -1;
        Py_XDECREF(r);
    }
    memset(cs->rows, 0, sizeof(cs->rows));
    return err;
}

#define PUT(cs, col, T, row, v) (((T *)(cs)->buf[col])[row] = (v))

/* ---- interning --------------------------------------------------------------------------------- */

/* code of key in table (added at the end of lst if new), or -1 with an error */
static Py_ssize_t intern(PyObject *table, PyObject *lst, PyObject *key)
{
    PyObject *v = PyDict_GetItemWithError(table, key);
    if (v != NULL)
        return PyLong_AsSsize_t(v);
    if (PyErr_Occurred())
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(lst);
    PyObject *code = PyLong_FromSsize_t(n);
    if (code == NULL)
        return -1;
    int err = PyDict_SetItem(table, key, code);
    Py_DECREF(code);
    if (err < 0 || PyList_Append(lst, key) < 0)
        return -1;
    return n;
}

static Py_ssize_t intern_pair(PyObject *table, PyObject *lst, PyObject *a, PyObject *b)
{
    PyObject *key = PyTuple_Pack(2, a, b);
    if (key == NULL)
        return -1;
    Py_ssize_t k = intern(table, lst, key);
    Py_DECREF(key);
    return k;
}

/* ---- the loop ------------------------------------------------------------------------------------ */

enum { A_KINDS, A_NAMEC, A_NAMES, A_THRC, A_THREADS, A_DSC, A_DSS, A_LOCC, A_LOCS, A_FAST, A_LK, A_N };
static const char *col_fields[A_N] = {"_kinds",       "_name_code", "names",     "_thr_code",
                                      "threads",      "_ds_code",   "devstreams", "_loc_code",
                                      "locations",    "_args_fast", "launch_kernels"};

static const char *tnames[4] = {"c", "g", "flow_s", "flow_f"};
static PyObject *s_col_fields[A_N], *s_tnames[4];

static int intern_all(PyObject **out, const char **names, int n)
{
    for (int i = 0; i < n; i++)
        if ((out[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return -1;
    return 0;
}

static inline int is_char(PyObject *s, Py_UCS4 c)
{
    return PyUnicode_Check(s) && PyUnicode_GET_LENGTH(s) == 1 && PyUnicode_READ_CHAR(s, 0) == c;
}

static int set_n(PyObject *col, Py_ssize_t n)
{
    PyObject *v = PyLong_FromSsize_t(n);
    if (v == NULL)
        return -1;
    int r = PyObject_SetAttr(col, s_n_events, v);
    Py_DECREF(v);
    return r;
}

/* flush the columns, set n_events and call col.<meth>(*args): 0 or -1 */
static int exact(Cols *cs, PyObject *col, Py_ssize_t n, PyObject *meth, PyObject **args, Py_ssize_t nargs)
{
    if (cols_flush(cs) < 0 || set_n(col, n) < 0)
        return -1;
    PyObject *stack[7];
    stack[0] = col;
    for (Py_ssize_t i = 0; i < nargs; i++)
        stack[i + 1] = args[i];
    PyObject *r = PyObject_VectorcallMethod(meth, stack, nargs + 1, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int exact_code(Cols *cs, PyObject *col, Py_ssize_t n, PyObject *meth, PyObject *ev, long code)
{
    PyObject *c = code >= 0 ? PyLong_FromLong(code) : Py_NewRef(Py_None);
    if (c == NULL)
        return -1;
    PyObject *args[2] = {ev, c};
    int r = exact(cs, col, n, meth, args, 2);
    Py_DECREF(c);
    return r;
}

static int exact_row(Cols *cs, PyObject *col, Py_ssize_t n, PyObject *ev, long code, PyObject *ts, PyObject *dur,
                     Py_ssize_t nc, Py_ssize_t thr)
{
    PyObject *c = PyLong_FromLong(code), *a = PyLong_FromSsize_t(nc), *b = PyLong_FromSsize_t(thr);
    int r = -1;
    if (c && a && b) {
        PyObject *args[6] = {ev, c, ts, dur, a, b};
        r = exact(cs, col, n, s_cpu_row, args, 6);
    }
    Py_XDECREF(c);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return r;
}

static inline int as_double(PyObject *o, double *out)
{
    if (PyFloat_CheckExact(o)) {
        *out = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    *out = PyFloat_AsDouble(o);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* One X event of category code: 0 or -1. */
static int add_x(Cols *cs, PyObject *col, PyObject **a, Py_ssize_t n, PyObject *ev, long code, PyObject **last,
                 Py_ssize_t *thr)
{
    PyObject *ts = FLD(ev, ev_off[E_TS]), *dur = FLD(ev, ev_off[E_DUR]);
    double t, d;
    if (ts == Py_None || dur == Py_None || code < 0)
        return exact_code(cs, col, n, code >= C_KERNEL || code < 0 ? s_gpu : s_cpu, ev, code);
    if (as_double(ts, &t) < 0 || as_double(dur, &d) < 0)
        return -1;
    if (d < 0)
        return exact_code(cs, col, n, code >= C_KERNEL ? s_gpu : s_cpu, ev, code);
    PyObject *name = FLD(ev, ev_off[E_NAME]), *raw = FLD(ev, ev_off[E_ARGS]);
    Py_ssize_t nc = intern(a[A_NAMEC], a[A_NAMES], name);
    if (nc < 0)
        return -1;
    if (code >= C_KERNEL) {
        GpuRes r;
        int got = gpu_args(raw, &r);
        if (got <= 0)
            return got < 0 ? -1 : exact_code(cs, col, n, s_gpu, ev, code);
        PyObject *dev = r.dev == Py_None ? FLD(ev, ev_off[E_PID]) : r.dev;
        PyObject *stream = r.stream == Py_None ? FLD(ev, ev_off[E_TID]) : r.stream;
        Py_ssize_t ds = intern_pair(a[A_DSC], a[A_DSS], dev, stream);
        Py_DECREF(r.dev);
        Py_DECREF(r.stream);
        if (ds < 0)
            return -1;
        Py_ssize_t row = cs->rows[1]++;
        PUT(cs, GTS, double, row, t);
        PUT(cs, GDUR, double, row, d);
        PUT(cs, GNAME, int, row, (int)nc);
        PUT(cs, GCAT, signed char, row, (signed char)code);
        PUT(cs, GDS, int, row, (int)ds);
        PUT(cs, GCORR, long long, row, r.corr);
        PUT(cs, GEXT, long long, row, r.ext);
        PUT(cs, GNB, long long, row, r.nb);
        return 0;
    }
    PyObject *pid = FLD(ev, ev_off[E_PID]), *tid = FLD(ev, ev_off[E_TID]);
    int same = last[0] != NULL;
    if (same) {
        same = PyObject_RichCompareBool(pid, last[0], Py_EQ);
        if (same > 0)
            same = PyObject_RichCompareBool(tid, last[1], Py_EQ);
        if (same < 0)
            return -1;
    }
    if (!same) {
        *thr = intern_pair(a[A_THRC], a[A_THREADS], pid, tid);
        if (*thr < 0)
            return -1;
        last[0] = pid;
        last[1] = tid;
    }
    long long x, y;
    Py_ssize_t ai = -1;
    PyObject *kernel = NULL;
    if (code == C_RUNTIME || code == C_DRIVER) {
        RtRes r;
        int got = rt_args(raw, a[A_LK] != Py_None, &r);
        if (got <= 0)
            return got < 0 ? -1 : exact_row(cs, col, n, ev, code, ts, dur, nc, *thr);
        x = r.corr;
        y = r.ext;
        kernel = r.kernel;
    } else {
        int empty = PyObject_Not(raw);
        if (empty < 0)
            return -1;
        if (empty)
            x = y = NONE_V;
        else {
            OpRes r;
            int got = op_args(raw, a[A_FAST], &r, cs->kc);
            if (got <= 0)
                return got < 0 ? -1 : exact_row(cs, col, n, ev, code, ts, dur, nc, *thr);
            x = r.seq;
            y = r.ext;
            ai = r.ai;
        }
    }
    Py_ssize_t row = cs->rows[0]++;
    PUT(cs, CTS, double, row, t);
    PUT(cs, CDUR, double, row, d);
    PUT(cs, CNAME, int, row, (int)nc);
    PUT(cs, CCAT, signed char, row, (signed char)code);
    PUT(cs, CTHR, int, row, (int)*thr);
    PUT(cs, CEXT, long long, row, y);
    PUT(cs, CCS, long long, row, x);
    PUT(cs, CARGS, int, row, (int)ai);
    if (kernel != NULL) {
        int err = 0, truthy = PyObject_IsTrue(kernel);
        if (truthy < 0)
            err = -1;
        else if (truthy && x != NONE_V) {
            PyObject *k = PyLong_FromLongLong(x), *v = k ? PyTuple_Pack(2, name, kernel) : NULL;
            err = (v == NULL || PyDict_SetItem(a[A_LK], k, v) < 0) ? -1 : 0;
            Py_XDECREF(k);
            Py_XDECREF(v);
        }
        Py_DECREF(kernel);
        return err;
    }
    return 0;
}

/* One s/f event: 0 or -1. */
static int add_flow(Cols *cs, PyObject *col, PyObject **a, Py_ssize_t n, PyObject *ev, int start)
{
    PyObject *fid = FLD(ev, ev_off[E_ID]), *ts = FLD(ev, ev_off[E_TS]);
    if (PyLong_CheckExact(fid) && ts != Py_None) {
        int over;
        long long v = PyLong_AsLongLongAndOverflow(fid, &over);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (!over && v >= 0 && v < FLOW_HI) {
            int fc = PySet_Contains(g_flow_cats, FLD(ev, ev_off[E_CAT]));
            if (fc < 0)
                return -1;
            if (fc) {
                double t;
                if (as_double(ts, &t) < 0)
                    return -1;
                Py_ssize_t loc = intern_pair(a[A_LOCC], a[A_LOCS], FLD(ev, ev_off[E_PID]), FLD(ev, ev_off[E_TID]));
                if (loc < 0)
                    return -1;
                int tb = start ? 2 : 3, base = start ? SID : FID;
                Py_ssize_t row = cs->rows[tb]++;
                PUT(cs, base, long long, row, v);
                PUT(cs, base + 1, int, row, (int)loc);
                PUT(cs, base + 2, double, row, t);
                return 0;
            }
        }
    }
    PyObject *args[1] = {ev};
    return exact(cs, col, n, s_flow, args, 1);
}

/* One Ev (the n-th event): 0 or -1. */
static int one_ev(Cols *cs, PyObject *col, PyObject **a, Py_ssize_t n, PyObject *ev, PyObject **last, Py_ssize_t *thr)
{
    PyObject *ph = FLD(ev, ev_off[E_PH]);
    if (is_char(ph, 'X')) {
        PyObject *k = PyDict_GetItemWithError(a[A_KINDS], FLD(ev, ev_off[E_CAT]));
        if (k != NULL) {
            long code = PyLong_AsLong(k);
            return (code == -1 && PyErr_Occurred()) ? -1 : add_x(cs, col, a, n, ev, code, last, thr);
        }
        return PyErr_Occurred() ? -1 : 0;
    }
    if (is_char(ph, 's') || is_char(ph, 'f'))
        return add_flow(cs, col, a, n, ev, is_char(ph, 's'));
    if (is_char(ph, 'M')) {
        PyObject *args[1] = {ev};
        return exact(cs, col, n, s_metadata, args, 1);
    }
    return 0;
}

/* What one call of add or add_doc works with: the collector's tables and interning dicts, the
 * pending rows, the events counted so far. */
typedef struct {
    PyObject *col, *a[A_N], *tables[4], *nobj;
    Cols cs;
    Py_ssize_t n;
} Ctx;

static void ctx_free(Ctx *x)
{
    cols_free(&x->cs);
    for (int i = 0; i < A_N; i++)
        Py_CLEAR(x->a[i]);
    for (int i = 0; i < 4; i++)
        Py_CLEAR(x->tables[i]);
    Py_CLEAR(x->nobj);
}

/* 0, or -1 with an error (x freed) */
static int ctx_open(Ctx *x, PyObject *col, Py_ssize_t len)
{
    memset(x, 0, sizeof(*x));
    x->col = col;
    x->n = -1;
    for (int i = 0; i < A_N; i++)
        if ((x->a[i] = PyObject_GetAttr(col, s_col_fields[i])) == NULL)
            goto fail;
    for (int i = 0; i < A_N; i++) {
        PyObject *v = x->a[i];
        int ok = i == A_LK ? (v == Py_None || PyDict_CheckExact(v))
                 : (i == A_NAMES || i == A_THREADS || i == A_DSS || i == A_LOCS) ? PyList_CheckExact(v)
                                                                                  : PyDict_CheckExact(v);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "_collect: Collector.%s has an unexpected type", col_fields[i]);
            goto fail;
        }
    }
    for (int i = 0; i < 4; i++)
        if ((x->tables[i] = PyObject_GetAttr(col, s_tnames[i])) == NULL)
            goto fail;
    if (cols_init(&x->cs, x->tables, len) < 0)
        goto fail;
    if ((x->nobj = PyObject_GetAttr(col, s_n_events)) == NULL || (x->n = PyLong_AsSsize_t(x->nobj)) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "_collect: n_events < 0");
        goto fail;
    }
    return 0;
fail:
    ctx_free(x);
    return -1;
}

/* Flush the rows taken (also after an error: they are in the columns, as in the Python loop),
 * set n_events, free x: err, or -1 when the flush failed. */
static int ctx_close(Ctx *x, int err)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
#else
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
#endif
    if (cols_flush(&x->cs) < 0)
        err = -1;
    if (x->n >= 0 && set_n(x->col, x->n) < 0)
        err = -1;
#if PY_VERSION_HEX >= 0x030C0000
    if (exc != NULL) {
        PyErr_Clear();
        PyErr_SetRaisedException(exc);
    }
#else
    if (et != NULL) {
        PyErr_Clear();
        PyErr_Restore(et, ev, tb);
    }
#endif
    ctx_free(x);
    return err;
}

static PyObject *add(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 2) {
        PyErr_SetString(PyExc_TypeError, "add(collector, batch)");
        return NULL;
    }
    if (!g_ready) {
        PyErr_SetString(PyExc_RuntimeError, "_collect.setup() was not called");
        return NULL;
    }
    PyObject *col = argv[0], *batch = argv[1];
    if (!PyList_CheckExact(batch))
        Py_RETURN_FALSE; /* not a list: the Python loop */
    Py_ssize_t len = PyList_GET_SIZE(batch);
    for (Py_ssize_t i = 0; i < len; i++)
        if ((PyObject *)Py_TYPE(PyList_GET_ITEM(batch, i)) != g_ev_type)
            Py_RETURN_FALSE; /* not a batch of Ev: the Python loop */
    Ctx x;
    if (ctx_open(&x, col, len) < 0)
        return NULL;
    PyObject *last[2] = {NULL, NULL};
    Py_ssize_t thr = -1;
    int err = 0;
    for (Py_ssize_t i = 0; i < len && i < PyList_GET_SIZE(batch) && err == 0; i++) {
        PyObject *ev = PyList_GET_ITEM(batch, i);
        Py_INCREF(ev);
        x.n++;
        err = one_ev(&x.cs, col, x.a, x.n, ev, last, &thr);
        Py_DECREF(ev);
    }
    if (ctx_close(&x, err) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

/* ---- add_doc: a batch read from its bytes, with no Ev per event ------------------------------
 *
 * add_doc(collector, doc, bare) takes the bytes of one JSON array of events (what the splitter
 * would hand msgspec.json.Decoder(list[Ev]); bare: the array's items alone, "ev, ev", as they
 * lie in the splitter's buffer, no copy made) and does what decoding it and add(collector, events)
 * would do, without the Ev records. A first pass reads the whole array and has no effect: it
 * finds each event's known keys (schema.Ev's fields), checks the grammar (the scanner's strict
 * subset of JSON) and that each value is one the second pass reads as msgspec would (plain ASCII
 * strings, integers of at most 18 digits, numbers without an exponent, no duplicate known key);
 * an event outside that is decoded alone by msgspec into an Ev here. Anything the first pass is
 * unsure of (bytes outside its grammar, an event msgspec refuses) makes add_doc return None
 * having changed nothing, and the caller decodes the batch with msgspec as before (so every
 * error is msgspec's, reported as before). The second pass takes the rows: an Ev through
 * one_ev, any other event through the same steps read from its bytes. */

static const Key ev_keys[E_N] = {{"ph", 2}, {"cat", 3}, {"name", 4}, {"pid", 3}, {"tid", 3},
                                 {"ts", 2}, {"dur", 3}, {"id", 2},   {"args", 4}};

typedef struct {
    const char *s, *e; /* the event's bytes */
    Span f[E_N];       /* the known keys' values; s == NULL: absent */
    PyObject *ev;      /* an Ev decoded by msgspec (the event is not simple), or NULL */
    double t, d;       /* ts and dur of a simple event */
    int t_null, d_null; /* ts, dur absent or null */
    Py_ssize_t pair0;  /* its args' pairs: PairBuf.p[pair0 : pair0 + npairs] */
    int npairs;        /* < 0: none found (the bytes are scanned) */
} EvSpan;

typedef struct {
    Pair *p;
    Py_ssize_t n, cap;
    int nomem;
} PairBuf;

/* The args object at p ('{'): past it, its top-level pairs appended to pb (x->pair0, x->npairs),
 * or NULL when unsure (pb->nomem set when out of memory). The pass scan_args would make over the
 * same bytes, made once. */
static const char *scan_pairs(const char *p, const char *e, PairBuf *pb, EvSpan *x)
{
    int plain, ok = 1;
    Py_ssize_t first = pb->n;
    p = ws(p + 1, e);
    if (p < e && *p == '}') {
        x->pair0 = first;
        x->npairs = 0;
        return p + 1;
    }
    for (;;) {
        const char *ks = p;
        if (p >= e || *p != '"' || (p = skip_string(p, e, &plain)) == NULL)
            return NULL;
        const char *ke = p;
        ok &= plain;
        p = ws(p, e);
        if (p >= e || *p != ':')
            return NULL;
        p = ws(p + 1, e);
        const char *vs = p;
        if ((p = skip_value(p, e, 3)) == NULL)
            return NULL;
        if (ok) {
            if (pb->n == pb->cap) {
                Py_ssize_t cap = pb->cap ? 2 * pb->cap : 256;
                Pair *w = PyMem_Realloc(pb->p, cap * sizeof(Pair));
                if (w == NULL) {
                    pb->nomem = 1;
                    return NULL;
                }
                pb->p = w;
                pb->cap = cap;
            }
            Pair *q = &pb->p[pb->n++];
            q->k.s = ks + 1;
            q->k.e = ke - 1;
            q->v.s = vs;
            q->v.e = p;
        }
        p = ws(p, e);
        if (p >= e)
            return NULL;
        if (*p == '}')
            break;
        if (*p != ',')
            return NULL;
        p = ws(p + 1, e);
    }
    x->pair0 = first;
    x->npairs = ok && pb->n - first <= INT_MAX ? (int)(pb->n - first) : -1;
    return p + 1;
}

/* a plain string literal (the scanner took it: no backslash means plain ASCII) */
static inline int span_plain_str(Span v)
{
    return v.e - v.s >= 2 && *v.s == '"' && memchr(v.s + 1, '\\', (size_t)(v.e - v.s - 2)) == NULL;
}

/* An Id (int | str) msgspec and this file read alike: absent, a plain string, an integer of at
 * most MAX_DIGITS digits; null too when nullable. */
static inline int span_simple_id(Span v, int nullable)
{
    long long x;
    return v.s == NULL || span_plain_str(v) || span_int(v, &x) || (nullable && span_is(v, "null", 4));
}

/* A float | None: 1 and *out (*null set when absent or null), 0 when not simple. An integer
 * literal is converted as msgspec does (as an int, then to float: "-0" is 0.0). */
static int span_float(Span v, double *out, int *null)
{
    *null = 0;
    if (v.s == NULL || span_is(v, "null", 4)) {
        *null = 1;
        return 1;
    }
    const char *p = v.s;
    if (p < v.e && *p == '-')
        p++;
    if (p >= v.e || !(CLS(p) & C_DIGIT))
        return 0;
    if (memchr(v.s, '.', (size_t)(v.e - v.s)) == NULL) {
        Py_ssize_t nd = v.e - p;
        if (nd > MAX_DIGITS)
            return 0;
        long long x = 0;
        for (; p < v.e; p++)
            x = x * 10 + (*p - '0');
        *out = (double)(v.s[0] == '-' ? -x : x);
        return 1;
    }
    /* Clinger's fast path: a decimal significand m <= 2**53 and k <= 22 fraction digits are both
     * exact as doubles, so m / 10**k, one IEEE division, is the correctly rounded value (W. D.
     * Clinger, "How to Read Floating Point Numbers Accurately", PLDI 1990), which msgspec and
     * Python's own dtoa (below, for the rest) also give */
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t m = 0;
    int nd = 0, k = -1;
    for (const char *q = p; q < v.e; q++) {
        if (*q == '.') {
            k = 0;
            continue;
        }
        if (nd || *q != '0')
            nd++;
        if (nd > 19)
            break;
        m = m * 10 + (uint64_t)(*q - '0');
        k += k >= 0;
    }
    if (nd <= 19 && m <= (1ull << 53) && k >= 0 && k <= 22) {
        double r = (double)m / pow10[k];
        *out = v.s[0] == '-' ? -r : r;
        return 1;
    }
    char tmp[32]; /* the scanner keeps numbers to 24 bytes */
    Py_ssize_t len = v.e - v.s;
    if (len >= (Py_ssize_t)sizeof(tmp))
        return 0;
    memcpy(tmp, v.s, (size_t)len);
    tmp[len] = '\0';
    char *end;
    *out = PyOS_string_to_double(tmp, &end, NULL);
    if (*out == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return end == tmp + len;
}

/* One event object at p: past it (x filled), or NULL when unsure. */
static const char *scan_event(const char *p, const char *e, EvSpan *x, PairBuf *pb)
{
    int plain;
    unsigned seen = 0, dup = 0;
    x->s = p;
    x->ev = NULL;
    x->t = x->d = 0;
    x->t_null = x->d_null = 1;
    x->pair0 = 0;
    x->npairs = -1;
    for (int i = 0; i < E_N; i++)
        x->f[i].s = x->f[i].e = NULL;
    if (p >= e || *p != '{')
        return NULL;
    p = ws(p + 1, e);
    if (p < e && *p == '}')
        return x->e = p + 1;
    for (;;) {
        const char *ks = p;
        if (p >= e || *p != '"' || (p = skip_string(p, e, &plain)) == NULL || !plain)
            return NULL;
        Py_ssize_t kl = p - ks - 2;
        int k = -1;
        for (int i = 0; i < E_N; i++)
            if (ev_keys[i].len == kl && memcmp(ev_keys[i].key, ks + 1, kl) == 0) {
                k = i;
                break;
            }
        p = ws(p, e);
        if (p >= e || *p != ':')
            return NULL;
        p = ws(p + 1, e);
        const char *vs = p;
        if ((p = (k == E_ARGS && p < e && *p == '{') ? scan_pairs(p, e, pb, x) : skip_value(p, e, 2)) == NULL)
            return NULL;
        if (k >= 0) {
            dup |= seen & (1u << k);
            seen |= 1u << k;
            x->f[k].s = vs;
            x->f[k].e = p;
        }
        p = ws(p, e);
        if (p >= e)
            return NULL;
        if (*p == '}')
            break;
        if (*p != ',')
            return NULL;
        p = ws(p + 1, e);
    }
    x->e = p + 1;
    if (dup)
        x->f[E_PH].s = x->f[E_PH].e = x->s; /* marks the event as not simple (a '{' is no string) */
    return x->e;
}

static int ev_simple(EvSpan *x)
{
    for (int i = E_PH; i <= E_NAME; i++)
        if (x->f[i].s != NULL && !span_plain_str(x->f[i]))
            return 0;
    return span_simple_id(x->f[E_PID], 0) && span_simple_id(x->f[E_TID], 0) && span_simple_id(x->f[E_ID], 1) &&
           span_float(x->f[E_TS], &x->t, &x->t_null) && span_float(x->f[E_DUR], &x->d, &x->d_null);
}

/* The event alone through msgspec (an Ev, a new reference), or NULL: *refused when msgspec
 * raised one of the errors the Python loop catches (no error set), else an error. */
static PyObject *ev_decode(const EvSpan *x, int *refused)
{
    *refused = 0;
    PyObject *b = PyBytes_FromStringAndSize(x->s, x->e - x->s);
    if (b == NULL)
        return NULL;
    PyObject *ev = decode(g_ev1_dec, b, g_ev_type);
    Py_DECREF(b);
    if (ev == NULL && !PyErr_Occurred())
        *refused = 1;
    return ev;
}

/* The first pass over doc [p, e): the events in *out (count in *n, a PyMem array), 1; 0 when
 * unsure (nothing kept); -1 on an error. */
/* partial: when the scan fails after at least one whole event (a cut that fell inside an event,
 * the array's end, bad bytes), keep the events before the one it failed in (each a complete
 * object of the strict grammar, so its end is a true boundary); *stop: past the last kept. */
static int scan_doc(const char *p, const char *e, int bare, int partial, EvSpan **out, Py_ssize_t *n, PairBuf *pb,
                    const char **stop)
{
    Py_ssize_t cap = 64, len = 0;
    EvSpan *v = PyMem_Malloc(cap * sizeof(EvSpan));
    if (v == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int r = 0;
    p = ws(p, e);
    if (!bare) {
        if (p >= e || *p != '[')
            goto fail;
        p = ws(p + 1, e);
    }
    if (bare ? p >= e : (p < e && *p == ']'))
        p += !bare;
    else
        for (;;) {
            if (len == cap) {
                EvSpan *w = PyMem_Realloc(v, 2 * cap * sizeof(EvSpan));
                if (w == NULL) {
                    PyErr_NoMemory();
                    r = -1;
                    goto fail;
                }
                v = w;
                cap *= 2;
            }
            EvSpan *x = &v[len];
            if ((p = scan_event(p, e, x, pb)) == NULL) {
                if (pb->nomem) {
                    PyErr_NoMemory();
                    r = -1;
                }
                goto tail;
            }
            len++;
            if (!ev_simple(x)) {
                int refused;
                if ((x->ev = ev_decode(x, &refused)) == NULL) {
                    r = refused ? 0 : -1;
                    goto fail;
                }
            }
            p = ws(p, e);
            if (bare && p >= e)
                break;
            if (p >= e)
                goto tail;
            if (!bare && *p == ']') {
                p++;
                break;
            }
            if (*p != ',')
                goto tail;
            p = ws(p + 1, e);
        }
    if (ws(p, e) != e)
        goto fail;
    *out = v;
    *n = len;
    *stop = e;
    return 1;
tail:
    /* v[0 : len] are whole events; the scan failed in the next one or in what follows the last */
    if (partial && r == 0 && len > 0) {
        *out = v;
        *n = len;
        *stop = v[len - 1].e;
        return 1;
    }
fail:
    while (len-- > 0)
        Py_XDECREF(v[len].ev);
    PyMem_Free(v);
    return r;
}

/* ---- the second pass: one simple event read from its spans */

/* What the second pass keeps from one event to the next: the last thread's pid/tid bytes (a
 * run of events of one thread makes no objects for them), the categories met (str, code). */
#define CAT_MEMO 64
typedef struct {
    Span pid, tid; /* pid.s == NULL and !have: none yet */
    int have;
    int ncat;
    Span cat[CAT_MEMO];
    PyObject *cat_str[CAT_MEMO];
    long cat_code[CAT_MEMO]; /* LONG_MIN: not in _kinds */
} Memo;

static inline int span_eq(Span a, Span b)
{
    if (a.s == NULL || b.s == NULL)
        return a.s == b.s;
    return a.e - a.s == b.e - b.s && memcmp(a.s, b.s, (size_t)(a.e - a.s)) == 0;
}

/* the value of a simple string field (a new reference; "" when absent) */
static PyObject *str_of(Span v)
{
    if (v.s == NULL)
        return PyUnicode_FromStringAndSize("", 0);
    return PyUnicode_FromStringAndSize(v.s + 1, v.e - v.s - 2);
}

/* the value of a simple Id field (a new reference; 0 when absent) */
static PyObject *id_of(Span v)
{
    long long x;
    if (v.s == NULL)
        return PyLong_FromLong(0);
    if (span_int(v, &x))
        return PyLong_FromLongLong(x);
    return str_of(v);
}

/* category str (borrowed from the memo) and its _kinds code (LONG_MIN: none) of a simple
 * event: 1; 0 when the memo is full (the caller takes the Ev path); -1 */
static int cat_of(Memo *m, PyObject *kinds, Span v, PyObject **str, long *code)
{
    for (int i = 0; i < m->ncat; i++)
        if (span_eq(m->cat[i], v)) {
            *str = m->cat_str[i];
            *code = m->cat_code[i];
            return 1;
        }
    if (m->ncat == CAT_MEMO)
        return 0;
    PyObject *s = str_of(v);
    if (s == NULL)
        return -1;
    long c = LONG_MIN;
    PyObject *k = PyDict_GetItemWithError(kinds, s);
    if (k != NULL)
        c = PyLong_AsLong(k);
    if (PyErr_Occurred()) {
        Py_DECREF(s);
        return -1;
    }
    m->cat[m->ncat] = v;
    m->cat_str[m->ncat] = s; /* the memo's reference */
    m->cat_code[m->ncat++] = c;
    *str = s;
    *code = c;
    return 1;
}

static void memo_free(Memo *m)
{
    for (int i = 0; i < m->ncat; i++)
        Py_DECREF(m->cat_str[i]);
    m->ncat = 0;
}

/* The event as an Ev, for an exact path: decoded once, kept in x (a borrowed reference), or
 * NULL with an error (msgspec refusing an event the first pass took simple would be a bug). */
static PyObject *ev_of(EvSpan *x)
{
    if (x->ev == NULL) {
        int refused;
        x->ev = ev_decode(x, &refused);
        if (x->ev == NULL && refused)
            PyErr_SetString(PyExc_RuntimeError, "_collect.add_doc: msgspec refused an event the scan took as simple");
    }
    return x->ev;
}

/* add_x for a simple event: 0 or -1 */
static int add_x_span(Ctx *c, EvSpan *x, const Pairs *pp, long code, Memo *m, PyObject **last, Py_ssize_t *thr)
{
    Cols *cs = &c->cs;
    PyObject **a = c->a, *col = c->col;
    Py_ssize_t n = c->n;
    double t = x->t, d = x->d;
    if (x->t_null || x->d_null || code < 0 || d < 0) {
        PyObject *ev = ev_of(x);
        if (ev == NULL)
            return -1;
        return exact_code(cs, col, n, code >= C_KERNEL || code < 0 ? s_gpu : s_cpu, ev, code);
    }
    const char *ap = x->f[E_ARGS].s ? x->f[E_ARGS].s : "", *ae = x->f[E_ARGS].s ? x->f[E_ARGS].e : ap;
    PyObject *name = str_of(x->f[E_NAME]);
    if (name == NULL)
        return -1;
    int err = -1;
    Py_ssize_t nc = intern(a[A_NAMEC], a[A_NAMES], name);
    if (nc < 0)
        goto out;
    if (code >= C_KERNEL) {
        GpuRes r;
        int got = gpu_args_at(ap, ae, pp, NULL, &r);
        if (got <= 0) {
            PyObject *ev = got < 0 ? NULL : ev_of(x);
            err = ev == NULL ? -1 : exact_code(cs, col, n, s_gpu, ev, code);
            goto out;
        }
        if (r.dev == Py_None) {
            Py_DECREF(r.dev);
            r.dev = id_of(x->f[E_PID]);
        }
        if (r.stream == Py_None) {
            Py_DECREF(r.stream);
            r.stream = id_of(x->f[E_TID]);
        }
        Py_ssize_t ds = (r.dev && r.stream) ? intern_pair(a[A_DSC], a[A_DSS], r.dev, r.stream) : -1;
        Py_XDECREF(r.dev);
        Py_XDECREF(r.stream);
        if (ds < 0)
            goto out;
        Py_ssize_t row = cs->rows[1]++;
        PUT(cs, GTS, double, row, t);
        PUT(cs, GDUR, double, row, d);
        PUT(cs, GNAME, int, row, (int)nc);
        PUT(cs, GCAT, signed char, row, (signed char)code);
        PUT(cs, GDS, int, row, (int)ds);
        PUT(cs, GCORR, long long, row, r.corr);
        PUT(cs, GEXT, long long, row, r.ext);
        PUT(cs, GNB, long long, row, r.nb);
        err = 0;
        goto out;
    }
    if (!m->have || !span_eq(m->pid, x->f[E_PID]) || !span_eq(m->tid, x->f[E_TID])) {
        PyObject *pid = id_of(x->f[E_PID]), *tid = pid ? id_of(x->f[E_TID]) : NULL;
        *thr = tid ? intern_pair(a[A_THRC], a[A_THREADS], pid, tid) : -1;
        Py_XDECREF(pid);
        Py_XDECREF(tid);
        if (*thr < 0)
            goto out;
        m->pid = x->f[E_PID];
        m->tid = x->f[E_TID];
        m->have = 1;
        last[0] = last[1] = NULL; /* one_ev's own memo of the thread is stale now */
    }
    long long cx, cy;
    Py_ssize_t ai = -1;
    PyObject *kernel = NULL;
    if (code == C_RUNTIME || code == C_DRIVER || ae > ap) {
        int got;
        if (code == C_RUNTIME || code == C_DRIVER) {
            RtRes r;
            got = rt_args_at(ap, ae, pp, NULL, a[A_LK] != Py_None, &r);
            cx = r.corr;
            cy = r.ext;
            kernel = got > 0 ? r.kernel : NULL;
        } else {
            OpRes r;
            got = op_args_at(ap, ae, pp, NULL, a[A_FAST], &r, cs->kc);
            cx = r.seq;
            cy = r.ext;
            ai = r.ai;
        }
        if (got <= 0) {
            if (got < 0)
                goto out;
            PyObject *ev = ev_of(x), *ts = ev ? PyFloat_FromDouble(t) : NULL, *dur = ts ? PyFloat_FromDouble(d) : NULL;
            err = dur == NULL ? -1 : exact_row(cs, col, n, ev, code, ts, dur, nc, *thr);
            Py_XDECREF(ts);
            Py_XDECREF(dur);
            goto out;
        }
    } else
        cx = cy = NONE_V;
    Py_ssize_t row = cs->rows[0]++;
    PUT(cs, CTS, double, row, t);
    PUT(cs, CDUR, double, row, d);
    PUT(cs, CNAME, int, row, (int)nc);
    PUT(cs, CCAT, signed char, row, (signed char)code);
    PUT(cs, CTHR, int, row, (int)*thr);
    PUT(cs, CEXT, long long, row, cy);
    PUT(cs, CCS, long long, row, cx);
    PUT(cs, CARGS, int, row, (int)ai);
    err = 0;
    if (kernel != NULL) {
        int truthy = PyObject_IsTrue(kernel);
        if (truthy < 0)
            err = -1;
        else if (truthy && cx != NONE_V) {
            PyObject *k = PyLong_FromLongLong(cx), *v = k ? PyTuple_Pack(2, name, kernel) : NULL;
            err = (v == NULL || PyDict_SetItem(a[A_LK], k, v) < 0) ? -1 : 0;
            Py_XDECREF(k);
            Py_XDECREF(v);
        }
        Py_DECREF(kernel);
    }
out:
    Py_DECREF(name);
    return err;
}

/* add_flow for a simple event (cat: its str): 0 or -1 */
static int add_flow_span(Ctx *c, EvSpan *x, PyObject *cat, int start)
{
    Cols *cs = &c->cs;
    PyObject **a = c->a;
    long long v;
    double t = x->t;
    if (x->f[E_ID].s != NULL && span_int(x->f[E_ID], &v) && !x->t_null && v >= 0 && v < FLOW_HI) {
        int fc = PySet_Contains(g_flow_cats, cat);
        if (fc < 0)
            return -1;
        if (fc) {
            PyObject *pid = id_of(x->f[E_PID]), *tid = pid ? id_of(x->f[E_TID]) : NULL;
            Py_ssize_t loc = tid ? intern_pair(a[A_LOCC], a[A_LOCS], pid, tid) : -1;
            Py_XDECREF(pid);
            Py_XDECREF(tid);
            if (loc < 0)
                return -1;
            int tb = start ? 2 : 3, base = start ? SID : FID;
            Py_ssize_t row = cs->rows[tb]++;
            PUT(cs, base, long long, row, v);
            PUT(cs, base + 1, int, row, (int)loc);
            PUT(cs, base + 2, double, row, t);
            return 0;
        }
    }
    PyObject *ev = ev_of(x);
    if (ev == NULL)
        return -1;
    PyObject *args[1] = {ev};
    return exact(cs, c->col, c->n, s_flow, args, 1);
}

/* one event of add_doc's second pass: 0 or -1 */
static int one_span(Ctx *c, EvSpan *x, const PairBuf *pb, Memo *m, PyObject **last, Py_ssize_t *thr)
{
    if (x->ev != NULL) {
        m->have = 0; /* one_ev may change *thr */
        return one_ev(&c->cs, c->col, c->a, c->n, x->ev, last, thr);
    }
    Span ph = x->f[E_PH];
    char k = (ph.s != NULL && ph.e - ph.s == 3) ? ph.s[1] : 0;
    if (k != 'X' && k != 's' && k != 'f' && k != 'M')
        return 0;
    PyObject *cat = NULL;
    long code = LONG_MIN;
    int got = k == 'M' ? 0 : cat_of(m, c->a[A_KINDS], x->f[E_CAT], &cat, &code);
    if (got < 0)
        return -1;
    if (got == 0) { /* a metadata event, or too many categories for the memo: as an Ev */
        PyObject *ev = ev_of(x);
        if (ev == NULL)
            return -1;
        m->have = 0;
        return one_ev(&c->cs, c->col, c->a, c->n, ev, last, thr);
    }
    if (k == 'X')
    {
        Pairs pp = {pb->p + x->pair0, x->npairs};
        return code == LONG_MIN ? 0 : add_x_span(c, x, &pp, code, m, last, thr);
    }
    return add_flow_span(c, x, cat, k == 's');
}

static PyObject *add_doc(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 4) {
        PyErr_SetString(PyExc_TypeError, "add_doc(collector, doc, bare, partial)");
        return NULL;
    }
    int bare = PyObject_IsTrue(argv[2]), partial = PyObject_IsTrue(argv[3]);
    if (bare < 0 || partial < 0)
        return NULL;
    if (!g_ready) {
        PyErr_SetString(PyExc_RuntimeError, "_collect.setup() was not called");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(argv[1], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    EvSpan *evs = NULL;
    Py_ssize_t len = 0;
    PyObject *res = NULL;
    PairBuf pb = {NULL, 0, 0, 0};
    const char *stop = NULL, *end = (const char *)view.buf + view.len;
    int got = scan_doc(view.buf, end, bare, partial, &evs, &len, &pb, &stop);
    if (got <= 0) {
        if (got == 0)
            res = Py_NewRef(Py_None);
        goto done;
    }
    Ctx x;
    if (ctx_open(&x, argv[0], len) == 0) {
        Memo m;
        memset(&m, 0, sizeof(m));
        PyObject *last[2] = {NULL, NULL};
        Py_ssize_t thr = -1;
        Py_ssize_t n0 = x.n;
        int err = 0;
        for (Py_ssize_t i = 0; i < len && err == 0; i++) {
            x.n++;
            err = one_span(&x, &evs[i], &pb, &m, last, &thr);
        }
        memo_free(&m);
        if (ctx_close(&x, err) == 0)
            res = stop == end ? PyLong_FromSsize_t(x.n - n0)
                              : Py_BuildValue("nn", x.n - n0, (Py_ssize_t)(stop - (const char *)view.buf));
    }
    for (Py_ssize_t i = 0; i < len; i++)
        Py_XDECREF(evs[i].ev);
    PyMem_Free(evs);
done:
    PyMem_Free(pb.p);
    PyBuffer_Release(&view);
    return res;
}

static PyObject *stats(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("{sKsK}", "scanned", n_scanned, "msgspec", n_msgspec);
}

static PyMethodDef methods[] = {
    {"stats", stats, METH_NOARGS, "how many kept events' args the scanner read, and how many msgspec"},
    {"setup", setup, METH_VARARGS, "setup(Ev, struct types..., decoders..., errors, flow_cats, codes, Ev decoder)"},
    {"add", (PyCFunction)(void (*)(void))add, METH_FASTCALL,
     "add(collector, batch) -> True (done) or False (not a list of Ev: use the Python loop)"},
    {"add_doc", (PyCFunction)(void (*)(void))add_doc, METH_FASTCALL,
     "add_doc(collector, doc, bare, partial) -> events taken from the JSON array doc (bare: its items without the brackets), (events, bytes) when partial let it take the whole events before a failure, or None (unsure: nothing done)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "perfreport.read._collect",
                                    "The inline loop of Collector.add in C (see _collect.c).", -1, methods};

PyMODINIT_FUNC PyInit__collect(void)
{
    init_classes();
    PyObject **names[] = {&s_gpu, &s_cpu, &s_cpu_row, &s_flow, &s_metadata, &s_frombytes, &s_n_events, &s_typecode};
    const char *strs[] = {"_gpu", "_cpu", "_cpu_row", "_flow", "_metadata", "frombytes", "n_events", "typecode"};
    for (int i = 0; i < 8; i++)
        if ((*names[i] = PyUnicode_InternFromString(strs[i])) == NULL)
            return NULL;
    if (intern_all(s_col_attr, col_attr, NCOL) < 0 || intern_all(s_col_fields, col_fields, A_N) < 0 ||
        intern_all(s_tnames, tnames, 4) < 0)
        return NULL;
    return PyModule_Create(&module);
}
