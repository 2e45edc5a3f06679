/* pn_procs.c -- raw per-process NUMA numbers from /proc under a root.
 *
 * One call reads what pynuma procs needs about one process: its stat and
 * status texts, its numa_maps pages counted per (page size, node), and per
 * thread the CPU it last ran on and the CPUs it may run on.  Every file is
 * opened below the root (pn_open_near: /proc/PID is opened once, so every
 * read is about the same process), O_NONBLOCK, regular files only, and
 * read up to a limit; numa_maps is streamed through a fixed buffer, so a
 * process with a million mappings costs no more memory than one with ten.
 * Nothing here decides what a number means: pynuma/procs/ does, for this
 * reader and for its pure twin (pynuma/_pure_procs.py) alike.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pn_procs.h"

#define MAPS_READ 65536                          /* bytes asked of each read() of numa_maps */
#define CHUNK_CAP (PN_PROC_LINE_MAX + MAPS_READ + 1)
#define LINE_PAIRS (PN_PROC_LINE_MAX / 4 + 1)    /* "N0=1" is 4 bytes: no line holds more pairs */
#define NODES 1024                               /* MAX_NUMNODES at its largest (NODES_SHIFT 10) */
#define CLASSES 16                               /* distinct (page size, huge) per process */

/* The pages of one (page size, huge) class, per node. */
typedef struct {
    uint64_t page_kb;
    int huge;
    uint64_t pages[NODES];
} maps_class;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Digits [s, s+n) as a number no larger than `max`; -1 when not all digits, empty or too large. */
static int64_t parse_digits(const char *s, size_t n, uint64_t max)
{
    uint64_t v = 0;
    if (n == 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > max) return -1;
    }
    return (int64_t)v;
}

