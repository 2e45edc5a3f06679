/* Kubelet cgroup walker (twin: pynuma/_pure_cgwalk.py; naming rules: pynuma/cgroups/kubepods.py).
 *
 * One pass, no Python objects, no allocation per file: directories are opened
 * relative to their parent's fd (openat, O_NOFOLLOW: cgroup trees hold no
 * symlinks, so a dump can never lead the walk outside its root), listed with
 * getdents64 (d_type, no stat), and each wanted file is opened, read once with
 * one read() into a 64 KiB buffer, and parsed in place into an int64 slot.
 * Containers are leaves: they are read, never listed.  A cgroup removed while
 * we walk (ENOENT on its directory, ENODEV on its files: kernfs) is skipped.
 */
#define _GNU_SOURCE
#include "pn_cgwalk.h"
#include "pn_cgparse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dirent.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct pn_open_how {
    uint64_t flags, mode, resolve;
};
#define PN_RESOLVE_NO_SYMLINKS 0x04
#define PN_RESOLVE_BENEATH 0x08

#define VANISHED 1
#define RDBUF 65536
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
/* O_NONBLOCK: a FIFO in a dump would otherwise block the open until a writer comes, forever */
#define FILE_FLAGS (O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)

struct dent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

struct walker {
    int systemd, nbases, nfiles;
    const struct pn_cgfile *files;
    pn_cg_hook hook;
    void *hookctx;
    struct pn_cgresult *out;
    char path[4096];
    char buf[RDBUF];
};

/* ---- result buffers ---------------------------------------------------- */

static int put_str(struct pn_cgresult *r, const char *s, long n, int32_t *off, int32_t *len)
{
    if (r->nnames + n + 1 > r->capnames) {
        long cap = r->capnames ? r->capnames * 2 : 65536;
        while (cap < r->nnames + n + 1)
            cap *= 2;
        char *p = realloc(r->names, cap);
        if (!p)
            return -ENOMEM;
        r->names = p;
        r->capnames = cap;
    }
    memcpy(r->names + r->nnames, s, n);
    *off = (int32_t)r->nnames;
    *len = (int32_t)n;
    r->nnames += n;
    r->names[r->nnames++] = '\0';
    return 0;
}

static struct pn_cgrec *new_rec(struct pn_cgresult *r)
{
    if (r->nrecs == r->caprecs) {
        long cap = r->caprecs ? r->caprecs * 2 : 256;
        struct pn_cgrec *p = realloc(r->recs, cap * sizeof(*p));
        if (!p)
            return NULL;
        r->recs = p;
        r->caprecs = cap;
    }
    struct pn_cgrec *rec = &r->recs[r->nrecs];
    memset(rec, 0, sizeof(*rec));
    rec->uid_off = rec->cid_off = -1;
    return rec;
}

void pn_cgresult_free(struct pn_cgresult *r)
{
    free(r->recs);
    free(r->names);
    memset(r, 0, sizeof(*r));
}

/* ---- reading one cgroup ------------------------------------------------- */

static int gone(int e) { return e == ENOENT || e == ENODEV; }

/* 0 when `fd` is a regular file, else why it is not read: EISDIR, ENXIO (FIFO, socket, device). */
static int regular_or_errno(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return errno;
    if (S_ISREG(st.st_mode))
        return 0;
    return S_ISDIR(st.st_mode) ? EISDIR : ENXIO;
}

static int openat2_missing;

/* "leaf/file" below a v1 secondary hierarchy's parent fd.  That leaf name was listed in the
 * primary hierarchy only, so no symlink may be followed anywhere on the way (openat2
 * RESOLVE_NO_SYMLINKS, Linux 5.6); older kernels open the leaf directory first. */
static int open_leaf_file(int dfd, const char *rel, size_t leaflen)
{
    if (!openat2_missing) {
        struct pn_open_how how = {FILE_FLAGS & ~O_NOFOLLOW, 0, PN_RESOLVE_NO_SYMLINKS | PN_RESOLVE_BENEATH};
        int fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS)
            return fd;
        openat2_missing = 1;
    }
    char leaf[PN_CG_NAMELEN + 512];
    memcpy(leaf, rel, leaflen);
    leaf[leaflen] = '\0';
    int d = openat(dfd, leaf, DIR_FLAGS);
    if (d < 0)
        return -1;
    int fd = openat(d, rel + leaflen + 1, FILE_FLAGS);
    int e = errno;
    close(d);
    errno = e;
    return fd;
}

/* `fds`: the cgroup's directory fd per hierarchy.  `leaf` (containers): `fds` are instead the
 * parent's fds and files are opened as "name/file" below them, which saves opening and closing
 * the leaf directory (two syscalls per hierarchy per container).  In the primary hierarchy
 * `name` came from a getdents64 entry typed DT_DIR (not a symlink; O_NOFOLLOW guards the file);
 * in the others open_leaf_file() refuses every symlink. */
