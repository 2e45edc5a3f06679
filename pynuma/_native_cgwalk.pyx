# distutils: sources = native/pn_cgwalk.c native/pn_cgparse.c
# distutils: include_dirs = native
"""Native kubelet cgroup walker: same ``walk`` as :mod:`pynuma._pure_cgwalk`.

The whole walk runs in C with the GIL released, filling flat records; they
become Python tuples once at the end.  With a test ``hook`` the GIL is taken
back for each call of it.
"""
from libc.stdint cimport int64_t, int32_t, int8_t, uint32_t
from libc.string cimport memset, strncpy
from libc.stdlib cimport malloc, free
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.ref cimport Py_INCREF
import os

cdef extern from "pn_cgwalk.h":
    enum: PN_CG_NSLOTS
    enum: PN_CG_MAXBASES
    enum: PN_CG_MAXKEYS
    enum: PN_CG_MAXFILES
    enum: PN_CG_NAMELEN
    struct pn_cgfile:
        int base
        int kind
        int slot
        int nkeys
        char name[64]
        char keys[4][32]
        int keylen[4]
        int kslot[4]
        int64_t kmult[4]
    struct pn_cgrec:
        int8_t kind, qos, runtime
        uint32_t have
        uint32_t bad
        int32_t path_off, path_len
        int32_t uid_off, uid_len
        int32_t cid_off, cid_len
        int64_t slots[16]
    struct pn_cgresult:
        pn_cgrec *recs
        long nrecs
        char *names
        long nnames
    ctypedef void (*pn_cg_hook)(void *ctx, const char *path) noexcept
    int pn_cgwalk(int rootfd, const char *const *bases, int nbases, int systemd,
                  const pn_cgfile *files, int nfiles, int full,
                  pn_cg_hook hook, void *hookctx, pn_cgresult *out) nogil
    void pn_cgresult_free(pn_cgresult *res) nogil

_QOS = ("Guaranteed", "Burstable", "BestEffort", None)
_RUNTIME = ("", "cri-containerd", "crio", "docker")


cdef void _call_hook(void *ctx, const char *path) noexcept with gil:
    state = <object>ctx
    if state[1] is not None:
        return  # an earlier call failed: stop calling, re-raise after the walk
    try:
        state[0](path.decode("utf-8", "surrogateescape"))
    except BaseException as err:  # noqa: B902 - handed back to the caller below
        state[1] = err


cdef int _fill_specs(pn_cgfile *files, list specs) except -1:
    cdef int i, q
    for i, spec in enumerate(specs):
        base, name, kind, slot, keys = spec
        bname = name.encode()
        if len(bname) >= PN_CG_NAMELEN or len(keys) > PN_CG_MAXKEYS:
            raise ValueError(f"file spec too large: {name!r}")
        files[i].base = base
        files[i].kind = kind
        files[i].slot = slot
        files[i].nkeys = len(keys)
        strncpy(files[i].name, bname, PN_CG_NAMELEN - 1)
        for q, (key, kslot, mult) in enumerate(keys):
            bkey = key.encode()
            if len(bkey) >= 32:
                raise ValueError(f"key too long: {key!r}")
            strncpy(files[i].keys[q], bkey, 31)
            files[i].keylen[q] = len(bkey)
            files[i].kslot[q] = kslot
            files[i].kmult[q] = mult
    return 0


def walk(int rootfd, bases, systemd, specs, full=True, hook=None):
    """Records of the kubepods cgroup and (``full``) its tiers, pods and containers."""
    cdef pn_cgfile files[24]
    cdef const char *cbases[4]
    cdef pn_cgresult res
    cdef int nb = len(bases), nf = len(specs), rc, i, s, csys = 1 if systemd else 0, cfull = 1 if full else 0
    cdef pn_cg_hook chook = NULL
    cdef void *ctx = NULL
    cdef pn_cgrec *r
    if nb < 1 or nb > PN_CG_MAXBASES or nf > PN_CG_MAXFILES:
        raise ValueError("too many hierarchies or file specs")
    memset(files, 0, sizeof(files))
    memset(&res, 0, sizeof(res))
    specs = [tuple(x) for x in specs]
    _fill_specs(files, specs)
    bbases = [b.encode() for b in bases]
    for i in range(nb):
        cbases[i] = bbases[i]
    state = [hook, None]
    if hook is not None:
        chook = _call_hook
        ctx = <void *>state
        rc = pn_cgwalk(rootfd, cbases, nb, csys, files, nf, cfull, chook, ctx, &res)
    else:
        with nogil:
            rc = pn_cgwalk(rootfd, cbases, nb, csys, files, nf, cfull, NULL, NULL, &res)
    try:
        if state[1] is not None:
            raise state[1]
        if rc < 0:
            raise OSError(-rc, os.strerror(-rc), bases[0])
        return _records(&res)
    finally:
        pn_cgresult_free(&res)


cdef list _records(pn_cgresult *res):
    cdef long i
    cdef int s
    cdef pn_cgrec *r
    cdef char *names = res.names
    out = []
    for i in range(res.nrecs):
        r = &res.recs[i]
        slots = PyTuple_New(PN_CG_NSLOTS)
        for s in range(PN_CG_NSLOTS):
            v = r.slots[s] if (r.have >> s) & 1 else None
            Py_INCREF(v)
            PyTuple_SET_ITEM(slots, s, v)
        path = names[r.path_off:r.path_off + r.path_len].decode("utf-8", "surrogateescape") if r.path_len else ""
        uid = names[r.uid_off:r.uid_off + r.uid_len].decode("utf-8", "surrogateescape") if r.uid_off >= 0 else None
        if r.kind == 3:
            cid = names[r.cid_off:r.cid_off + r.cid_len].decode("utf-8", "surrogateescape")
            rt = _RUNTIME[r.runtime]
        else:
            cid = None
            rt = None
        out.append((r.kind, _QOS[r.qos], uid, rt, cid, path, slots, r.bad))
    return out
