/* pn_merge.c -- the Topology Manager's hint merge without the cross product.
 *
 * Same decisions as the kubelet's exhaustive merge (a fold of its compare()
 * over every permutation of one hint per list).  Why this is exact:
 *
 *  - compare() is a minimum over a total order.  Preferred merged hints
 *    beat non-preferred ones; preferred ones are ordered by T = (count,
 *    [distance sum], value).  Non-preferred ones are ordered by the count
 *    rank "== B, then below B descending, then above B ascending", ties by
 *    T, where B is the largest of the lists' narrowest non-nil counts.
 *  - A merged hint is preferred iff all hints are preferred and all non-nil
 *    masks are equal, so the preferred candidates are the masks M such that
 *    every list holds a preferred M or a preferred nil: linear work.
 *  - Only without any preferred candidate do we need the achievable ANDs:
 *    deduplicated list-by-list expansion (sparse) while it fits the budget
 *    and is cheaper, else superset-sum transforms over the 2^n masks of the
 *    machine (dense; pair counts by zeta/Moebius are exact in 64 bits for
 *    n <= 31), else a deterministic bounded beam (flagged inexact).
 *
 * Pure C: no Python objects; 0 or -errno.  The pure twin is
 * pynuma/_pure_merge.py and must stay decision-for-decision identical.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PN_MERGE_PREFERRED 1u
#define PN_MERGE_NIL 2u
#define PN_MERGE_DENSE_MAX 20
#define PN_MERGE_BEAM_WIDTH 4096
#define PN_MERGE_BEAM_MIN 16

typedef struct {
    int closest;
    const uint32_t *dist; /* 64 x 64, row-major, by bit position */
    int best_np;
} ctx_t;

static inline int popc(uint64_t x) { return __builtin_popcountll(x); }

static uint64_t distsum(const ctx_t *c, uint64_t m)
{
    uint64_t total = 0;
    for (uint64_t a = m; a; a &= a - 1) {
        int i = __builtin_ctzll(a);
        for (uint64_t b = m; b; b &= b - 1)
            total += c->dist[i * 64 + __builtin_ctzll(b)];
    }
    return total;
}

/* Mask order T: is a strictly better than b? */
static int t_better(const ctx_t *c, uint64_t a, uint64_t b)
{
    int ka = popc(a), kb = popc(b);
    if (ka != kb)
        return ka < kb;
    if (c->closest) {
        uint64_t da = distsum(c, a), db = distsum(c, b);
        if (da != db)
            return da < db;
    }
    return a < b;
}

static int np_rank(const ctx_t *c, uint64_t m)
{
    int k = popc(m);
    if (k == c->best_np)
        return 0;
    if (k < c->best_np)
        return c->best_np - k;
    return k;
}

/* Non-preferred order: is a strictly better than b? */
static int np_better(const ctx_t *c, uint64_t a, uint64_t b)
{
    int ra = np_rank(c, a), rb = np_rank(c, b);
    if (ra != rb)
        return ra < rb;
    return t_better(c, a, b); /* equal ranks mean equal counts: T's tie-breaks decide */
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static size_t sort_unique(uint64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t w = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[w - 1])
            v[w++] = v[i];
    return w;
}

static int in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == x;
}

/* ---- preferred phase ------------------------------------------------------ */