/* Open `path` (below the root; `dirfd` is /proc/PID, `dirlen` its path's length) as a regular file. */
static int open_regular(int rootfd, int dirfd, size_t dirlen, const char *path)
{
    int fd = pn_open_near(rootfd, dirfd, dirlen, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return fd;
    struct stat st;
    if (fstat(fd, &st) < 0) { int e = errno; close(fd); return -e; }
    if (!S_ISREG(st.st_mode)) { close(fd); return -EINVAL; }
    return fd;
}

/* Append at most `limit` bytes of `path` to `b`; the length read, or -errno (b unchanged). */
static ssize_t read_text(int rootfd, int dirfd, size_t dirlen, const char *path, size_t limit, pn_buf *b)
{
    int fd = open_regular(rootfd, dirfd, dirlen, path);
    if (fd < 0) return fd;
    size_t start = b->len, step = 4096;
    ssize_t r = 0;
    while (b->len - start < limit) {
        size_t want = limit - (b->len - start);
        if (want > step) want = step;
        if (pn_buf_reserve(b, want) < 0) { r = -ENOMEM; break; }
        do { r = read(fd, b->data + b->len, want); } while (r < 0 && errno == EINTR);
        if (r < 0) { r = -errno; break; }
        if (r == 0) break;
        b->len += (size_t)r;
        if (step < 65536) step *= 2;
    }
    close(fd);
    if (r < 0) { b->len = start; return r; }
    return (ssize_t)(b->len - start);
}

/* ---- numa_maps -------------------------------------------------------------- */

typedef struct {
    pn_proc_out *o;
    pn_proc_scratch *w;
    maps_class *classes;
    size_t nclasses;
} maps_state;

/* Find or (when `add`) make the class of (page_kb, huge); NULL when none and no room. */
static maps_class *find_class(maps_state *s, uint64_t page_kb, int huge, int add)
{
    for (size_t i = 0; i < s->nclasses; i++)
        if (s->classes[i].page_kb == page_kb && s->classes[i].huge == huge) return &s->classes[i];
    if (!add || s->nclasses == CLASSES) return NULL;
    maps_class *c = &s->classes[s->nclasses++];
    c->page_kb = page_kb;
    c->huge = huge;
    memset(c->pages, 0, sizeof c->pages);
    return c;
}

/* Index of the policy word [w, w+n) among those seen, -1 when new. */
static ssize_t find_policy(pn_proc_out *o, const char *w, size_t n)
{
    for (size_t i = 0; i < o->npols; i++)
        if (o->pols[i].len == n && memcmp(o->text.data + o->pols[i].off, w, n) == 0) return (ssize_t)i;
    return -1;
}

/* Count one numa_maps line ("<addr> <policy> [key[=value]]..."); 0 or -ENOMEM. */
static int maps_line(maps_state *s, const char *p, size_t len)
{
    pn_proc_out *o = s->o;
    const char *end = p + len;
    char policy[PN_PROC_POLICY_MAX];
    size_t policy_len = 0, npairs = 0, ntok = 0;
    uint64_t page_kb = 0;
    int huge = 0, bad = len > PN_PROC_LINE_MAX;
    while (!bad) {
        while (p < end && is_space(*p)) p++;
        if (p == end) break;
        const char *t = p;
        while (p < end && !is_space(*p)) p++;
        size_t tl = (size_t)(p - t);
        ntok++;
        if (ntok == 1) continue; /* the address */
        if (ntok == 2) {
            policy_len = tl;
            if (tl > PN_PROC_POLICY_MAX) bad = 1;
            else memcpy(policy, t, tl);
            continue;
        }
        /* two kernel mode names hold a space: "prefer (many)" and "weighted interleave" */
        if (ntok == 3 && ((policy_len == 8 && memcmp(policy, "weighted", 8) == 0) || t[0] == '(')) {
            if (policy_len + 1 + tl > PN_PROC_POLICY_MAX) { bad = 1; continue; }
            policy[policy_len] = ' ';
            memcpy(policy + policy_len + 1, t, tl);
            policy_len += 1 + tl;
            continue;
        }
        if (tl == 4 && memcmp(t, "huge", 4) == 0) {
            huge = 1;
        } else if (tl >= 18 && memcmp(t, "kernelpagesize_kB=", 18) == 0) {
            int64_t v = parse_digits(t + 18, tl - 18, PN_PROC_PAGE_KB_MAX);
            if (v < 0) bad = 1;
            else page_kb = (uint64_t)v;
        } else if (tl >= 2 && t[0] == 'N' && t[1] >= '0' && t[1] <= '9') {
            const char *eq = memchr(t, '=', tl);
            int64_t node = eq ? parse_digits(t + 1, (size_t)(eq - t - 1), NODES - 1) : -1;
            int64_t pages = eq ? parse_digits(eq + 1, (size_t)(t + tl - eq - 1), PN_PROC_PAGES_MAX) : -1;
            if (node < 0 || pages < 0) bad = 1;
            else {
                s->w->line_nodes[npairs] = node;
                s->w->line_pages[npairs] = (uint64_t)pages;
                npairs++;
            }
        }
    }
    if (ntok == 0 && !bad) return 0; /* a blank line */
    if (ntok == 1) bad = 1;
    maps_class *c = bad ? NULL : find_class(s, page_kb, huge, 1);
    if (c == NULL) {
        o->maps_bad++;
        return 0;
    }
    /* with the table full, the line's pages still count; its policy word does not */
    ssize_t pol = find_policy(o, policy, policy_len);
    if (pol < 0 && o->npols < PN_PROC_POLICIES_MAX) {
        if (o->npols == o->pols_cap) {
            size_t nc = o->pols_cap ? o->pols_cap * 2 : 8;
            pn_policy_count *np = realloc(o->pols, nc * sizeof *np);
            if (!np) return -ENOMEM;
            o->pols = np;
            o->pols_cap = nc;
        }
        if (pn_buf_reserve(&o->text, policy_len) < 0) return -ENOMEM;
        memcpy(o->text.data + o->text.len, policy, policy_len);
        o->pols[o->npols].off = o->text.len;
        o->pols[o->npols].len = policy_len;
        o->pols[o->npols].lines = 0;
        o->text.len += policy_len;
        pol = (ssize_t)o->npols++;
    }
    if (pol >= 0) o->pols[pol].lines++;
    for (size_t i = 0; i < npairs; i++) c->pages[s->w->line_nodes[i]] += s->w->line_pages[i];
    o->maps_lines++;
    return 0;
}

/* The classes' pages as out->maps: classes in order of first use, nodes ascending, nonzero only. */
static int maps_emit(maps_state *s)
{
    pn_proc_out *o = s->o;
    for (size_t k = 0; k < s->nclasses; k++) {
        maps_class *c = &s->classes[k];
        for (size_t n = 0; n < NODES; n++) {
            if (!c->pages[n]) continue;
            if (o->nmaps == o->maps_cap) {
                size_t nc = o->maps_cap ? o->maps_cap * 2 : 16;
                pn_maps_count *nm = realloc(o->maps, nc * sizeof *nm);
                if (!nm) return -ENOMEM;
                o->maps = nm;
                o->maps_cap = nc;
            }
            o->maps[o->nmaps++] = (pn_maps_count){c->page_kb, c->huge, (int64_t)n, c->pages[n]};
        }
    }
    return 0;
}

/* Stream numa_maps through out->chunk, counting each line; 0, -errno, -EFBIG (limit reached) or -ENOMEM. */
static int read_maps(int rootfd, int dirfd, size_t dirlen, const char *path, pn_proc_out *o,
                     pn_proc_scratch *w)
{
    if (!w->chunk && !(w->chunk = malloc(CHUNK_CAP))) return -ENOMEM;
    if (!w->line_nodes && !(w->line_nodes = malloc(LINE_PAIRS * sizeof *w->line_nodes))) return -ENOMEM;
    if (!w->line_pages && !(w->line_pages = malloc(LINE_PAIRS * sizeof *w->line_pages))) return -ENOMEM;
    if (!w->classes && !(w->classes = malloc(CLASSES * sizeof(maps_class)))) return -ENOMEM;
    maps_state s = {o, w, w->classes, 0};
    int fd = open_regular(rootfd, dirfd, dirlen, path);
    if (fd < 0) return fd;
    char *chunk = w->chunk;
    size_t have = 0;
    uint64_t total = 0;
    int skipping = 0, rc = 0, truncated = 0;
    for (;;) {
        /* at most LIMIT + 1 bytes: one past the limit says the file goes on */
        size_t want = CHUNK_CAP - have;
        if (want > MAPS_READ) want = MAPS_READ;
        if (want > PN_PROC_MAPS_LIMIT + 1ull - total) want = (size_t)(PN_PROC_MAPS_LIMIT + 1ull - total);
        ssize_t r;
        do { r = read(fd, chunk + have, want); } while (r < 0 && errno == EINTR);
        if (r < 0) { rc = -errno; break; }
        if (r == 0) break;
        total += (uint64_t)r;
        have += (size_t)r;
        if (total > PN_PROC_MAPS_LIMIT) {
            truncated = 1;
            have--; /* the byte past the limit */
        }
        size_t start = 0;
        char *nl;
        while ((nl = memchr(chunk + start, '\n', have - start)) != NULL) {
            size_t len = (size_t)(nl - (chunk + start));
            if (skipping) { skipping = 0; o->maps_bad++; } /* the end of an over-long line */
            else if ((rc = maps_line(&s, chunk + start, len)) < 0) break;
            start += len + 1;
        }
        if (rc < 0 || truncated) break;
        size_t left = have - start;
        if (skipping || left > PN_PROC_LINE_MAX) {
            skipping = 1;
            have = 0;
        } else {
            memmove(chunk, chunk + start, left);
            have = left;
        }
    }
    close(fd);
    if (rc == 0 && truncated) rc = -EFBIG; /* the partial line at the limit is dropped */
    else if (rc == 0 && skipping) o->maps_bad++;
    else if (rc == 0 && have) rc = maps_line(&s, chunk, have); /* a last line without '\n' */
    if (rc == 0 || rc == -EFBIG) {
        int e = maps_emit(&s);
        if (e < 0) rc = e;
    }
    if (rc < 0 && rc != -EFBIG) { /* unreadable: nothing counted */
        o->nmaps = o->npols = 0;
        o->maps_lines = o->maps_bad = 0;
    }
    return rc;
}

/* ---- threads ---------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Field 39 (processor) of a stat text: the 37th word after the last ')'; -1 when absent or not a number. */
static int stat_processor(const char *s, size_t n)
{
    const char *end = s + n, *p = NULL;
    for (const char *q = s; q < end; q++)
        if (*q == ')') p = q + 1;
    if (!p) return -1;
    for (int word = 0; p < end; word++) {
        while (p < end && is_space(*p)) p++;
        if (p == end) break;
        const char *t = p;
        while (p < end && !is_space(*p)) p++;
        if (word == 36) return (int)parse_digits(t, (size_t)(p - t), PN_MAX_ID);
    }
    return -1;
}

/* The value of the "Cpus_allowed_list:" line of a status text: [*off, *off + len); -ENOENT when none. */
static ssize_t status_allowed(const char *s, size_t n, size_t *off)
{
    static const char key[] = "Cpus_allowed_list:";
    const size_t kl = sizeof key - 1;
    for (size_t i = 0; i + kl <= n; i++) {
        if ((i == 0 || s[i - 1] == '\n') && memcmp(s + i, key, kl) == 0) {
            size_t a = i + kl, b;
            while (a < n && (s[a] == ' ' || s[a] == '\t')) a++;
            b = a;
            while (b < n && s[b] != '\n') b++;
            while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) b--;
            *off = a;
            return (ssize_t)(b - a);
        }
        const char *nl = memchr(s + i, '\n', n - i);
        if (!nl) break;
        i = (size_t)(nl - s); /* the loop's i++ moves past the newline */
    }
    return -ENOENT;
}

