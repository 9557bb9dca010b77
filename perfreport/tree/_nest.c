/* The optional C loop of the tree's nesting (perfreport/tree/nest.py, nest_by_thread).

   nest(order, ts, dur, cat, thr, parent, c_runtime, c_driver) walks the CPU rows in nesting
   order (int32 `order`: per thread by ts, the longer event first) with a stack of open events,
   as nest.nest_python does, and writes each row's parent row (or leaves -1) into int32
   `parent`: the innermost open event that ends after the row starts. A zero-length runtime or
   driver call (`cat` int8 code c_runtime / c_driver, `dur` <= 0) never becomes a parent.
   `ts`, `dur`: float64; `thr`: int32 thread codes. All by row, C-contiguous. The stack grows as
   needed (no array of the trace's length). tests/tree/test_nest.py holds it equal to the
   Python loop. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int check(Py_buffer *b, Py_ssize_t n, Py_ssize_t size, const char *what) {
    if (b->len != n * size) {
        PyErr_Format(PyExc_ValueError, "nest: %s holds %zd bytes, not %zd", what, b->len, n * size);
        return -1;
    }
    return 0;
}

static PyObject *nest(PyObject *self, PyObject *args) {
    Py_buffer bo, bts, bdur, bcat, bthr, bpar;
    int c_rt, c_dr;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*ii", &bo, &bts, &bdur, &bcat, &bthr, &bpar, &c_rt, &c_dr))
        return NULL;
    PyObject *result = NULL;
    int32_t *rows = NULL;
    double *ends = NULL;
    Py_ssize_t n = bts.len / (Py_ssize_t)sizeof(double);
    if (check(&bo, n, 4, "order") || check(&bts, n, 8, "ts") || check(&bdur, n, 8, "dur") ||
        check(&bcat, n, 1, "cat") || check(&bthr, n, 4, "thr") || check(&bpar, n, 4, "parent"))
        goto done;
    const int32_t *order = (const int32_t *)bo.buf, *thr = (const int32_t *)bthr.buf;
    const double *ts = (const double *)bts.buf, *dur = (const double *)bdur.buf;
    const int8_t *cat = (const int8_t *)bcat.buf;
    int32_t *parent = (int32_t *)bpar.buf;
    Py_ssize_t cap = 64, sp = 0;
    rows = (int32_t *)malloc(cap * sizeof(int32_t));
    ends = (double *)malloc(cap * sizeof(double));
    if (rows == NULL || ends == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int have = 0;
    int32_t cur = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        int32_t r = order[k];
        if (r < 0 || r >= n) {
            PyErr_SetString(PyExc_ValueError, "nest: a row of order is out of range");
            goto done;
        }
        double t = ts[r], d = dur[r];
        if (!have || thr[r] != cur) {
            sp = 0;
            cur = thr[r];
            have = 1;
        }
        while (sp && ends[sp - 1] <= t)
            sp--;
        if (sp)
            parent[r] = rows[sp - 1];
        if (d > 0 || (cat[r] != c_rt && cat[r] != c_dr)) {
            if (sp == cap) {
                cap *= 2;
                int32_t *nr = (int32_t *)realloc(rows, cap * sizeof(int32_t));
                if (nr == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                rows = nr;
                double *ne = (double *)realloc(ends, cap * sizeof(double));
                if (ne == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                ends = ne;
            }
            rows[sp] = r;
            ends[sp] = d + t;
            sp++;
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    free(rows);
    free(ends);
    PyBuffer_Release(&bo);
    PyBuffer_Release(&bts);
    PyBuffer_Release(&bdur);
    PyBuffer_Release(&bcat);
    PyBuffer_Release(&bthr);
    PyBuffer_Release(&bpar);
    return result;
}

static PyMethodDef methods[] = {
    {"nest", nest, METH_VARARGS, "nest(order, ts, dur, cat, thr, parent, c_runtime, c_driver): parents in place"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "perfreport.tree._nest", NULL, -1, methods};

PyMODINIT_FUNC PyInit__nest(void) { return PyModule_Create(&module); }
