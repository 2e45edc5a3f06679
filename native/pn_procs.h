/* pn_procs.h -- raw per-process NUMA numbers from /proc under a root (pn_procs.c).
 *
 * Plain C, no Python objects; 0 or -errno.  What the numbers mean (page
 * sizes, nodes of CPUs, which policy a process follows) is decided once, in
 * Python (pynuma/procs/); the pure twin is pynuma/_pure_procs.py and must
 * give the same answer for every tree, so every limit below is shared.
 */
#ifndef PN_PROCS_H
#define PN_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pn.h"

/* What pn_read_proc reads. */
#define PN_PROC_STAT 1       /* /proc/PID/stat, raw text */
#define PN_PROC_STATUS 2     /* /proc/PID/status, raw text */
#define PN_PROC_MAPS 4       /* /proc/PID/numa_maps, counted (below) */
#define PN_PROC_THREADS 8    /* /proc/PID/task/<tid>/{stat,status}: processor and Cpus_allowed_list */

/* Limits (shared with the pure twin). */
#define PN_PROC_TEXT_LIMIT (1u << 20)        /* stat/status files: bytes read at most */
#define PN_PROC_MAPS_LIMIT (256u << 20)      /* numa_maps: bytes read at most (then -EFBIG) */
#define PN_PROC_LINE_MAX 65536               /* a longer numa_maps line is a bad line */
#define PN_PROC_POLICY_MAX 256               /* a longer policy word is a bad line */
#define PN_PROC_POLICIES_MAX 64              /* distinct policy words counted; another's lines count pages only */
#define PN_PROC_COUNTS_MAX 65536             /* distinct (page size, huge, node) kept; beyond: bad line */
#define PN_PROC_PAGES_MAX ((1ull << 36) - 1) /* largest N<node>= value; larger: bad line */
#define PN_PROC_PAGE_KB_MAX ((1ull << 32) - 1) /* largest kernelpagesize_kB= value */
#define PN_PROC_THREADS_MAX (1u << 22)       /* thread ids kept (lowest first); PID_MAX_LIMIT */

/* Pages of numa_maps lines that said the same page size and huge marker, on one node. */
typedef struct {
    uint64_t page_kb;  /* kernelpagesize_kB= of those lines; 0 when they did not say */
    int huge;          /* those lines carried the "huge" word */
    int64_t node;
    uint64_t pages;
} pn_maps_count;

/* A policy word (the second word of a numa_maps line) and how many lines had it. */
typedef struct {
    size_t off, len;   /* the word in out->text */
    uint64_t lines;
} pn_policy_count;

/* One thread of the process. */
typedef struct {
    int tid;
    int processor;        /* field 39 of task/<tid>/stat; -1 when unreadable or not a number */
    ssize_t allowed_len;  /* Cpus_allowed_list value of task/<tid>/status, or -errno (-ENOENT: no such line) */
    size_t allowed_off;   /* where that value starts in out->text */
} pn_thread_info;

typedef struct {
    pn_buf text;                  /* stat, status, policy words, thread affinity values */
    ssize_t stat_len, status_len; /* length, or -errno (-ENODATA when not asked for) */
    size_t stat_off, status_off;
    int maps_rc;                  /* 0; -errno; -EFBIG: stopped at PN_PROC_MAPS_LIMIT (counts so far kept) */
    uint64_t maps_lines, maps_bad; /* lines counted; lines not understood (skipped) */
    pn_maps_count *maps;
    size_t nmaps, maps_cap;
    pn_policy_count *pols;
    size_t npols, pols_cap;
    ssize_t threads_rc;           /* number of thread ids found, or -errno listing task/ */
    pn_thread_info *threads;
    size_t nthreads, threads_cap;
} pn_proc_out;

/* Working memory one reader reuses from process to process (zero it before the first use). */
typedef struct {
    char *chunk;                  /* numa_maps bytes being parsed */
    pn_buf text;                  /* a thread's stat/status */
    int64_t *line_nodes;          /* one numa_maps line's (node, pages) pairs */
    uint64_t *line_pages;
    void *classes;                /* per (page size, huge) class, pages per node */
} pn_proc_scratch;

/* Read what `flags` asks for about process `pid` below `rootfd` into `out`
 * (emptied first; its allocations are reused).  0; -errno when /proc/PID
 * cannot be opened (the process is gone); -ENOMEM. */
int pn_read_proc(int rootfd, int pid, int flags, pn_proc_out *out, pn_proc_scratch *scratch);

/* Free everything `out` holds. */
void pn_proc_free(pn_proc_out *out);

/* Free everything `scratch` holds. */
void pn_proc_scratch_free(pn_proc_scratch *scratch);

#endif /* PN_PROCS_H */