static int read_threads(int rootfd, int dirfd, size_t dirlen, int pid, pn_proc_out *o, pn_proc_scratch *w)
{
    char path[96];
    o->threads_rc = 0;
    snprintf(path, sizeof path, "proc/%d/task", pid);
    int fd = pn_open_near(rootfd, dirfd, dirlen, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) { o->threads_rc = fd; return 0; }
    DIR *d = fdopendir(fd);
    if (!d) { o->threads_rc = -errno; close(fd); return 0; }
    int *tids = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        int64_t tid = parse_digits(de->d_name, strlen(de->d_name), 0x7fffffff);
        if (tid <= 0) continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            int *nt = realloc(tids, nc * sizeof *nt);
            if (!nt) { rc = -ENOMEM; break; }
            tids = nt;
            cap = nc;
        }
        tids[n++] = (int)tid;
    }
    if (rc == 0 && errno) o->threads_rc = -errno;
    closedir(d);
    if (rc < 0 || o->threads_rc < 0) { free(tids); return rc; }
    qsort(tids, n, sizeof *tids, cmp_int);
    if (n > PN_PROC_THREADS_MAX) n = PN_PROC_THREADS_MAX;
    if (o->threads_cap < n) {
        pn_thread_info *nt = realloc(o->threads, n * sizeof *nt);
        if (!nt) { free(tids); return -ENOMEM; }
        o->threads = nt;
        o->threads_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        pn_thread_info *t = &o->threads[i];
        t->tid = tids[i];
        t->processor = -1;
        /* the leader's files say what the process's own stat and status said (when those were read):
         * one thread, three files instead of five */
        int leader = tids[i] == pid;
        ssize_t r;
        if (leader && o->stat_len >= 0) {
            t->processor = stat_processor(o->text.data + o->stat_off, (size_t)o->stat_len);
        } else {
            w->text.len = 0;
            snprintf(path, sizeof path, "proc/%d/task/%d/stat", pid, tids[i]);
            r = read_text(rootfd, dirfd, dirlen, path, PN_PROC_TEXT_LIMIT, &w->text);
            if (r == -ENOMEM) { rc = -ENOMEM; break; }
            if (r >= 0) t->processor = stat_processor(w->text.data, (size_t)r);
        }
        size_t off = 0;
        ssize_t len;
        int own_text = leader && o->status_len >= 0; /* the value lies in o->text, which may move */
        if (own_text) {
            len = status_allowed(o->text.data + o->status_off, (size_t)o->status_len, &off);
            off += o->status_off;
        } else {
            w->text.len = 0;
            snprintf(path, sizeof path, "proc/%d/task/%d/status", pid, tids[i]);
            r = read_text(rootfd, dirfd, dirlen, path, PN_PROC_TEXT_LIMIT, &w->text);
            if (r == -ENOMEM) { rc = -ENOMEM; break; }
            len = r < 0 ? r : status_allowed(w->text.data, (size_t)r, &off);
        }
        t->allowed_len = len;
        t->allowed_off = 0;
        if (len >= 0) {
            if (pn_buf_reserve(&o->text, (size_t)len) < 0) { rc = -ENOMEM; break; }
            memcpy(o->text.data + o->text.len, (own_text ? o->text.data : w->text.data) + off, (size_t)len);
            t->allowed_off = o->text.len;
            o->text.len += (size_t)len;
        }
        o->nthreads = i + 1;
    }
    free(tids);
    o->threads_rc = (ssize_t)n;
    return rc;
}

