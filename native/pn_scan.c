/* pn_scan.c -- the whole sysfs topology of a regular machine in one C call.
 *
 * Discovery's general path (pynuma/discover/) handles every odd tree and
 * says what was odd in warnings.  This scanner covers the regular case only:
 * the same files, the same rules, no Python work between reads.  Whenever it
 * meets anything the general path would warn about, reject or treat
 * specially, it stops with PN_SCAN_IRREGULAR and the caller runs the
 * general path instead; so when it does answer, the answer is the general
 * path's.  Twin: scan() in pynuma/_pure_fsread.py.
 *
 * The answer is a stream of int64 values (see pn.h for the layout); bitmaps
 * are inlined as `W` words, W being wide enough for every CPU set read (the
 * groups, caches and nodes are subsets of the reported CPUs).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pn.h"

#define IRREGULAR PN_SCAN_IRREGULAR
#define CPU_DIR "sys/devices/system/cpu"
#define NODE_DIR "sys/devices/system/node"
#define GLOBAL_HP "sys/kernel/mm/hugepages"

typedef struct {
    int rootfd;
    size_t W;                 /* words per bitmap */
    const uint64_t *reported;
    pn_scan_out *out;
    pn_buf text;              /* scratch: the texts of the current batch */
    int cpufd;                /* CPU_DIR, opened once: the per-CPU files are looked up from it (or -1) */
    char path[4096];
    size_t plen;
    uint64_t *mems;           /* the allowed memory nodes the scan resolved itself (NULL: all) */
    size_t mems_words;
} scan_ctx;

/* ---- output ------------------------------------------------------------- */

static int emit(scan_ctx *c, int64_t v)
{
    pn_scan_out *o = c->out;
    if (o->len == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 256;
        int64_t *nv = realloc(o->values, nc * sizeof *nv);
        if (!nv) return -ENOMEM;
        o->values = nv;
        o->cap = nc;
    }
    o->values[o->len++] = v;
    return 0;
}

static int emit_bits(scan_ctx *c, const uint64_t *w)
{
    for (size_t i = 0; i < c->W; i++) {
        int rc = emit(c, (int64_t)w[i]);
        if (rc) return rc;
    }
    return 0;
}

#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

static int note(scan_ctx *c, char kind, const char *path)
{
    if (!c->out->record) return 0;
    while (*path == '/') path++; /* recorded as "/" + the path from the root */
    pn_buf *b = &c->out->recorded;
    size_t n = strlen(path);
    TRY(pn_buf_reserve(b, n + 3));
    b->data[b->len++] = kind;
    b->data[b->len++] = '/';
    memcpy(b->data + b->len, path, n + 1);
    b->len += n + 1;
    return 0;
}

/* ---- reading ------------------------------------------------------------- */

/* A text read into c->text: an offset, not a pointer (later reads may move the buffer). */
typedef struct {
    size_t off;
    ssize_t len; /* -errno when unreadable */
} text_t;

/* Read c->path (appending to c->text; pointers are fixed up by the caller
 * through offsets, so read a batch first, then look). */
/* The CPU directory's fd when `path` is below it (its files are looked up from there), else -1. */
static int cpu_dir_of(const scan_ctx *c, const char *path)
{
    return c->cpufd >= 0 && strncmp(path, CPU_DIR "/", sizeof CPU_DIR) == 0 ? c->cpufd : -1;
}

static int read_path(scan_ctx *c, size_t limit, ssize_t *len, size_t *off)
{
    TRY(note(c, 'F', c->path));
    return pn_read_one_near(c->rootfd, cpu_dir_of(c, c->path), sizeof CPU_DIR - 1, c->path, limit, &c->text, len,
                            off);
}

static const char *text_ptr(scan_ctx *c, text_t t) { return c->text.data + t.off; }

static int pathf(scan_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pathf(scan_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->path, sizeof c->path, fmt, ap);
    va_end(ap);
    return (n < 0 || (size_t)n >= sizeof c->path) ? -ENAMETOOLONG : 0;
}

/* Paths built piece by piece (the hot ones: cheaper than vsnprintf). */
static void path_start(scan_ctx *c) { c->plen = 0; }

static void path_s(scan_ctx *c, const char *piece)
{
    size_t n = strlen(piece);
    if (c->plen + n < sizeof c->path) memcpy(c->path + c->plen, piece, n);
    c->plen += n;
}

static void path_n(scan_ctx *c, uint64_t v)
{
    char digits[24];
    size_t n = 0;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (size_t i = 0; i < n; i++)
        if (c->plen + i < sizeof c->path) c->path[c->plen + i] = digits[n - 1 - i];
    c->plen += n;
}

static int path_end(scan_ctx *c)
{
    if (c->plen >= sizeof c->path) return -ENAMETOOLONG;
    c->path[c->plen] = '\0';
    return 0;
}

/* prefix + n + middle + name, e.g. "sys/devices/system/cpu/cpu" 3 "/topology/" "core_id" */
static int path4(scan_ctx *c, const char *prefix, uint64_t n, const char *middle, const char *name)
{
    path_start(c);
    path_s(c, prefix);
    path_n(c, n);
    path_s(c, middle);
    path_s(c, name);
    return path_end(c);
}

static int cache_path(scan_ctx *c, size_t cpu, int64_t index, const char *name)
{
    path_start(c);
    path_s(c, CPU_DIR "/cpu");
    path_n(c, cpu);
    path_s(c, "/cache/index");
    path_n(c, (uint64_t)index);
    path_s(c, "/");
    path_s(c, name);
    return path_end(c);
}

static int pool_path(scan_ctx *c, const char *dir, int64_t size, const char *name)
{
    path_start(c);
    path_s(c, dir);
    path_s(c, "/hugepages-");
    path_n(c, (uint64_t)size);
    path_s(c, "kB/");
    path_s(c, name);
    return path_end(c);
}

/* Names in directory c->path into *names (NUL-separated), count in *n; a
 * missing directory is an empty one (as FsRoot.listdir). */
static int list_path(scan_ctx *c, pn_buf *names, size_t *n)
{
    TRY(note(c, 'D', c->path));
    names->len = 0;
    ssize_t got = pn_list_at(c->rootfd, c->path, names);
    if (got == -ENOMEM) return -ENOMEM;
    *n = got < 0 ? 0 : (size_t)got;
    if (got < 0) names->len = 0;
    return 0;
}

/* ---- strict parsers (a subset of pynuma/parse.py's grammar) ----------------- */

#define TX(t) text_ptr(c, (t)), (t).len

