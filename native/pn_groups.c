/* pn_groups.c -- read a per-group sysfs file set once per group.
 *
 * A group (package, die, cluster, cache instance) is described by the files
 * of its lowest CPU, whose cpumask names the other members: take the lowest
 * CPU not yet placed (the leader), read its files, place every reported CPU
 * of its mask, repeat.  Done here in one C loop, one leader after the other,
 * with no Python work between reads.  Twin: group_walk in
 * pynuma/_pure_fsread.py.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pn.h"

size_t pn_lowest_bit(const uint64_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (w[i]) return i * 64 + (size_t)__builtin_ctzll(w[i]);
    return (size_t)-1;
}

int pn_group_walk(int rootfd, const char *prefix, const char *suffix, const char *const *names,
                  size_t nnames, size_t mask_index, const uint64_t *reported, uint64_t *remaining,
                  size_t nwords, pn_walk_out *out)
{
    return pn_group_walk_near(rootfd, -1, 0, prefix, suffix, names, nnames, mask_index, reported, remaining,
                              nwords, out);
}

int pn_group_walk_near(int rootfd, int dirfd, size_t dirlen, const char *prefix, const char *suffix,
                       const char *const *names, size_t nnames, size_t mask_index, const uint64_t *reported,
                       uint64_t *remaining, size_t nwords, pn_walk_out *out)
{
    char path[4096];
    for (;;) {
        size_t cpu = pn_lowest_bit(remaining, nwords);
        if (cpu == (size_t)-1) return 0;
        if (out->count == out->cap) {
            size_t nc = out->cap ? out->cap * 2 : 16;
            size_t *nl = realloc(out->leaders, nc * sizeof *nl);
            if (!nl) return -ENOMEM;
            out->leaders = nl;
            ssize_t *nr = realloc(out->results, nc * nnames * sizeof *nr);
            if (!nr) return -ENOMEM;
            out->results = nr;
            size_t *no = realloc(out->offsets, nc * nnames * sizeof *no);
            if (!no) return -ENOMEM;
            out->offsets = no;
            uint64_t *ng = realloc(out->groups, nc * nwords * sizeof *ng);
            if (!ng) return -ENOMEM;
            out->groups = ng;
            out->cap = nc;
        }
        size_t k = out->count++;
        out->leaders[k] = cpu;
        for (size_t f = 0; f < nnames; f++) {
            int n = snprintf(path, sizeof path, "%s%zu%s%s", prefix, cpu, suffix, names[f]);
            if (n < 0 || (size_t)n >= sizeof path) return -ENAMETOOLONG;
            int rc = pn_read_one_near(rootfd, dirfd, dirlen, path, 1 << 16, &out->text,
                                      &out->results[k * nnames + f], &out->offsets[k * nnames + f]);
            if (rc < 0) return rc;
        }
        /* the leader's group: its mask limited to reported, unplaced CPUs, plus itself */
        uint64_t *group = out->groups + k * nwords;
        ssize_t got = out->results[k * nnames + mask_index];
        if (got < 0) return -EAGAIN;
        uint64_t *mask = NULL;
        size_t mwords = 0;
        pn_parse_err err;
        int rc = pn_cpumask_parse(out->text.data + out->offsets[k * nnames + mask_index], (size_t)got,
                                  &mask, &mwords, &err);
        if (rc == -EINVAL) return -EAGAIN;
        if (rc < 0) return rc;
        for (size_t i = 0; i < nwords; i++) {
            group[i] = (i < mwords ? mask[i] : 0) & reported[i] & remaining[i];
            if (i == cpu / 64) group[i] |= (uint64_t)1 << (cpu % 64);
            remaining[i] &= ~group[i];
        }
        free(mask);
    }
}
