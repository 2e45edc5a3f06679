/* Parsers and kubelet naming rules of the cgroup walker (twins: pynuma/cgroups/_spec.py and
 * pynuma/cgroups/kubepods.py; the tests hold native and pure to the same answers). */
#define _GNU_SOURCE
#include "pn_cgparse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- parsing (must agree with pynuma/cgroups/_spec.py) ------------------ */

/* Python's str.splitlines() separators and str.split() whitespace, ASCII part. */
static int is_linesep(unsigned char c) { return c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e); }
static int is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == 0x1f; }
static int is_space(unsigned char c) { return is_linesep(c) || is_blank(c); }

static int digits_to_i64(const char *s, long n, int64_t *v)
{
    if (n <= 0)
        return -EINVAL;
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < '0' || c > '9')
            return -EINVAL;
        /* checked before multiplying: a 20-digit value would wrap uint64 and slip through */
        if (acc > ((uint64_t)INT64_MAX - (uint64_t)(c - '0')) / 10)
            return -ERANGE;
        acc = acc * 10 + (c - '0');
    }
    *v = (int64_t)acc;
    return 0;
}

static int ascii_only(const char *s, long n)
{
    for (long i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return 1;
}

int pn_cg_parse_int(const char *s, long n, int64_t *v)
{
    if (!ascii_only(s, n))
        return -EINVAL;
    while (n > 0 && is_space((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_space((unsigned char)s[n - 1]))
        n--;
    if (n == 3 && memcmp(s, "max", 3) == 0) {
        *v = INT64_MAX;
        return 0;
    }
    return digits_to_i64(s, n, v);
}

/* "key value" lines; all-or-nothing like the pure parser. */
int pn_cg_parse_keyed(const char *s, long n, const struct pn_cgfile *f, int64_t *slots, uint32_t *have)
{
    int64_t vals[PN_CG_MAXKEYS];
    int seen[PN_CG_MAXKEYS] = {0};
    if (!ascii_only(s, n))
        return -EINVAL;
    long i = 0;
    while (i < n) {
        long end = i;
        while (end < n && !is_linesep((unsigned char)s[end]))
            end++;
        /* tokens of this line */
        const char *tok[3];
        long tlen[3];
        int ntok = 0;
        long j = i;
        while (j < end && ntok < 3) {
            while (j < end && is_blank((unsigned char)s[j]))
                j++;
            if (j >= end)
                break;
            long k = j;
            while (k < end && !is_blank((unsigned char)s[k]))
                k++;
            tok[ntok] = s + j;
            tlen[ntok] = k - j;
            ntok++;
            j = k;
        }
        if (ntok != 0 && ntok != 2)
            return -EINVAL;
        if (ntok == 2) {
            for (int q = 0; q < f->nkeys; q++) {
                if (tlen[0] == f->keylen[q] && memcmp(tok[0], f->keys[q], tlen[0]) == 0) {
                    int64_t v;
                    int rc = digits_to_i64(tok[1], tlen[1], &v);
                    if (rc < 0)
                        return rc;
                    if (f->kmult[q] > 1 && v > INT64_MAX / f->kmult[q])
                        return -ERANGE;
                    vals[q] = v * f->kmult[q];
                    seen[q] = 1;
                    break;
                }
            }
        }
        /* "\r\n" is one separator for splitlines() */
        if (end + 1 < n && s[end] == '\r' && s[end + 1] == '\n')
            end++;
        i = end + 1;
    }
    for (int q = 0; q < f->nkeys; q++) {
        if (seen[q]) {
            slots[f->kslot[q]] = vals[q];
            *have |= 1u << f->kslot[q];
        }
    }
    return 0;
}

/* ---- kubelet naming (must agree with pynuma/cgroups/kubepods.py) -------- */

static int has_prefix(const char *s, size_t n, const char *p)
{
    size_t m = strlen(p);
    return n >= m && memcmp(s, p, m) == 0;
}

static int has_suffix(const char *s, size_t n, const char *p)
{
    size_t m = strlen(p);
    return n >= m && memcmp(s + n - m, p, m) == 0;
}

static const char *const TIER_DIR[] = {"", "burstable", "besteffort"};

int pn_cg_tier_of(const char *name, size_t n, int systemd)
{
    const char *mid = name;
    size_t mlen = n;
    if (systemd) {
        if (!has_prefix(name, n, "kubepods-") || !has_suffix(name, n, ".slice") || n < 15)
            return -1;
        mid = name + 9;
        mlen = n - 15;
    }
    if (mlen == 9 && memcmp(mid, "burstable", 9) == 0)
        return PN_CG_BURSTABLE;
    if (mlen == 10 && memcmp(mid, "besteffort", 10) == 0)
        return PN_CG_BESTEFFORT;
    return -1;
}

/* uid span inside name, or 0 when not a pod cgroup of this tier */
int pn_cg_pod_uid_of(const char *name, size_t n, int systemd, int tier, size_t *off, size_t *len)
{
    if (systemd) {
        char prefix[40];
        if (tier == PN_CG_NOQOS || tier == PN_CG_GUARANTEED)
            strcpy(prefix, "kubepods-pod");
        else
            snprintf(prefix, sizeof prefix, "kubepods-%s-pod", TIER_DIR[tier]);
        size_t p = strlen(prefix);
        if (!has_prefix(name, n, prefix) || !has_suffix(name, n, ".slice") || n < p + 6)
            return 0;
        *off = p;
        *len = n - p - 6;
    } else {
        if (!has_prefix(name, n, "pod"))
            return 0;
        *off = 3;
        *len = n - 3;
    }
    return *len > 0;
}

static const char *const RT_PREFIX[] = {"", "cri-containerd-", "crio-", "docker-"};

/* runtime code (>= 0) and id span, or -1 when not a container cgroup */
int pn_cg_container_of(const char *name, size_t n, int systemd, size_t *off, size_t *len)
{
    if (has_prefix(name, n, "crio-conmon-"))
        return -1;
    size_t stem = n;
    if (systemd) {
        if (!has_suffix(name, n, ".scope"))
            return -1;
        stem = n - 6;
    }
    for (int rt = 1; rt <= 3; rt++) {
        size_t p = strlen(RT_PREFIX[rt]);
        if (stem > p && memcmp(name, RT_PREFIX[rt], p) == 0) {
            *off = p;
            *len = stem - p;
            return rt;
        }
    }
    if (systemd)
        return -1;
    *off = 0;
    *len = n;
    return PN_RT_NONE;
}