static int strip_char(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\0'; }

static void strip(const char **s, size_t *n)
{
    while (*n && strip_char(**s)) { (*s)++; (*n)--; }
    while (*n && strip_char((*s)[*n - 1])) (*n)--;
}

/* Exactly n ASCII digits (1..max of them) as a number; else irregular. */
static int digits(const char *s, size_t n, size_t max, int64_t *v)
{
    if (!n || n > max) return IRREGULAR;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return IRREGULAR;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* parse_int: optional sign, ASCII digits (at most 18). */
static int p_int(const char *s, ssize_t len, int64_t *v)
{
    if (len < 0) return IRREGULAR;
    size_t n = (size_t)len;
    strip(&s, &n);
    int neg = 0;
    if (n && (*s == '-' || *s == '+')) { neg = *s == '-'; s++; n--; }
    TRY(digits(s, n, 18, v));
    if (neg) *v = -*v;
    return 0;
}

/* An optional id: missing -> PN_SCAN_NONE, bad -> irregular (the general path warns). */
static int p_opt_int(const char *s, ssize_t len, int64_t *v)
{
    if (len < 0) { *v = PN_SCAN_NONE; return 0; }
    return p_int(s, len, v);
}

/* A cpumask (list=0) or cpulist (list=1) into W words, ANDed with `limit` (may be NULL). */
static int p_bits(scan_ctx *c, const char *s, ssize_t len, int list, const uint64_t *limit, uint64_t *out)
{
    uint64_t *w = NULL;
    size_t nw = 0;
    pn_parse_err err;
    if (len < 0) return IRREGULAR;
    int rc = list ? pn_cpulist_parse(s, (size_t)len, &w, &nw, &err)
                  : pn_cpumask_parse(s, (size_t)len, &w, &nw, &err);
    if (rc == -EINVAL) return IRREGULAR;
    if (rc) return rc;
    for (size_t i = 0; i < c->W; i++) out[i] = (i < nw ? w[i] : 0) & (limit ? limit[i] : ~(uint64_t)0);
    free(w);
    return 0;
}

/* A cache size as discovery takes it: missing, or empty once " \n\0" are
 * stripped -> none; else parse_cache_size (digits, optional K/M/G in any case). */
static int p_cache_size(const char *s, ssize_t len, int64_t *v)
{
    *v = PN_SCAN_NONE;
    if (len < 0) return 0;
    size_t n = (size_t)len, k;
    for (k = 0; k < n; k++)
        if (s[k] != ' ' && s[k] != '\n' && s[k] != '\0') break;
    if (k == n) return 0;
    strip(&s, &n);
    if (!n) return IRREGULAR;
    int64_t unit = 1;
    char last = s[n - 1];
    if ((last >= 'a' && last <= 'z') || (last >= 'A' && last <= 'Z')) {
        switch (last) {
        case 'k': case 'K': unit = 1 << 10; break;
        case 'm': case 'M': unit = 1 << 20; break;
        case 'g': case 'G': unit = 1 << 30; break;
        default: return IRREGULAR;
        }
        n--;
    }
    TRY(digits(s, n, 12, v));
    *v *= unit;
    return 0;
}

/* parse_cache_type: 0 Data, 1 Instruction, 2 Unified (missing -> Unified). */
static int p_cache_type(const char *s, ssize_t len, int64_t *v)
{
    static const char *const names[] = { "data", "instruction", "unified" };
    if (len < 0) { *v = 2; return 0; }
    size_t n = (size_t)len;
    strip(&s, &n);
    for (int k = 0; k < 3; k++)
        if (n == strlen(names[k]) && strncasecmp(s, names[k], n) == 0) { *v = k; return 0; }
    return IRREGULAR;
}

/* "<prefix><digits>" with no leading zero -> id, else -1 (parse_prefixed_id). */
static int64_t prefixed_id(const char *name, const char *prefix)
{
    size_t pl = strlen(prefix), n = strlen(name);
    if (n <= pl || strncmp(name, prefix, pl) != 0) return -1;
    const char *d = name + pl;
    size_t dl = n - pl;
    int64_t x;
    if (dl > 1 && d[0] == '0') return -1;
    return digits(d, dl, 9, &x) ? -1 : x;
}

/* "hugepages-<digits>kB" -> size in kB, else -1 (parse_hugepage_dirname). */
static int64_t hugepage_size(const char *name)
{
    size_t n = strlen(name);
    if (n < 13 || strncmp(name, "hugepages-", 10) != 0 || strcmp(name + n - 2, "kB") != 0) return -1;
    int64_t x;
    return digits(name + 10, n - 12, 15, &x) ? -1 : x;
}

/* One "<key> <digits> kB" meminfo value (key at the text's start or after a
 * space or newline); *v = -1 when the key is absent. */
static int meminfo_value(const char *s, size_t len, const char *key, int64_t *v)
{
    const char *end = s + len, *at = s;
    size_t kl = strlen(key);
    *v = -1;
    for (;;) {
        at = memmem(at, (size_t)(end - at), key, kl);
        if (!at) return 0;
        if (at == s || at[-1] == ' ' || at[-1] == '\n') break;
        at++;
    }
    const char *p = at + kl, *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    const char *d = p;
    while (p < eol && *p >= '0' && *p <= '9') p++;
    size_t dl = (size_t)(p - d);
    if (!dl || dl > 15 || p == eol || (*p != ' ' && *p != '\t')) return IRREGULAR;
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    if (eol - p < 2 || p[0] != 'k' || p[1] != 'B') return IRREGULAR;
    p += 2;
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    if (p != eol) return IRREGULAR;
    int64_t x = 0;
    for (size_t i = 0; i < dl; i++) x = x * 10 + (d[i] - '0');
    *v = x * 1024;
    return 0;
}

/* parse_memory_totals: MemTotal required, a missing MemFree counts as 0. */
static int p_memory(const char *s, ssize_t len, int64_t *total, int64_t *free_)
{
    if (len < 0) return IRREGULAR;
    TRY(meminfo_value(s, (size_t)len, "MemTotal:", total));
    if (*total < 0) return IRREGULAR;
    TRY(meminfo_value(s, (size_t)len, "MemFree:", free_));
    if (*free_ < 0) *free_ = 0;
    return 0;
}

/* ---- bitmaps --------------------------------------------------------------- */

static int test_bit(const uint64_t *w, size_t bit) { return (int)((w[bit / 64] >> (bit % 64)) & 1); }
static void set_bit(uint64_t *w, size_t bit) { w[bit / 64] |= (uint64_t)1 << (bit % 64); }

/* Growable arrays of words / int64s. */
typedef struct { uint64_t *w; size_t n, cap; } wvec;

static uint64_t *wvec_add(wvec *v, size_t count)
{
    if (v->n + count > v->cap) {
        size_t nc = v->cap ? v->cap : 64;
        while (nc < v->n + count) nc *= 2;
        uint64_t *nw = realloc(v->w, nc * sizeof *nw);
        if (!nw) return NULL;
        v->w = nw;
        v->cap = nc;
    }
    uint64_t *at = v->w + v->n;
    memset(at, 0, count * sizeof *at);
    v->n += count;
    return at;
}

/* ---- CPU topology ---------------------------------------------------------- */

enum { PR_CORE_CPUS, PR_THREAD_SIBLINGS, PR_PACKAGE_CPUS, PR_CORE_SIBLINGS, PR_PACKAGE_ID, PR_CORE_ID,
       PR_DIE_ID, PR_DIE_CPUS, PR_CLUSTER_ID, PR_CLUSTER_CPUS, PR_COUNT };
static const char *const probe_names[PR_COUNT] = {
    "core_cpus", "thread_siblings", "package_cpus", "core_siblings", "physical_package_id",
    "core_id", "die_id", "die_cpus", "cluster_id", "cluster_cpus",
};

typedef struct {
    size_t n;            /* reported CPUs */
    size_t *ids;         /* ascending */
    int64_t *core_id, *package, *die, *cluster, *core_index;
    uint64_t *core_mask; /* n * W: (mask & reported) | self */
    size_t ncores;
    uint64_t *members;   /* ncores * W */
    size_t npackages;
    int64_t *package_ids;
    wvec package_cpus;
} cpu_table;

static size_t index_of(const cpu_table *t, size_t cpu)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->ids[mid] < cpu) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Called once per group, lowest leader first, with the leader's file texts
 * (a length < 0 where a file could not be read) and the group's CPUs. */
typedef int (*group_fn)(scan_ctx *c, void *arg, size_t leader, const char *const *texts, const ssize_t *lens,
                        const uint64_t *group);

/* The groups of the reported CPUs, one read per group (pn_group_walk): the
 * lowest CPU's files are already read (`first`), the rest are read by the
 * walk and recorded here.  A leader's missing or bad mask is irregular. */
static int scan_groups(scan_ctx *c, const char *prefix, const char *suffix, const char *const *names, size_t nnames,
                       size_t mask_index, const text_t *first, group_fn visit, void *arg)
{
    size_t W = c->W;
    const char *tp[8];
    ssize_t tl[8];
    pn_walk_out w;
    memset(&w, 0, sizeof w);
    uint64_t *group = calloc(W, 8), *remaining = calloc(W, 8);
    int rc = 0;
    if (nnames > 8) return -EINVAL;
    if (!group || !remaining) { rc = -ENOMEM; goto done; }
    size_t cpu = pn_lowest_bit(c->reported, W);
    if ((rc = p_bits(c, TX(first[mask_index]), 0, c->reported, group))) goto done;
    set_bit(group, cpu);
    for (size_t k = 0; k < nnames; k++) {
        tp[k] = text_ptr(c, first[k]);
        tl[k] = first[k].len;
    }
    if ((rc = visit(c, arg, cpu, tp, tl, group))) goto done;
    for (size_t i = 0; i < W; i++) remaining[i] = c->reported[i] & ~group[i];
    int walked = pn_group_walk_near(c->rootfd, cpu_dir_of(c, prefix), sizeof CPU_DIR - 1, prefix, suffix, names,
                                    nnames, mask_index, c->reported, remaining, W, &w);
    for (size_t k = 0; k < w.count && !rc; k++) /* what the walk read, for the record */
        for (size_t f = 0; f < nnames && !rc; f++) {
            path_start(c);
            path_s(c, prefix);
            path_n(c, w.leaders[k]);
            path_s(c, suffix);
            path_s(c, names[f]);
            if (!(rc = path_end(c))) rc = note(c, 'F', c->path);
        }
    if (rc) goto done;
    if (walked) { rc = walked == -EAGAIN ? IRREGULAR : walked; goto done; }
    for (size_t k = 0; k < w.count && !rc; k++) {
        for (size_t f = 0; f < nnames; f++) {
            tl[f] = w.results[k * nnames + f];
            tp[f] = w.text.data + w.offsets[k * nnames + f];
        }
        rc = visit(c, arg, w.leaders[k], tp, tl, w.groups + k * W);
    }
done:
    free(group);
    free(remaining);
    free(w.leaders);
    free(w.results);
    free(w.offsets);
    free(w.groups);
    free(w.text.data);
    return rc;
}

/* A package/die/cluster group: its id for each member, and (packages) the group itself. */
typedef struct {
    cpu_table *t;
    int64_t *out;
    int64_t **ids;
    size_t *nids;
    wvec *bits;
} topo_groups;

static int visit_topology(scan_ctx *c, void *arg, size_t leader, const char *const *texts, const ssize_t *lens,
                          const uint64_t *group)
{
    topo_groups *g = arg;
    int64_t gid;
    TRY(p_opt_int(texts[0], lens[0], &gid));
    for (size_t wi = leader / 64; wi < c->W; wi++) /* members are reported CPUs: find each by id */
        for (uint64_t b = group[wi]; b; b &= b - 1)
            g->out[index_of(g->t, wi * 64 + (size_t)__builtin_ctzll(b))] = gid;
    if (!g->ids) return 0;
    int64_t *ni = realloc(*g->ids, (*g->nids + 1) * sizeof *ni);
    if (!ni) return -ENOMEM;
    *g->ids = ni;
    uint64_t *gw = wvec_add(g->bits, c->W);
    if (!gw) return -ENOMEM;
    ni[(*g->nids)++] = gid == PN_SCAN_NONE ? -1 : gid;
    memcpy(gw, group, c->W * 8);
    return 0;
}

/* The groups of one kind (id file, mask file): fills out[k] per CPU and, with
 * `ids`/`bits`, records each group (id, or -1). */
static int walk_groups(scan_ctx *c, cpu_table *t, const char *id_name, const char *mask_name, text_t first_id,
                       text_t first_mask, int64_t *out, int64_t **ids, size_t *nids, wvec *bits)
{
    const char *names[2] = { id_name, mask_name };
    text_t first[2] = { first_id, first_mask };
    topo_groups g = { t, out, ids, nids, bits };
    return scan_groups(c, CPU_DIR "/cpu", "/topology/", names, 2, 1, first, visit_topology, &g);
}

/* The probe: which file names this kernel has, read from the lowest CPU
 * (pr[k]: texts in c->text).  IRREGULAR when it has no topology files at all. */
static int probe_topology(scan_ctx *c, const cpu_table *t, text_t *pr)
{
    int any = 0;
    for (int k = 0; k < PR_COUNT; k++) {
        TRY(path4(c, CPU_DIR "/cpu", t->ids[0], "/topology/", probe_names[k]));
        TRY(read_path(c, 1 << 16, &pr[k].len, &pr[k].off));
        any |= pr[k].len >= 0;
    }
    return any ? 0 : IRREGULAR; /* no topology files: the general path's special case */
}

/* Core id and core mask of every CPU (the lowest one's from the probe), then
 * the cores: one per distinct (mask, core id), numbered in order of their
 * lowest CPU. */
static int scan_cores(scan_ctx *c, cpu_table *t, const text_t *pr, int core_name)
{
    size_t W = c->W;
    for (size_t i = 0; i < t->n; i++) {
        text_t idt = pr[PR_CORE_ID], maskt = pr[core_name];
        if (i) {
            TRY(path4(c, CPU_DIR "/cpu", t->ids[i], "/topology/", "core_id"));
            TRY(read_path(c, 1 << 16, &idt.len, &idt.off));
            TRY(path4(c, CPU_DIR "/cpu", t->ids[i], "/topology/", probe_names[core_name]));
            TRY(read_path(c, 1 << 16, &maskt.len, &maskt.off));
        }
        if (maskt.len < 0) return IRREGULAR; /* no core mask, or no topology directory */
        TRY(p_opt_int(TX(idt), &t->core_id[i]));
        uint64_t *m = t->core_mask + i * W;
        TRY(p_bits(c, TX(maskt), 0, c->reported, m));
        set_bit(m, t->ids[i]);
    }
    /* a CPU's earlier twin can only be one of the CPUs of its own mask */
    t->ncores = 0;
    for (size_t i = 0; i < t->n; i++) {
        const uint64_t *m = t->core_mask + i * W;
        int64_t found = -1;
        for (size_t wi = 0; wi < W && found < 0 && wi * 64 < t->ids[i]; wi++) {
            for (uint64_t bits = m[wi]; bits && found < 0; bits &= bits - 1) {
                size_t cpu = wi * 64 + (size_t)__builtin_ctzll(bits);
                if (cpu >= t->ids[i]) break;
                size_t j = index_of(t, cpu);
                if (j < t->n && t->ids[j] == cpu && t->core_id[j] == t->core_id[i]
                    && memcmp(t->core_mask + j * W, m, W * 8) == 0)
                    found = t->core_index[j];
            }
        }
        t->core_index[i] = found >= 0 ? found : (int64_t)t->ncores++;
    }
    t->members = calloc(t->ncores ? t->ncores * W : 1, 8);
    if (!t->members) return -ENOMEM;
    for (size_t i = 0; i < t->n; i++) set_bit(t->members + (size_t)t->core_index[i] * W, t->ids[i]);
    return 0;
}

enum { GROUP_PACKAGE, GROUP_DIE, GROUP_CLUSTER };

/* Packages, dies or clusters: one read per group (the first from the probe). */
static int scan_topology_groups(scan_ctx *c, cpu_table *t, const text_t *pr, int kind, int package_name)
{
    switch (kind) {
    case GROUP_PACKAGE:
        return walk_groups(c, t, "physical_package_id", probe_names[package_name], pr[PR_PACKAGE_ID],
                           pr[package_name], t->package, &t->package_ids, &t->npackages, &t->package_cpus);
    case GROUP_DIE:
        return walk_groups(c, t, "die_id", "die_cpus", pr[PR_DIE_ID], pr[PR_DIE_CPUS], t->die, NULL, NULL, NULL);
    default:
        return walk_groups(c, t, "cluster_id", "cluster_cpus", pr[PR_CLUSTER_ID], pr[PR_CLUSTER_CPUS], t->cluster,
                           NULL, NULL, NULL);
    }
}

static int emit_cpus(scan_ctx *c, const cpu_table *t)
{
    TRY(emit(c, (int64_t)t->n));
    for (size_t i = 0; i < t->n; i++) {
        TRY(emit(c, (int64_t)t->ids[i]));
        TRY(emit(c, t->package[i]));
        TRY(emit(c, t->die[i]));
        TRY(emit(c, t->cluster[i]));
        TRY(emit(c, t->core_id[i]));
        TRY(emit(c, t->core_index[i]));
    }
    TRY(emit(c, (int64_t)t->ncores));
    for (size_t k = 0; k < t->ncores; k++) TRY(emit_bits(c, t->members + k * c->W));
    TRY(emit(c, (int64_t)t->npackages));
    for (size_t k = 0; k < t->npackages; k++) {
        TRY(emit(c, t->package_ids[k]));
        TRY(emit_bits(c, t->package_cpus.w + k * c->W));
    }
    return 0;
}

/* ---- names of a directory, parsed --------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Ids of the entries of directory c->path named by `parse` (>= 0), ascending. */
static int list_ids(scan_ctx *c, int64_t (*parse)(const char *, const char *), const char *prefix,
                    int64_t **ids, size_t *n)
{
    pn_buf names = { 0 };
    size_t count;
    int rc = list_path(c, &names, &count);
    *ids = NULL;
    *n = 0;
    if (rc) { free(names.data); return rc; }
    *ids = malloc((count ? count : 1) * sizeof **ids);
    if (!*ids) { free(names.data); return -ENOMEM; }
    size_t pos = 0;
    for (size_t k = 0; k < count; k++) {
        const char *nm = names.data + pos;
        pos += strlen(nm) + 1;
        int64_t id = parse(nm, prefix);
        if (id >= 0) (*ids)[(*n)++] = id;
    }
    free(names.data);
    qsort(*ids, *n, sizeof **ids, cmp_i64);
    return 0;
}

static int64_t hugepage_size_p(const char *name, const char *unused) { (void)unused; return hugepage_size(name); }

/* ---- caches ------------------------------------------------------------------ */

static const char *const cache_first[] = { "size", "id", "shared_cpu_map", "level", "type" };

/* One cache instance: emitted as (level, type, size, id, CPUs). */
typedef struct {
    int64_t level, type, count;
} cache_index;

static int visit_cache(scan_ctx *c, void *arg, size_t leader, const char *const *texts, const ssize_t *lens,
                       const uint64_t *group)
{
    cache_index *ci = arg;
    int64_t size, id;
    (void)leader;
    TRY(p_cache_size(texts[0], lens[0], &size));
    TRY(p_opt_int(texts[1], lens[1], &id));
    TRY(emit(c, ci->level));
    TRY(emit(c, ci->type));
    TRY(emit(c, size));
    TRY(emit(c, id));
    TRY(emit_bits(c, group));
    ci->count++;
    return 0;
}

/* One cache index (indexN) of the reported CPUs: the lowest CPU's five files
 * (level and type included), then one read per instance; *count instances
 * are emitted. */
static int scan_cache_index(scan_ctx *c, size_t cpu0, int64_t index, int64_t *count)
{
    static const char *const instance_files[3] = { "size", "id", "shared_cpu_map" };
    text_t ft[5];
    for (int f = 0; f < 5; f++) {
        TRY(cache_path(c, cpu0, index, cache_first[f]));
        TRY(read_path(c, 1 << 16, &ft[f].len, &ft[f].off));
    }
    cache_index ci = { 0, 0, 0 };
    char suffix[48];
    TRY(p_int(TX(ft[3]), &ci.level));
    TRY(p_cache_type(TX(ft[4]), &ci.type));
    snprintf(suffix, sizeof suffix, "/cache/index%lld/", (long long)index);
    TRY(scan_groups(c, CPU_DIR "/cpu", suffix, instance_files, 3, 2, ft, visit_cache, &ci));
    *count = ci.count;
    return 0;
}

/* ---- NUMA nodes, hugepages, distances --------------------------------------------- */

/* The pools under directory `dir` (sizes ascending): size, total, free, surplus, reserved. */
static int scan_pools(scan_ctx *c, const char *dir, int machine_wide)
{
    static const char *const files[] = { "nr_hugepages", "free_hugepages", "surplus_hugepages", "resv_hugepages" };
    int64_t *sizes = NULL;
    size_t n = 0;
    int nf = machine_wide ? 4 : 3;
    TRY(pathf(c, "%s", dir));
    TRY(list_ids(c, hugepage_size_p, NULL, &sizes, &n));
    int rc = emit(c, (int64_t)n);
    for (size_t k = 0; k < n && !rc; k++) {
        int64_t v[4] = { 0, 0, 0, PN_SCAN_NONE };
        for (int f = 0; f < nf && !rc; f++) {
            text_t t;
            if ((rc = pool_path(c, dir, sizes[k], files[f]))) break;
            if ((rc = read_path(c, 1 << 16, &t.len, &t.off))) break;
            if (t.len < 0) {
                if (f == 0) rc = IRREGULAR; /* no total: the general path warns */
                else v[f] = 0;
                continue;
            }
            rc = p_int(TX(t), &v[f]);
        }
        if (!rc) rc = emit(c, sizes[k]);
        for (int f = 0; f < 4 && !rc; f++) rc = emit(c, v[f]);
    }
    free(sizes);
    return rc;
}

static int scan_nodes(scan_ctx *c, const uint64_t *mems, size_t mems_words)
{
    size_t W = c->W;
    int64_t *all = NULL, *ids = NULL;
    size_t nall = 0, n = 0;
    uint64_t *cpus = calloc(W, 8);
    int rc;
    if (!cpus) return -ENOMEM;
    if ((rc = pathf(c, NODE_DIR)) || (rc = list_ids(c, prefixed_id, "node", &all, &nall))) goto done;
    if (!nall) {
        /* no node directories: one node 0 with every reported CPU, /proc/meminfo memory */
        text_t t;
        int64_t total = 0, free_ = 0;
        if ((rc = pathf(c, "proc/meminfo")) || (rc = read_path(c, 1 << 16, &t.len, &t.off))) goto done;
        if (t.len >= 0 && (rc = p_memory(TX(t), &total, &free_))) goto done;
        if ((rc = emit(c, 0)) || (rc = emit(c, 1)) || (rc = emit(c, 0)) || (rc = emit(c, total))
            || (rc = emit(c, free_)) || (rc = emit_bits(c, c->reported)) || (rc = scan_pools(c, GLOBAL_HP, 1)))
            goto done;
        if (!(rc = emit(c, 0))) rc = emit(c, 0); /* no distances, no SLIT to consult */
        goto done;
    }
    ids = malloc(nall * sizeof *ids);
    if (!ids) { rc = -ENOMEM; goto done; }
    for (size_t k = 0; k < nall; k++) {
        uint64_t id = (uint64_t)all[k];
        if (!mems || (id / 64 < mems_words && test_bit(mems, id))) ids[n++] = all[k];
    }
    if ((rc = emit(c, 1)) || (rc = emit(c, (int64_t)n))) goto done;
    for (size_t k = 0; k < n; k++) {
        text_t cl, mi;
        if ((rc = path4(c, NODE_DIR "/node", (uint64_t)ids[k], "/", "cpulist"))
            || (rc = read_path(c, 1 << 16, &cl.len, &cl.off)))
            goto done;
        int list = 1;
        if (cl.len < 0) {
            list = 0;
            if ((rc = path4(c, NODE_DIR "/node", (uint64_t)ids[k], "/", "cpumap"))
                || (rc = read_path(c, 1 << 16, &cl.len, &cl.off)))
                goto done;
        }
        if (cl.len < 0) memset(cpus, 0, W * 8);
        else if ((rc = p_bits(c, TX(cl), list, c->reported, cpus))) goto done;
        if ((rc = path4(c, NODE_DIR "/node", (uint64_t)ids[k], "/", "meminfo"))
            || (rc = read_path(c, 1 << 16, &mi.len, &mi.off)))
            goto done;
        int64_t total, free_;
        if ((rc = p_memory(TX(mi), &total, &free_))) goto done;
        char dir[64];
        snprintf(dir, sizeof dir, NODE_DIR "/node%lld/hugepages", (long long)ids[k]);
        if ((rc = emit(c, ids[k])) || (rc = emit(c, total)) || (rc = emit(c, free_)) || (rc = emit_bits(c, cpus))
            || (rc = scan_pools(c, dir, 0)))
            goto done;
    }
    /* distances between the reported nodes from the sysfs rows; whether a SLIT exists
     * (Python reads it: ACPI tables are parsed, validated and mapped in pynuma.acpi) */
    if (n < 2) {
        if (!(rc = emit(c, 0))) rc = emit(c, 0);
        goto done;
    }
    if ((rc = pathf(c, "sys/firmware/acpi/tables/SLIT"))) goto done;
    int slit = pn_kind_at(c->rootfd, c->path) != 0;
    size_t rows_at = c->out->len, missing = 0;
    if ((rc = emit(c, (int64_t)n))) goto done;
    for (size_t k = 0; k < n && !rc; k++) {
        text_t t;
        if ((rc = path4(c, NODE_DIR "/node", (uint64_t)ids[k], "/", "distance"))
            || (rc = read_path(c, 1 << 16, &t.len, &t.off)))
            goto done;
        if (t.len < 0) { missing++; continue; }
        /* a row: distances to every node directory by position; keep the reported columns */
        const char *s = text_ptr(c, t);
        size_t len = (size_t)t.len;
        strip(&s, &len);
        int64_t *row = malloc((len / 2 + 2) * sizeof *row);
        size_t cols = 0, p = 0;
        if (!row) { rc = -ENOMEM; goto done; }
        while (p < len && !rc) {
            while (p < len && (s[p] == ' ' || s[p] == '\t')) p++;
            size_t b = p;
            while (p < len && s[p] >= '0' && s[p] <= '9') p++;
            if (p == b || p - b > 15 || (p < len && s[p] != ' ' && s[p] != '\t')) { rc = IRREGULAR; break; }
            int64_t v = 0;
            for (size_t i = b; i < p; i++) v = v * 10 + (s[i] - '0');
            row[cols++] = v;
        }
        if (!rc && cols != nall) rc = IRREGULAR;
        size_t col = 0;
        for (size_t a = 0; a < nall && !rc; a++)
            if (col < n && all[a] == ids[col]) { rc = emit(c, row[a]); col++; }
        free(row);
    }
    if (!rc && missing) {
        if (missing < n) rc = IRREGULAR; /* some rows only: the general path warns */
        else { c->out->len = rows_at; rc = emit(c, 0); }
    }
    if (!rc) rc = emit(c, slit);
done:
    free(all);
    free(ids);
    free(cpus);
    return rc;
}

/* ---- the whole scan ------------------------------------------------------------ */

static int dir_has_entries(scan_ctx *c, const char *dir, int *has)
{
    pn_buf names = { 0 };
    size_t n = 0;
    TRY(pathf(c, "%s", dir));
    int rc = list_path(c, &names, &n);
    free(names.data);
    *has = n > 0;
    return rc;
}

/* Online CPUs without cpu/online: each cpuN directory is online unless its
 * online file says 0 (a missing or empty file is online; anything else is
 * for the general path to reject).  *listed gets every cpuN. */
static int online_from_dirs(scan_ctx *c, uint64_t **online, size_t *ow, uint64_t **listed, size_t *lw)
{
    int64_t *ids = NULL;
    size_t n = 0;
    TRY(pathf(c, CPU_DIR));
    TRY(list_ids(c, prefixed_id, "cpu", &ids, &n));
    size_t w = n ? (size_t)ids[n - 1] / 64 + 1 : 1;
    int rc = 0;
    *online = calloc(w, 8);
    *listed = calloc(w, 8);
    *ow = *lw = w;
    if (!*online || !*listed) rc = -ENOMEM;
    for (size_t k = 0; k < n && !rc; k++) {
        text_t t;
        set_bit(*listed, (size_t)ids[k]);
        if ((rc = path4(c, CPU_DIR "/cpu", (uint64_t)ids[k], "/", "online"))
            || (rc = read_path(c, 1 << 16, &t.len, &t.off)))
            break;
        const char *s = t.len >= 0 ? text_ptr(c, t) : NULL;
        size_t len = t.len >= 0 ? (size_t)t.len : 0;
        if (s) strip(&s, &len);
        if (!s || !len || (len == 1 && s[0] == '1')) set_bit(*online, (size_t)ids[k]);
        else if (!(len == 1 && s[0] == '0')) rc = IRREGULAR;
    }
    free(ids);
    return rc;
}

/* ---- the cpuset cgroup (pynuma/discover/cpuset_cgroup.py) ----------------------- */

#define FOUND 100 /* find_mount / cgroup_name: found (0: none, IRREGULAR, or -errno) */

/* Bytes on which Python's str.split()/strip() and this file's splitting could differ. */
static int odd_bytes(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == 0 || ch == '\v' || ch == '\f' || ch == '\r' || (ch >= 0x1c && ch <= 0x1f) || ch >= 0x80) return 1;
    }
    return 0;
}