static int preferred_best(uint64_t def, const uint64_t *masks, const uint8_t *flags, const size_t *offs,
                          size_t nlists, const ctx_t *c, uint64_t *best, int *found)
{
    size_t total = offs[nlists];
    uint64_t *pref = malloc((total ? total : 1) * sizeof *pref);
    size_t *pstart = malloc((nlists + 1) * sizeof *pstart);
    unsigned char *prefnil = malloc(nlists ? nlists : 1);
    if (!pref || !pstart || !prefnil) {
        free(pref), free(pstart), free(prefnil);
        return -ENOMEM;
    }
    size_t w = 0;
    for (size_t l = 0; l < nlists; l++) {
        pstart[l] = w;
        prefnil[l] = 0;
        for (size_t i = offs[l]; i < offs[l + 1]; i++) {
            if (!(flags[i] & PN_MERGE_PREFERRED))
                continue;
            if (flags[i] & PN_MERGE_NIL)
                prefnil[l] = 1;
            else
                pref[w++] = masks[i];
        }
        size_t n = sort_unique(pref + pstart[l], w - pstart[l]);
        w = pstart[l] + n;
    }
    pstart[nlists] = w;

    *found = 0;
    size_t pivot = nlists; /* a list without a preferred nil: candidates must come from it */
    int all_nil = 1;
    for (size_t l = 0; l < nlists; l++) {
        if (prefnil[l])
            continue;
        all_nil = 0;
        if (pivot == nlists || pstart[l + 1] - pstart[l] < pstart[pivot + 1] - pstart[pivot])
            pivot = l;
    }
    if (all_nil && def) {
        *best = def;
        *found = 1;
    }
    size_t from = all_nil ? 0 : pstart[pivot], to = all_nil ? w : pstart[pivot + 1];
    for (size_t i = from; i < to; i++) {
        uint64_t m = pref[i];
        int ok = 1;
        for (size_t l = 0; ok && l < nlists; l++)
            if (!prefnil[l] && l != pivot)
                ok = in_sorted(pref + pstart[l], pstart[l + 1] - pstart[l], m);
        uint64_t merged = m & def;
        if (!ok || !merged)
            continue;
        if (!*found || t_better(c, merged, *best)) {
            *best = merged;
            *found = 1;
        }
    }
    free(pref), free(pstart), free(prefnil);
    return 0;
}

/* ---- achievable ANDs ---------------------------------------------------------- */

typedef struct {
    uint64_t *slot; /* 0 = empty (zero masks are never stored) */
    size_t cap, len;
} hset_t;

static int hset_init(hset_t *h, size_t want)
{
    size_t cap = 64;
    while (cap < want * 2)
        cap <<= 1;
    h->slot = calloc(cap, sizeof *h->slot);
    h->cap = cap;
    h->len = 0;
    return h->slot ? 0 : -ENOMEM;
}

static int hset_add(hset_t *h, uint64_t x);

static int hset_grow(hset_t *h)
{
    hset_t n;
    if (hset_init(&n, h->cap) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < h->cap; i++)
        if (h->slot[i])
            hset_add(&n, h->slot[i]);
    free(h->slot);
    *h = n;
    return 0;
}

static int hset_add(hset_t *h, uint64_t x)
{
    if ((h->len + 1) * 2 > h->cap && hset_grow(h) < 0)
        return -ENOMEM;
    size_t mask = h->cap - 1;
    size_t i = (size_t)((x * 0x9E3779B97F4A7C15ull) >> 17) & mask;
    while (h->slot[i]) {
        if (h->slot[i] == x)
            return 0;
        i = (i + 1) & mask;
    }
    h->slot[i] = x;
    h->len++;
    return 0;
}

/* Collect a set's members into a fresh array (caller frees). */
static uint64_t *hset_take(hset_t *h, size_t *n)
{
    uint64_t *out = malloc((h->len ? h->len : 1) * sizeof *out);
    if (out) {
        size_t w = 0;
        for (size_t i = 0; i < h->cap; i++)
            if (h->slot[i])
                out[w++] = h->slot[i];
        *n = w;
    }
    free(h->slot);
    h->slot = NULL;
    return out;
}

/* Expand the states by one list; with beam > 0 keep only the best `beam` by (|count-B|, value). */
static int expand(uint64_t **states, size_t *nstates, const uint64_t *list, size_t len, size_t beam, const ctx_t *c);

static const ctx_t *beam_ctx;

static int cmp_beam(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    int da = abs(popc(a) - beam_ctx->best_np), db = abs(popc(b) - beam_ctx->best_np);
    if (da != db)
        return da - db;
    return (a > b) - (a < b);
}

static int expand(uint64_t **states, size_t *nstates, const uint64_t *list, size_t len, size_t beam, const ctx_t *c)
{
    hset_t h;
    /* start small: the number of distinct ANDs is usually far below states x hints */
    size_t guess = *nstates * len;
    if (guess > 4096)
        guess = 4096;
    if (hset_init(&h, guess) < 0)
        return -ENOMEM;
    for (size_t s = 0; s < *nstates; s++)
        for (size_t i = 0; i < len; i++) {
            uint64_t r = (*states)[s] & list[i];
            if (r && hset_add(&h, r) < 0) {
                free(h.slot);
                return -ENOMEM;
            }
        }
    size_t n = 0;
    uint64_t *out = hset_take(&h, &n);
    if (!out)
        return -ENOMEM;
    if (beam && n > beam) {
        beam_ctx = c;
        qsort(out, n, sizeof *out, cmp_beam);
        n = beam;
    }
    free(*states);
    *states = out;
    *nstates = n;
    return 0;
}