static int read_cgroup(struct walker *w, const int *fds, int parentfd, const char *name, int leaf,
                       struct pn_cgrec *rec)
{
    int maybe_gone = 0;
    char sub[PN_CG_NAMELEN + 512];
    size_t nl = leaf ? strlen(name) : 0;
    if (leaf) {
        if (nl + PN_CG_NAMELEN + 2 > sizeof sub)
            return VANISHED;
        memcpy(sub, name, nl);
        sub[nl++] = '/';
    }
    for (int i = 0; i < w->nfiles; i++) {
        const struct pn_cgfile *f = &w->files[i];
        int dfd = fds[f->base];
        if (dfd < 0)
            continue;
        const char *fname = f->name;
        if (leaf) {
            strcpy(sub + nl, f->name);
            fname = sub;
        }
        uint32_t mask = 0;
        if (f->kind == PN_CG_INT)
            mask = 1u << f->slot;
        else
            for (int q = 0; q < f->nkeys; q++)
                mask |= 1u << f->kslot[q];
        int fd;
        if (leaf && f->base != 0)
            fd = open_leaf_file(dfd, fname, nl - 1);
        else
            fd = openat(dfd, fname, FILE_FLAGS);
        ssize_t n = -1;
        int err = fd < 0 ? errno : regular_or_errno(fd);
        if (fd >= 0) {
            /* one read(): seq_file/kernfs and tmpfs hand over the whole file when it fits */
            if (!err && (n = read(fd, w->buf, RDBUF)) < 0)
                err = errno;
            close(fd);
        }
        if (err && leaf && f->base != 0 && (err == ENOENT || err == ENOTDIR || err == ELOOP)) {
            continue; /* the leaf is not (a directory) in this hierarchy: as if not mounted */
        }
        if (err) {
            if (err == ENODEV)
                return VANISHED;
            if (err == ENOENT) {
                if (f->base == 0)
                    maybe_gone = 1;
            } else {
                rec->bad |= mask;
            }
            continue;
        }
        if (f->kind == PN_CG_INT) {
            int64_t v;
            if (pn_cg_parse_int(w->buf, n, &v) == 0) {
                rec->slots[f->slot] = v;
                rec->have |= mask;
            } else {
                rec->bad |= mask;
            }
        } else if (pn_cg_parse_keyed(w->buf, n, f, rec->slots, &rec->have) < 0) {
            rec->bad |= mask;
        }
    }
    if (maybe_gone && parentfd >= 0) {
        /* a missing file may mean a controller is off; a missing directory means the cgroup is gone */
        struct stat st;
        if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && gone(errno))
            return VANISHED;
    }
    return 0;
}

/* ---- directories -------------------------------------------------------- */

struct names {
    char *buf;
    long len, cap;
    long *offs;
    long n, capn;
    char **ptrs; /* sorted names, set once listing is complete */
};

static int names_add(struct names *nm, const char *s)
{
    long l = (long)strlen(s) + 1;
    if (nm->len + l > nm->cap) {
        long cap = nm->cap ? nm->cap * 2 : 16384;
        while (cap < nm->len + l)
            cap *= 2;
        char *p = realloc(nm->buf, cap);
        if (!p)
            return -ENOMEM;
        nm->buf = p;
        nm->cap = cap;
    }
    if (nm->n == nm->capn) {
        long cap = nm->capn ? nm->capn * 2 : 256;
        long *p = realloc(nm->offs, cap * sizeof(long));
        if (!p)
            return -ENOMEM;
        nm->offs = p;
        nm->capn = cap;
    }
    memcpy(nm->buf + nm->len, s, l);
    nm->offs[nm->n++] = nm->len;
    nm->len += l;
    return 0;
}

static void names_free(struct names *nm)
{
    free(nm->buf);
    free(nm->offs);
    free(nm->ptrs);
}

/* Names are sorted as pointers once the buffer stops growing, so the comparator needs
 * no global state: walks in several threads (the GIL is released) never share anything. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted subdirectory names (directory order is never trusted). VANISHED on any listing error. */