static int is_blank(char ch) { return ch == ' ' || ch == '\t'; }

/* Does the blank/newline-separated word list s[0..n) contain `word`? */
static int has_word(const char *s, size_t n, const char *word, const char *seps)
{
    size_t wl = strlen(word), i = 0;
    while (i < n) {
        while (i < n && strchr(seps, s[i])) i++;
        size_t b = i;
        while (i < n && !strchr(seps, s[i])) i++;
        if (i - b == wl && memcmp(s + b, word, wl) == 0) return 1;
    }
    return 0;
}

/* Append s[0..n) to c->path at c->plen (the path builder). */
static void path_sn(scan_ctx *c, const char *piece, size_t n)
{
    if (c->plen + n < sizeof c->path) memcpy(c->path + c->plen, piece, n);
    c->plen += n;
}

/* The cpuset hierarchy's mount point (into *point, *plen) and file names, or 0 when none. */
static int find_mount(scan_ctx *c, text_t mounts, char *point, size_t *plen, const char **files)
{
    static const char *const v2[2] = { "cpuset.cpus.effective", "cpuset.mems.effective" };
    static const char *const v1[2] = { "cpuset.cpus", "cpuset.mems" };
    static const char *const legacy[2] = { "cpus", "mems" };
    if (mounts.len < 0) return 0;
    size_t at = 0, n = (size_t)mounts.len;
    while (at < n) {
        const char *s = text_ptr(c, mounts); /* re-read: reads below may move the buffer */
        const char *eol = memchr(s + at, '\n', n - at);
        size_t end = eol ? (size_t)(eol - s) : n;
        if (odd_bytes(s + at, end - at)) {
            /* Python may split such a line differently: harmless unless it could name a cpuset */
            if (memmem(s + at, end - at, "cgroup", 6) || memmem(s + at, end - at, "cpuset", 6)) return IRREGULAR;
            at = end + 1;
            continue;
        }
        const char *tok[4];
        size_t tl[4], nt = 0, i = at;
        while (i < end && nt < 4) {
            while (i < end && is_blank(s[i])) i++;
            if (i == end) break;
            tok[nt] = s + i;
            size_t b = i;
            while (i < end && !is_blank(s[i])) i++;
            tl[nt++] = i - b;
        }
        at = end + 1;
        if (nt < 4) continue;
        int v2fs = tl[2] == 7 && !memcmp(tok[2], "cgroup2", 7);
        int cpusetfs = tl[2] == 6 && !memcmp(tok[2], "cpuset", 6);
        int v1fs = tl[2] == 6 && !memcmp(tok[2], "cgroup", 6) && has_word(tok[3], tl[3], "cpuset", ",");
        if (!v2fs && !cpusetfs && !v1fs) continue;
        if (memchr(tok[1], '\\', tl[1]) || tl[1] >= 2048) return IRREGULAR; /* escaped or odd mount point */
        memcpy(point, tok[1], tl[1]);
        *plen = tl[1];
        while (*plen && point[*plen - 1] == '/') (*plen)--; /* rstrip("/") */
        if (cpusetfs) { files[0] = legacy[0]; files[1] = legacy[1]; return FOUND; }
        if (v1fs) {
            const char *const *f = has_word(tok[3], tl[3], "noprefix", ",") ? legacy : v1;
            files[0] = f[0];
            files[1] = f[1];
            return FOUND;
        }
        /* cgroup2: only when its root offers the cpuset controller */
        text_t ctl;
        path_start(c);
        path_sn(c, point, *plen);
        path_s(c, "/cgroup.controllers");
        TRY(path_end(c));
        TRY(read_path(c, 1 << 20, &ctl.len, &ctl.off));
        if (ctl.len < 0) continue;
        if (odd_bytes(text_ptr(c, ctl), (size_t)ctl.len)) return IRREGULAR;
        if (has_word(text_ptr(c, ctl), (size_t)ctl.len, "cpuset", " \t\n")) {
            files[0] = v2[0];
            files[1] = v2[1];
            return FOUND;
        }
    }
    return 0;
}