/* Superset sums, blocked so the inner loop is branch-free (vectorizes). */
static void zeta_sup(uint64_t *f, int n)
{
    size_t size = (size_t)1 << n;
    for (int i = 0; i < n; i++) {
        size_t bit = (size_t)1 << i;
        for (size_t base = 0; base < size; base += bit << 1)
            for (size_t m = base; m < base + bit; m++)
                f[m] += f[m + bit];
    }
}

static void moebius_sup(uint64_t *f, int n)
{
    size_t size = (size_t)1 << n;
    for (int i = 0; i < n; i++) {
        size_t bit = (size_t)1 << i;
        for (size_t base = 0; base < size; base += bit << 1)
            for (size_t m = base; m < base + bit; m++)
                f[m] -= f[m + bit];
    }
}

static uint64_t to_compact(uint64_t m, const int *pos, int n)
{
    if (pos[n - 1] == n - 1) /* nodes 0..n-1: already compact */
        return m;
    uint64_t c = 0;
    for (int p = 0; p < n; p++)
        if (m >> pos[p] & 1)
            c |= (uint64_t)1 << p;
    return c;
}

static uint64_t from_compact(uint64_t c, const int *pos, int n)
{
    if (pos[n - 1] == n - 1)
        return c;
    uint64_t m = 0;
    for (int p = 0; p < n; p++)
        if (c >> p & 1)
            m |= (uint64_t)1 << pos[p];
    return m;
}

/* Best non-preferred AND over all achievable ones, by transforms over the 2^n masks of def. */
static int dense_best(uint64_t def, uint64_t *const *tl, const size_t *tlen, size_t nlists, const ctx_t *c,
                      uint64_t *best, int *found)
{
    int pos[64], n = 0;
    for (uint64_t a = def; a; a &= a - 1)
        pos[n++] = __builtin_ctzll(a);
    *found = 0;
    if (n == 0)
        return 0;
    size_t size = (size_t)1 << n;
    uint64_t *reach = calloc(size, sizeof *reach), *ind = calloc(size, sizeof *ind);
    if (!reach || !ind) {
        free(reach), free(ind);
        return -ENOMEM;
    }
    reach[size - 1] = 1; /* the AND of no list: all nodes */
    for (size_t l = 0; l < nlists; l++) {
        uint64_t *target = l == 0 ? reach : ind; /* AND with all nodes changes nothing */
        memset(target, 0, size * sizeof *target);
        for (size_t i = 0; i < tlen[l]; i++)
            target[to_compact(tl[l][i], pos, n)] = 1;
        if (l == 0)
            continue;
        zeta_sup(reach, n);
        zeta_sup(ind, n);
        for (size_t m = 0; m < size; m++)
            reach[m] *= ind[m]; /* pairs with AND a superset of m; exact for n <= 31 */
        moebius_sup(reach, n);
        for (size_t m = 0; m < size; m++)
            reach[m] = reach[m] != 0;
    }
    *found = 0;
    for (size_t m = 1; m < size; m++) {
        if (!reach[m])
            continue;
        uint64_t full = from_compact(m, pos, n);
        if (!*found || np_better(c, full, *best)) {
            *best = full;
            *found = 1;
        }
    }
    free(reach), free(ind);
    return 0;
}