static int list_subdirs(int fd, struct names *nm)
{
    char dbuf[32768];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, dbuf, sizeof dbuf);
        if (n < 0)
            return VANISHED;
        if (n == 0)
            break;
        for (long off = 0; off < n;) {
            struct dent64 *d = (struct dent64 *)(dbuf + off);
            off += d->d_reclen;
            if (d->d_name[0] == '.' && (d->d_name[1] == 0 || (d->d_name[1] == '.' && d->d_name[2] == 0)))
                continue;
            int isdir = d->d_type == DT_DIR;
            if (d->d_type == DT_UNKNOWN) {
                struct stat st;
                isdir = fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
            }
            if (isdir && names_add(nm, d->d_name) < 0)
                return -ENOMEM;
        }
    }
    nm->ptrs = malloc((nm->n ? nm->n : 1) * sizeof(char *));
    if (!nm->ptrs)
        return -ENOMEM;
    for (long i = 0; i < nm->n; i++)
        nm->ptrs[i] = nm->buf + nm->offs[i];
    qsort(nm->ptrs, nm->n, sizeof(char *), cmp_str);
    return 0;
}

/* Every fd array of the walk has PN_CG_MAXBASES slots: each starts at -1 (unset_all), holds an fd
 * only once this walk opened it, and close_all() closes those and sets them back to -1, so no
 * slot is ever closed twice nor a number that belongs to someone else (stdout, a socket). */
static void unset_all(int *fds)
{
    for (int i = 0; i < PN_CG_MAXBASES; i++)
        fds[i] = -1;
}

static void close_all(int *fds)
{
    for (int i = 0; i < PN_CG_MAXBASES; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

/* fds of `name` below each parent (-1 where absent); VANISHED, with every slot -1, when it cannot
 * be opened in the primary hierarchy */
static int open_children(struct walker *w, const int *parents, const char *name, int *fds)
{
    unset_all(fds);
    for (int i = 0; i < w->nbases; i++) {
        if (parents[i] >= 0)
            fds[i] = openat(parents[i], name, DIR_FLAGS);
        if (i == 0 && fds[0] < 0) {
            fds[0] = -1;
            return VANISHED;
        }
        if (fds[i] < 0)
            fds[i] = -1;
    }
    return 0;
}

static int emit(struct walker *w, struct pn_cgrec *tmpl, int plen)
{
    struct pn_cgrec *rec = new_rec(w->out);
    if (!rec)
        return -ENOMEM;
    int32_t po, pl;
    if (put_str(w->out, w->path, plen, &po, &pl) < 0)
        return -ENOMEM;
    tmpl->path_off = po;
    tmpl->path_len = pl;
    *rec = *tmpl;
    w->out->nrecs++;
    return 0;
}

static int set_path(struct walker *w, int prefix, const char *name)
{
    size_t l = strlen(name);
    if (prefix + l + 2 >= sizeof w->path)
        return -ENAMETOOLONG;
    memcpy(w->path + prefix, name, l);
    w->path[prefix + l] = '\0';
    return (int)(prefix + l);
}

static int walk_pod(struct walker *w, const int *fds, int qos, int32_t uo, int32_t ul, int prefix);

/* List the sorted subdirectories of `fd` into `nm` (freed on failure), then report the
 * directory being entered (w->path cut at `prefix`) to the hook. */
static int enter_dir(struct walker *w, int fd, int prefix, struct names *nm)
{
    int rc = list_subdirs(fd, nm);
    if (rc) {
        names_free(nm);
        return rc;
    }
    if (w->hook) {
        w->path[prefix] = '\0';
        w->hook(w->hookctx, w->path);
    }
    return 0;
}

/* depth 0: kubepods children (tiers, Guaranteed pods); depth 1: pods of tier `tier` */
static int walk_level(struct walker *w, const int *fds, int depth, int tier, int prefix)
{
    struct names nm = {0};
    int rc = enter_dir(w, fds[0], prefix, &nm);
    if (rc)
        return rc;
    for (long i = 0; i < nm.n && rc >= 0; i++) {
        const char *name = nm.ptrs[i];
        size_t n = strlen(name);
        int qos = depth == 0 ? pn_cg_tier_of(name, n, w->systemd) : -1;
        size_t uoff = 0, ulen = 0;
        if (qos < 0 && !pn_cg_pod_uid_of(name, n, w->systemd, depth == 0 ? PN_CG_NOQOS : tier, &uoff, &ulen))
            continue;
        int child[PN_CG_MAXBASES];
        if (open_children(w, fds, name, child))
            continue; /* nothing was left open */
        int plen = set_path(w, prefix, name);
        if (plen < 0) {
            close_all(child);
            rc = plen;
            break;
        }
        struct pn_cgrec rec;
        memset(&rec, 0, sizeof rec);
        rec.uid_off = rec.cid_off = -1;
        int r = read_cgroup(w, child, fds[0], name, 0, &rec);
        if (r == 0) {
            if (qos >= 0) {
                rec.kind = PN_CG_TIER;
                rec.qos = (int8_t)qos;
                rc = emit(w, &rec, plen);
                if (rc >= 0) {
                    w->path[plen] = '/';
                    r = walk_level(w, child, 1, qos, plen + 1);
                    rc = r < 0 ? r : rc;
                }
            } else {
                char uid[256];
                int pq = depth == 0 ? PN_CG_GUARANTEED : tier;
                if (ulen >= sizeof uid)
                    ulen = sizeof uid - 1;
                for (size_t k = 0; k < ulen; k++)
                    uid[k] = (w->systemd && name[uoff + k] == '_') ? '-' : name[uoff + k];
                rec.kind = PN_CG_POD;
                rec.qos = (int8_t)pq;
                rc = put_str(w->out, uid, (long)ulen, &rec.uid_off, &rec.uid_len);
                if (rc >= 0)
                    rc = emit(w, &rec, plen);
                if (rc >= 0) {
                    w->path[plen] = '/';
                    r = walk_pod(w, child, pq, rec.uid_off, rec.uid_len, plen + 1);
                    rc = r < 0 ? r : rc;
                }
            }
        }
        close_all(child);
    }
    names_free(&nm);
    return rc < 0 ? rc : 0;
}

static int walk_pod(struct walker *w, const int *fds, int qos, int32_t uo, int32_t ul, int prefix)
{
    struct names nm = {0};
    int rc = enter_dir(w, fds[0], prefix, &nm);
    if (rc)
        return rc;
    for (long i = 0; i < nm.n && rc >= 0; i++) {
        const char *name = nm.ptrs[i];
        size_t n = strlen(name);
        size_t coff = 0, clen = 0;
        int rt = pn_cg_container_of(name, n, w->systemd, &coff, &clen);
        if (rt < 0)
            continue;
        /* read "leaf/file" through the pod's fds: no leaf directory to open and close */
        struct pn_cgrec rec;
        memset(&rec, 0, sizeof rec);
        int r = read_cgroup(w, fds, fds[0], name, 1, &rec);
        if (r)
            continue;
        int plen = set_path(w, prefix, name);
        if (plen < 0) {
            rc = plen; /* through names_free below */
            break;
        }
        rec.kind = PN_CG_CONTAINER;
        rec.qos = (int8_t)qos;
        rec.runtime = (int8_t)rt;
        rec.uid_off = uo;
        rec.uid_len = ul;
        rc = put_str(w->out, name + coff, (long)clen, &rec.cid_off, &rec.cid_len);
        if (rc >= 0)
            rc = emit(w, &rec, plen);
    }
    names_free(&nm);
    return rc < 0 ? rc : 0;
}

/* Open a root-relative path one component at a time, following no symlink and no "..". */
static int open_base(int rootfd, const char *path)
{
    int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    const char *p = path;
    char comp[256];
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t l = (size_t)(e - p);
        if (l == 0)
            break;
        if (l >= sizeof comp) {
            close(fd);
            return -ENAMETOOLONG;
        }
        memcpy(comp, p, l);
        comp[l] = '\0';
        p = e;
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            close(fd);
            return -EINVAL;
        }
        int nfd = openat(fd, comp, DIR_FLAGS);
        int err = errno;
        close(fd);
        if (nfd < 0)
            return -err;
        fd = nfd;
    }
    return fd;
}