/* The process's cpuset cgroup path (into name, *nlen), or 0 when unknown. */
static int cgroup_name(scan_ctx *c, text_t cpuset, text_t cgroup, char *name, size_t *nlen)
{
    if (cpuset.len >= 0) {
        const char *s = text_ptr(c, cpuset);
        size_t n = (size_t)cpuset.len;
        strip(&s, &n);
        if (n && s[0] == '/' && !memchr(s, '\n', n)) {
            if (n >= 2048 || odd_bytes(s, n)) return IRREGULAR;
            memcpy(name, s, n);
            *nlen = n;
            return FOUND;
        }
    }
    if (cgroup.len < 0) return 0;
    const char *s = text_ptr(c, cgroup);
    size_t n = (size_t)cgroup.len;
    int found = 0;
    /* every line must be "hierarchy:controllers:path" (else the general path names the file) */
    for (size_t at = 0; at < n;) {
        const char *eol = memchr(s + at, '\n', n - at);
        size_t end = eol ? (size_t)(eol - s) : n;
        const char *line = s + at;
        size_t ll = end - at;
        at = end + 1;
        strip(&line, &ll);
        if (!ll) continue;
        const char *c1 = memchr(line, ':', ll);
        const char *c2 = c1 ? memchr(c1 + 1, ':', ll - (size_t)(c1 + 1 - line)) : NULL;
        if (!c2) return IRREGULAR;
        if (found) continue;
        const char *ctl = c1 + 1;
        size_t cl = (size_t)(c2 - ctl);
        int empty = 1;
        for (size_t i = 0; i < cl; i++) empty &= ctl[i] == ',';
        int v2line = (c1 - line) == 1 && line[0] == '0' && empty;
        if (!has_word(ctl, cl, "cpuset", ",") && !v2line) continue;
        const char *path = c2 + 1;
        size_t pl = ll - (size_t)(path - line);
        if (pl >= 2048 || odd_bytes(path, pl)) return IRREGULAR;
        memcpy(name, path, pl);
        *nlen = pl;
        found = 1;
    }
    return found ? FOUND : 0;
}