/* ---- one process -------------------------------------------------------------- */

int pn_read_proc(int rootfd, int pid, int flags, pn_proc_out *o, pn_proc_scratch *w)
{
    char path[96];
    o->text.len = 0;
    o->stat_len = o->status_len = -ENODATA;
    o->stat_off = o->status_off = 0;
    o->maps_rc = -ENODATA;
    o->maps_lines = o->maps_bad = 0;
    o->nmaps = o->npols = o->nthreads = 0;
    o->threads_rc = -ENODATA;
    if (pid <= 0) return -ESRCH;
    int dirlen = snprintf(path, sizeof path, "proc/%d", pid);
    int dirfd = pn_open_in_root(rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return dirfd;
    int rc = 0;
    if (flags & PN_PROC_STAT) {
        snprintf(path, sizeof path, "proc/%d/stat", pid);
        o->stat_off = o->text.len;
        o->stat_len = read_text(rootfd, dirfd, (size_t)dirlen, path, PN_PROC_TEXT_LIMIT, &o->text);
        if (o->stat_len == -ENOMEM) rc = -ENOMEM;
    }
    if (rc == 0 && (flags & PN_PROC_STATUS)) {
        snprintf(path, sizeof path, "proc/%d/status", pid);
        o->status_off = o->text.len;
        o->status_len = read_text(rootfd, dirfd, (size_t)dirlen, path, PN_PROC_TEXT_LIMIT, &o->text);
        if (o->status_len == -ENOMEM) rc = -ENOMEM;
    }
    if (rc == 0 && (flags & PN_PROC_MAPS)) {
        snprintf(path, sizeof path, "proc/%d/numa_maps", pid);
        o->maps_rc = read_maps(rootfd, dirfd, (size_t)dirlen, path, o, w);
        if (o->maps_rc == -ENOMEM) rc = -ENOMEM;
    }
    if (rc == 0 && (flags & PN_PROC_THREADS)) rc = read_threads(rootfd, dirfd, (size_t)dirlen, pid, o, w);
    close(dirfd);
    return rc;
}

void pn_proc_free(pn_proc_out *o)
{
    free(o->text.data);
    free(o->maps);
    free(o->pols);
    free(o->threads);
    memset(o, 0, sizeof *o);
}

void pn_proc_scratch_free(pn_proc_scratch *w)
{
    free(w->chunk);
    free(w->text.data);
    free(w->line_nodes);
    free(w->line_pages);
    free(w->classes);
    memset(w, 0, sizeof *w);
}