int pn_cgwalk(int rootfd, const char *const *bases, int nbases, int systemd,
              const struct pn_cgfile *files, int nfiles, int full,
              pn_cg_hook hook, void *hookctx, struct pn_cgresult *out)
{
    if (nbases < 1 || nbases > PN_CG_MAXBASES || nfiles < 0 || nfiles > PN_CG_MAXFILES)
        return -EINVAL;
    struct walker *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->systemd = systemd;
    w->nbases = nbases;
    w->files = files;
    w->nfiles = nfiles;
    w->hook = hook;
    w->hookctx = hookctx;
    w->out = out;
    int fds[PN_CG_MAXBASES];
    int rc = 0;
    unset_all(fds);
    for (int i = 0; i < nbases && rc == 0; i++) {
        if (!bases[i][0])
            continue; /* hierarchy not mounted */
        int fd = open_base(rootfd, bases[i]);
        if (fd >= 0)
            fds[i] = fd;
        else if (i == 0)
            rc = fd; /* the primary hierarchy is required */
    }
    if (rc == 0) {
        struct pn_cgrec rec;
        memset(&rec, 0, sizeof rec);
        rec.uid_off = rec.cid_off = -1;
        rec.kind = PN_CG_BASE;
        rec.qos = PN_CG_NOQOS;
        int r = read_cgroup(w, fds, -1, "", 0, &rec);
        if (r == VANISHED)
            rc = -ENODEV;
        else
            rc = emit(w, &rec, 0);
        if (rc == 0 && full) {
            r = walk_level(w, fds, 0, PN_CG_NOQOS, 0);
            if (r < 0)
                rc = r;
        }
    }
    close_all(fds);
    free(w);
    return rc;
}