/* Allowed CPUs and memory nodes (malloc'd words; NULL where unrestricted). */
static int allowed(scan_ctx *c, text_t mounts, text_t cpuset, text_t cgroup, uint64_t **cpus, size_t *cw,
                   uint64_t **mems, size_t *mw)
{
    char point[2048], name[2048];
    size_t plen = 0, nlen = 0;
    const char *files[2];
    *cpus = *mems = NULL;
    *cw = *mw = 0;
    int rc = find_mount(c, mounts, point, &plen, files);
    if (rc != FOUND) return rc; /* no cpuset hierarchy (0), or irregular / an error */
    rc = cgroup_name(c, cpuset, cgroup, name, &nlen);
    if (rc != FOUND) return rc;
    /* point + "/" + name.strip("/"), then its files */
    size_t b = 0, e = nlen;
    while (b < e && name[b] == '/') b++;
    while (e > b && name[e - 1] == '/') e--;
    uint64_t **out[2] = { cpus, mems };
    size_t *outw[2] = { cw, mw };
    for (int k = 0; k < 2; k++) {
        text_t t;
        path_start(c);
        path_sn(c, point, plen);
        path_s(c, "/");
        if (e > b) { path_sn(c, name + b, e - b); path_s(c, "/"); }
        path_s(c, files[k]);
        TRY(path_end(c));
        TRY(read_path(c, 1 << 16, &t.len, &t.off));
        if (t.len < 0) continue;
        const char *s = text_ptr(c, t);
        size_t n = (size_t)t.len;
        strip(&s, &n);
        if (!n) return IRREGULAR; /* empty: the general path warns and ignores it */
        pn_parse_err err;
        int prc = pn_cpulist_parse(text_ptr(c, t), (size_t)t.len, out[k], outw[k], &err);
        if (prc == -EINVAL) return IRREGULAR;
        if (prc) return prc;
        if (!*out[k]) { /* an empty set parses to no words: keep a real (zero) bitmap */
            *out[k] = calloc(1, 8);
            if (!*out[k]) return -ENOMEM;
            *outw[k] = 1;
        }
    }
    return 0;
}