/* mode: 0 = choose, 1 = prefer the sparse expansion, 2 = prefer the transforms (tests use 1 and 2). */
int pn_merge(uint64_t def, const uint64_t *masks, const uint8_t *flags, const size_t *offs, size_t nlists,
             int closest, const uint32_t *dist, uint64_t budget, int mode, uint64_t *out_mask, int *out_pref,
             int *out_exact)
{
    ctx_t c = {closest, dist, 0};
    int rc, found = 0;
    uint64_t best = 0;
    if (closest && !dist)
        return -EINVAL;
    *out_mask = def, *out_pref = 0, *out_exact = 1;
    for (size_t l = 0; l < nlists; l++)
        if (offs[l + 1] == offs[l])
            return 0; /* an empty list: empty cross product, nothing to compare */

    if ((rc = preferred_best(def, masks, flags, offs, nlists, &c, &best, &found)) < 0)
        return rc;
    if (found) {
        *out_mask = best, *out_pref = 1;
        return 0;
    }

    for (size_t l = 0; l < nlists; l++) {
        int mn = -1;
        for (size_t i = offs[l]; i < offs[l + 1]; i++)
            if (!(flags[i] & PN_MERGE_NIL) && (mn < 0 || popc(masks[i]) < mn))
                mn = popc(masks[i]);
        if (mn > c.best_np)
            c.best_np = mn;
    }

    /* trimmed, deduplicated lists (nil = all nodes) */
    size_t total = offs[nlists];
    uint64_t *tbuf = malloc((total ? total : 1) * sizeof *tbuf);
    uint64_t **tl = malloc((nlists ? nlists : 1) * sizeof *tl);
    size_t *tlen = malloc((nlists ? nlists : 1) * sizeof *tlen);
    uint64_t *states = malloc(sizeof *states);
    if (!tbuf || !tl || !tlen || !states) {
        rc = -ENOMEM;
        goto out;
    }
    /* Go dense at once when even the bound on the sparse work exceeds the budget: no need
     * to deduplicate lists the transforms read as indicator arrays anyway. */
    int ndef = popc(def), go_dense = 0;
    if (ndef <= PN_MERGE_DENSE_MAX) {
        /* ...or when the transforms are simply cheaper than the bound on the sparse work */
        uint64_t bound = 1, cap = (uint64_t)1 << ndef, sparse_cost = 0, dense_cost = 0;
        for (size_t l = 0; l < nlists && !go_dense; l++) {
            uint64_t len = offs[l + 1] - offs[l];
            if (bound * len > budget)
                go_dense = 1;
            sparse_cost += bound * len;
            dense_cost += len + 3 * (uint64_t)ndef * cap;
            bound = bound * len < cap ? bound * len : cap;
        }
        if (mode == 0 && dense_cost < sparse_cost)
            go_dense = 1;
        if (mode == 1)
            go_dense = 0;
        if (mode == 2)
            go_dense = 1;
    }
    for (size_t l = 0; l < nlists; l++) {
        tl[l] = tbuf + offs[l];
        for (size_t i = offs[l]; i < offs[l + 1]; i++)
            tbuf[i] = (flags[i] & PN_MERGE_NIL) ? def : (masks[i] & def);
        tlen[l] = go_dense ? offs[l + 1] - offs[l] : sort_unique(tl[l], offs[l + 1] - offs[l]);
    }
    if (go_dense) {
        rc = dense_best(def, tl, tlen, nlists, &c, &best, &found);
        goto done;
    }
    size_t nstates = 1;
    states[0] = def;
    int sparse_ok = 1;
    for (size_t l = 0; l < nlists; l++) {
        if ((uint64_t)nstates * tlen[l] > budget) {
            sparse_ok = 0;
            break;
        }
        if ((rc = expand(&states, &nstates, tl[l], tlen[l], 0, &c)) < 0)
            goto out;
    }
    if (!sparse_ok && popc(def) <= PN_MERGE_DENSE_MAX) {
        rc = dense_best(def, tl, tlen, nlists, &c, &best, &found);
        goto done;
    }
    if (!sparse_ok) {
        /* bounded: at most ~budget ANDs per list, so the beam narrows as the lists grow */
        size_t longest = 1, width;
        for (size_t l = 0; l < nlists; l++)
            if (tlen[l] > longest)
                longest = tlen[l];
        width = budget / longest;
        if (width > PN_MERGE_BEAM_WIDTH)
            width = PN_MERGE_BEAM_WIDTH;
        if (width < PN_MERGE_BEAM_MIN)
            width = PN_MERGE_BEAM_MIN;
        *out_exact = 0;
        nstates = 1;
        states[0] = def;
        for (size_t l = 0; l < nlists; l++)
            if ((rc = expand(&states, &nstates, tl[l], tlen[l], width, &c)) < 0)
                goto out;
    }
    for (size_t s = 0; s < nstates; s++)
        if (!found || np_better(&c, states[s], best)) {
            best = states[s];
            found = 1;
        }
    rc = 0;
done:
    if (rc == 0 && found)
        *out_mask = best;
out:
    free(tbuf), free(tl), free(tlen), free(states);
    return rc;
}