/* The CPU sets and the cgroup files, as discovery reads them first:
 * cpu/{online,possible,present,isolated,offline}, /proc/{mounts,self/cpuset,
 * self/cgroup}.  Their texts go to out->pre (for the general path to reuse).
 * The online set comes back limited to the cpuset cgroup's CPUs (the
 * reported CPUs); c->mems gets its memory nodes. */
static const char *const pre_paths[PN_SCAN_PRE] = {
    CPU_DIR "/online", CPU_DIR "/possible", CPU_DIR "/present", CPU_DIR "/isolated", CPU_DIR "/offline",
    "proc/mounts", "proc/self/cpuset", "proc/self/cgroup",
};
enum { S_ONLINE, S_POSSIBLE, S_PRESENT, S_ISOLATED, S_OFFLINE, S_MOUNTS };

static int read_sets(scan_ctx *c, uint64_t **sets, size_t *W)
{
    pn_scan_out *o = c->out;
    text_t t[PN_SCAN_PRE];
    for (int k = 0; k < PN_SCAN_PRE; k++) {
        TRY(pathf(c, "%s", pre_paths[k]));
        TRY(read_path(c, k == S_MOUNTS ? (size_t)1 << 24 : (size_t)1 << 16, &t[k].len, &t[k].off));
    }
    /* keep the texts for the general path */
    o->pre.len = 0;
    for (int k = 0; k < PN_SCAN_PRE; k++) {
        o->pre_len[k] = t[k].len;
        o->pre_off[k] = o->pre.len;
        if (t[k].len <= 0) continue;
        TRY(pn_buf_reserve(&o->pre, (size_t)t[k].len));
        memcpy(o->pre.data + o->pre.len, text_ptr(c, t[k]), (size_t)t[k].len);
        o->pre.len += (size_t)t[k].len;
    }
    o->have_pre = 1;
    /* parse every set at its own width first */
    uint64_t *raw[5] = { 0 }, *listed = NULL;
    size_t rw[5] = { 0 }, lw = 0;
    pn_parse_err err;
    int rc = 0;
    int have[5];
    for (int k = 0; k < 5; k++) have[k] = t[k].len >= 0;
    for (int k = 0; k < 5 && !rc; k++) {
        if (!have[k]) continue;
        rc = pn_cpulist_parse(text_ptr(c, t[k]), (size_t)t[k].len, &raw[k], &rw[k], &err);
        if (rc == -EINVAL) rc = IRREGULAR;
    }
    if (!rc && !have[S_ONLINE]) {
        /* no cpu/online: every cpuN whose online file is not "0" (old kernels); cpuN
         * directories make possible and present when those files are missing too */
        rc = online_from_dirs(c, &raw[S_ONLINE], &rw[S_ONLINE], &listed, &lw);
    }
    size_t w = 1;
    for (int k = 0; k < 5; k++) if (rw[k] > w) w = rw[k];
    if (lw > w) w = lw;
    for (int k = 0; k < 5 && !rc; k++) {
        sets[k] = calloc(w, 8);
        if (!sets[k]) rc = -ENOMEM;
        else if (raw[k]) memcpy(sets[k], raw[k], rw[k] * 8);
    }
    if (!rc) {
        /* the defaults of a missing file: possible = online, present = possible,
         * offline = present - online, isolated = none */
        if (!have[S_ONLINE] && !have[S_POSSIBLE]) { memcpy(sets[S_POSSIBLE], listed, lw * 8); have[S_POSSIBLE] = 1; }
        if (!have[S_ONLINE] && !have[S_PRESENT]) { memcpy(sets[S_PRESENT], listed, lw * 8); have[S_PRESENT] = 1; }
        if (!have[S_POSSIBLE]) memcpy(sets[S_POSSIBLE], sets[S_ONLINE], w * 8);
        if (!have[S_PRESENT]) memcpy(sets[S_PRESENT], sets[S_POSSIBLE], w * 8);
        if (t[S_OFFLINE].len < 0)
            for (size_t i = 0; i < w; i++) sets[S_OFFLINE][i] = sets[S_PRESENT][i] & ~sets[S_ONLINE][i];
    }
    for (int k = 0; k < 5; k++) free(raw[k]);
    free(listed);
    *W = w;
    if (rc) return rc;
    /* the cpuset cgroup: reported = online & its cpus; its mems limit the nodes */
    uint64_t *cpus = NULL, *mems = NULL;
    size_t cw = 0;
    rc = allowed(c, t[S_MOUNTS], t[S_MOUNTS + 1], t[S_MOUNTS + 2], &cpus, &cw, &mems, &c->mems_words);
    if (!rc && cpus)
        for (size_t i = 0; i < w; i++) sets[S_ONLINE][i] &= i < cw ? cpus[i] : 0;
    free(cpus);
    c->mems = mems;
    return rc;
}

/* ---- the scan's tasks: independent parts, each with its own stream ------------ */

/* After the CPU sets, the probe and the cache listing, the rest of the scan
 * is independent parts (cores; packages, dies, clusters; nodes; each cache
 * index; devices and cpuinfo).  Each runs with its own context -- its own
 * stream, record and texts -- so several threads can take them; the parts
 * are then joined in one fixed order, which makes the answer, the record and
 * the first error the same whichever thread ran what. */
enum { TASK_CORES, TASK_GROUPS, TASK_NODES, TASK_CACHE, TASK_DEVICES };

typedef struct {
    int kind;
    int rc;
    scan_ctx c;          /* c.out = &out; c.text starts as a copy of the probe's texts */
    pn_scan_out out;
    cpu_table *t;        /* shared: each task fills its own fields */
    const text_t *pr;    /* the probe's texts (offsets valid in c.text) */
    int arg;             /* TASK_CORES: core mask name; TASK_GROUPS: group kind; TASK_DEVICES: want cpuinfo */
    int package_name;
    int64_t index;       /* TASK_CACHE: the index */
    int64_t count;       /* TASK_CACHE, after the run: the instances emitted */
    const uint64_t *mems;
    size_t mems_words;
} scan_task;

/* Whether PCI devices or network interfaces exist (emitted), and the head of
 * /proc/cpuinfo into cpuinfo->cpuinfo when asked. */
static int scan_devices(scan_ctx *c, pn_scan_out *cpuinfo)
{
    int pci = 0, net = 0;
    TRY(dir_has_entries(c, "sys/bus/pci/devices", &pci));
    TRY(dir_has_entries(c, "sys/class/net", &net));
    TRY(emit(c, pci || net));
    if (!cpuinfo) return 0;
    size_t off;
    ssize_t len;
    TRY(pathf(c, "proc/cpuinfo"));
    TRY(read_path(c, 4096, &len, &off));
    if (len >= 0) {
        cpuinfo->cpuinfo = malloc((size_t)len + 1);
        if (!cpuinfo->cpuinfo) return -ENOMEM;
        memcpy(cpuinfo->cpuinfo, c->text.data + off, (size_t)len);
        cpuinfo->cpuinfo_len = len;
    }
    return 0;
}

static int run_task(scan_task *k)
{
    scan_ctx *c = &k->c;
    switch (k->kind) {
    case TASK_CORES:
        return scan_cores(c, k->t, k->pr, k->arg);
    case TASK_GROUPS:
        return scan_topology_groups(c, k->t, k->pr, k->arg, k->package_name);
    case TASK_NODES:
        return scan_nodes(c, k->mems, k->mems_words);
    case TASK_CACHE:
        return scan_cache_index(c, k->t->ids[0], k->index, &k->count);
    default:
        return scan_devices(c, k->arg ? &k->out : NULL);
    }
}

typedef struct {
    scan_task *tasks;
    const size_t *order; /* the order tasks are taken in (biggest first, roughly) */
    size_t n;
    size_t next;
} task_queue;

static void *take_tasks(void *arg)
{
    task_queue *q = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED);
        if (i >= q->n) return NULL;
        scan_task *k = &q->tasks[q->order[i]];
        k->rc = run_task(k);
    }
}

/* Threads for a scan of `ncpus` CPUs: `asked` when > 0, else one per CPU this
 * process may run on, up to 4, for a machine of 16 CPUs or more (below that
 * a thread costs about what it saves). */
static size_t scan_threads(int asked, size_t ncpus)
{
    if (asked > 0) return asked > 16 ? 16 : (size_t)asked;
    if (ncpus < 16) return 1;
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return 1;
    int n = CPU_COUNT(&mine);
    return n < 1 ? 1 : n > 4 ? 4 : (size_t)n;
}

/* Run every task: the calling thread and up to nthreads - 1 helpers take them
 * in queue order (helpers block every signal: Python's handlers belong to
 * the main thread).  A helper that cannot be started is simply not there. */
static void run_tasks(scan_task *tasks, const size_t *order, size_t n, size_t nthreads)
{
    task_queue q = { tasks, order, n, 0 };
    pthread_t helpers[15];
    size_t started = 0;
    if (nthreads > n) nthreads = n;
    if (nthreads > 1) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        for (size_t i = 0; i + 1 < nthreads && i < 15; i++) {
            if (pthread_create(&helpers[started], NULL, take_tasks, &q) != 0) break;
            started++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    take_tasks(&q);
    for (size_t i = 0; i < started; i++) pthread_join(helpers[i], NULL);
}

static int append_values(pn_scan_out *to, const pn_scan_out *from)
{
    if (to->len + from->len > to->cap) {
        size_t nc = to->cap ? to->cap : 256;
        while (nc < to->len + from->len) nc *= 2;
        int64_t *nv = realloc(to->values, nc * sizeof *nv);
        if (!nv) return -ENOMEM;
        to->values = nv;
        to->cap = nc;
    }
    if (from->len) memcpy(to->values + to->len, from->values, from->len * sizeof *from->values);
    to->len += from->len;
    return 0;
}

static int append_record(pn_scan_out *to, const pn_scan_out *from)
{
    if (!from->recorded.len) return 0;
    TRY(pn_buf_reserve(&to->recorded, from->recorded.len));
    memcpy(to->recorded.data + to->recorded.len, from->recorded.data, from->recorded.len);
    to->recorded.len += from->recorded.len;
    return 0;
}

static int task_init(scan_task *k, int kind, const scan_ctx *base, cpu_table *t, const text_t *pr)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->t = t;
    k->pr = pr;
    memcpy(&k->c, base, offsetof(scan_ctx, path)); /* all but the path buffer, which the task fills itself */
    k->c.out = &k->out;
    k->c.mems = NULL; /* the base context owns it */
    k->c.text.data = NULL;
    k->c.text.len = k->c.text.cap = 0;
    k->out.record = base->out->record;
    k->out.cpuinfo_len = -1;
    if (base->text.len) {
        TRY(pn_buf_reserve(&k->c.text, base->text.len));
        memcpy(k->c.text.data, base->text.data, base->text.len);
        k->c.text.len = base->text.len;
    }
    return 0;
}

static void task_free(scan_task *k)
{
    free(k->out.values);
    free(k->out.recorded.data);
    free(k->out.cpuinfo);
    free(k->c.text.data);
}

int pn_scan(int rootfd, const uint64_t *reported, size_t nwords, const uint64_t *mems, size_t mems_words,
            int want_cpuinfo, int threads, pn_scan_out *out)
{
    scan_ctx ctx = { .rootfd = rootfd, .W = nwords ? nwords : 1, .reported = reported, .out = out,
                     .cpufd = pn_open_in_root(rootfd, CPU_DIR, O_RDONLY | O_DIRECTORY) };
    scan_ctx *c = &ctx;
    cpu_table t = { 0 };
    uint64_t one = 0;
    uint64_t *sets[5] = { 0 };
    int64_t *indices = NULL;
    size_t nidx = 0, ntasks = 0;
    scan_task *tasks = NULL;
    size_t *order = NULL;
    int rc = 0;
    out->len = 0;
    out->cpuinfo_len = -1;
    if (!reported) {
        size_t w = 1;
        if ((rc = read_sets(c, sets, &w))) goto done;
        c->W = w;
        c->reported = sets[S_ONLINE];
    } else if (!nwords) {
        c->reported = &one;
    }
    if ((rc = emit(c, (int64_t)c->W)) || (rc = emit(c, !reported))) goto done;
    if (!reported) {
        /* possible, present, reported (online & the cgroup's), offline, isolated */
        static const int set_order[5] = { S_POSSIBLE, S_PRESENT, S_ONLINE, S_OFFLINE, S_ISOLATED };
        for (int k = 0; k < 5; k++)
            if ((rc = emit_bits(c, sets[set_order[k]]))) goto done;
    }
    for (size_t i = 0; i < c->W; i++) t.n += (size_t)__builtin_popcountll(c->reported[i]);
    if (!t.n) { rc = IRREGULAR; goto done; } /* nothing to report: the general path says what is left */
    size_t n = t.n;
    t.ids = malloc(n * sizeof *t.ids);
    t.core_id = malloc(n * sizeof(int64_t));
    t.package = malloc(n * sizeof(int64_t));
    t.die = malloc(n * sizeof(int64_t));
    t.cluster = malloc(n * sizeof(int64_t));
    t.core_index = malloc(n * sizeof(int64_t));
    t.core_mask = calloc(n * c->W, 8);
    if (!t.ids || !t.core_id || !t.package || !t.die || !t.cluster || !t.core_index || !t.core_mask) {
        rc = -ENOMEM;
        goto done;
    }
    size_t k = 0;
    for (size_t wi = 0; wi < c->W; wi++)
        for (uint64_t b = c->reported[wi]; b; b &= b - 1) t.ids[k++] = wi * 64 + (size_t)__builtin_ctzll(b);
    if (!reported) {
        mems = c->mems;
        mems_words = c->mems_words;
    }

    /* in order: the probe and the cache listing, then the tasks */
    c->text.len = 0; /* the tasks start with a copy of the probe's texts, nothing older */
    text_t pr[PR_COUNT];
    if ((rc = probe_topology(c, &t, pr))) goto done;
    int core_name = pr[PR_CORE_CPUS].len >= 0 ? PR_CORE_CPUS : PR_THREAD_SIBLINGS;
    int package_name = pr[PR_PACKAGE_CPUS].len >= 0 ? PR_PACKAGE_CPUS : PR_CORE_SIBLINGS;
    int have_group[3] = { pr[PR_PACKAGE_ID].len >= 0 || pr[package_name].len >= 0, pr[PR_DIE_ID].len >= 0,
                          pr[PR_CLUSTER_ID].len >= 0 };
    int64_t *group_out[3] = { t.package, t.die, t.cluster };
    int64_t no_group[3] = { PN_SCAN_NONE, PN_SCAN_NONE, PN_SCAN_NONE };
    /* die_id -1 is the kernel's answer for every CPU of an architecture without dies (each its own
     * die): the other CPUs' die files can say nothing else, and are not read */
    int64_t die0;
    if (have_group[GROUP_DIE] && p_int(TX(pr[PR_DIE_ID]), &die0) == 0 && die0 == -1) {
        have_group[GROUP_DIE] = 0;
        no_group[GROUP_DIE] = -1;
    }
    for (int g = 0; g < 3; g++)
        if (!have_group[g])
            for (size_t i = 0; i < n; i++) group_out[g][i] = no_group[g];
    if ((rc = pathf(c, CPU_DIR "/cpu%zu/cache", t.ids[0]))
        || (rc = list_ids(c, prefixed_id, "index", &indices, &nidx)))
        goto done;

    /* the tasks, in the order they are joined */
    size_t cap = 6 + nidx;
    tasks = calloc(cap, sizeof *tasks);
    order = malloc(cap * sizeof *order);
    if (!tasks || !order) { rc = -ENOMEM; goto done; }
    size_t cores_at = ntasks, nodes_at, cache_at, devices_at;
    if ((rc = task_init(&tasks[ntasks++], TASK_CORES, c, &t, pr))) goto done;
    tasks[cores_at].arg = core_name;
    for (int g = 0; g < 3; g++) {
        if (!have_group[g]) continue;
        scan_task *tk = &tasks[ntasks];
        if ((rc = task_init(&tasks[ntasks++], TASK_GROUPS, c, &t, pr))) goto done;
        tk->arg = g;
        tk->package_name = package_name;
    }
    nodes_at = ntasks;
    if ((rc = task_init(&tasks[ntasks++], TASK_NODES, c, &t, pr))) goto done;
    tasks[nodes_at].mems = mems;
    tasks[nodes_at].mems_words = mems_words;
    cache_at = ntasks;
    for (size_t i = 0; i < nidx; i++) {
        if ((rc = task_init(&tasks[ntasks++], TASK_CACHE, c, &t, pr))) goto done;
        tasks[ntasks - 1].index = indices[i];
    }
    devices_at = ntasks;
    if ((rc = task_init(&tasks[ntasks++], TASK_DEVICES, c, &t, pr))) goto done;
    tasks[devices_at].arg = want_cpuinfo;

    /* taken biggest first, roughly: a file or two per CPU for cores and each
     * cache index, fewer for the groups, nodes and devices */
    size_t q = 0;
    order[q++] = cores_at;
    for (size_t i = 0; i < nidx; i++) order[q++] = cache_at + i;
    for (size_t i = cores_at + 1; i < nodes_at; i++) order[q++] = i;
    order[q++] = nodes_at;
    order[q++] = devices_at;
    run_tasks(tasks, order, ntasks, scan_threads(threads, n));

    /* join: the record of every task, the first error, then the answer */
    for (size_t i = 0; i < ntasks; i++) {
        int r = append_record(out, &tasks[i].out);
        if (!rc) rc = r;
    }
    for (size_t i = 0; i < ntasks && !rc; i++) rc = tasks[i].rc;
    if (rc) goto done;
    if ((rc = emit_cpus(c, &t)) || (rc = append_values(out, &tasks[nodes_at].out))) goto done;
    int64_t ncaches = 0;
    for (size_t i = 0; i < nidx; i++) ncaches += tasks[cache_at + i].count;
    if ((rc = emit(c, ncaches))) goto done;
    for (size_t i = 0; i < nidx; i++)
        if ((rc = append_values(out, &tasks[cache_at + i].out))) goto done;
    if ((rc = append_values(out, &tasks[devices_at].out))) goto done;
    out->cpuinfo = tasks[devices_at].out.cpuinfo;
    out->cpuinfo_len = tasks[devices_at].out.cpuinfo_len;
    tasks[devices_at].out.cpuinfo = NULL;
done:
    for (size_t i = 0; i < ntasks; i++) task_free(&tasks[i]);
    free(tasks);
    free(order);
    free(indices);
    free(t.ids);
    free(t.core_id);
    free(t.package);
    free(t.die);
    free(t.cluster);
    free(t.core_index);
    free(t.core_mask);
    free(t.members);
    free(t.package_ids);
    free(t.package_cpus.w);
    for (int k = 0; k < 5; k++) free(sets[k]);
    free(c->mems);
    free(c->text.data);
    if (c->cpufd >= 0) close(c->cpufd);
    return rc;
}
