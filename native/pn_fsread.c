/* pn_fsread.c -- the root-relative reader.
 *
 * Every path is resolved inside a root directory fd, the way
 * openat2(RESOLVE_IN_ROOT) does it: ".." never climbs above the root and an
 * absolute symlink restarts from the root, so reading a dump of another
 * machine can never reach this machine's files.  Kernels without openat2
 * (before 5.6, or where seccomp refuses it) get the same semantics from a
 * component walk with O_NOFOLLOW (twin: pynuma/_pure_fsread.py).
 * Magic links (/proc/PID/fd/N, /proc/PID/exe) are refused with openat2 and
 * re-based like plain symlinks by the walk; pynuma never reads through them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pn.h"

#if PN_HAS_OPENAT2
#include <linux/openat2.h>
#endif

#define PN_MAX_LINKS 40
#define PN_MAX_DEPTH 256

/* -1 unknown, 0 refused by the kernel (ENOSYS), 1 works; read and set
 * atomically: the scan's threads (and Python threads) share it */
static int openat2_state_v = -1;
#define OPENAT2_STATE() __atomic_load_n(&openat2_state_v, __ATOMIC_RELAXED)
#define SET_OPENAT2_STATE(v) __atomic_store_n(&openat2_state_v, (v), __ATOMIC_RELAXED)

int pn_open_root(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

static int is_sep(char c) { return c == '/'; }

/* Copy the next component of *p into name; advance *p.  0 when none left. */
static size_t next_component(const char **p, char *name)
{
    const char *s = *p;
    for (;;) {
        while (is_sep(*s)) s++;
        const char *e = s;
        while (*e && !is_sep(*e)) e++;
        size_t n = (size_t)(e - s);
        if (n == 1 && s[0] == '.') { s = e; continue; }
        if (n >= NAME_MAX + 1) n = NAME_MAX + 1; /* caller reports ENAMETOOLONG */
        memcpy(name, s, n < NAME_MAX + 1 ? n : NAME_MAX);
        name[n <= NAME_MAX ? n : NAME_MAX] = '\0';
        *p = e;
        return (size_t)(e - s);
    }
}

static int only_dots_left(const char *p)
{
    const char *s = p;
    char name[NAME_MAX + 1];
    return next_component(&s, name) == 0;
}

/* The walk: a stack of directory fds below the root and the text still to
 * resolve (`work`, rebuilt when a symlink is spliced in). */
static int walk_open(int rootfd, const char *path, int flags)
{
    int stack[PN_MAX_DEPTH];
    int depth = 0, links = 0, rc;
    char bufs[2][PATH_MAX * 2];
    char target[PATH_MAX + 1];
    char name[NAME_MAX + 1];
    int cur_buf = 0;
    size_t plen = strlen(path);
    if (plen >= sizeof bufs[0]) return -ENAMETOOLONG;
    memcpy(bufs[0], path, plen + 1);
    const char *p = bufs[0];

    for (;;) {
        size_t n = next_component(&p, name);
        int last = only_dots_left(p);
        int dir = depth ? stack[depth - 1] : rootfd;
        if (n == 0) { /* the path names the current directory itself */
            rc = openat(dir, ".", flags | O_CLOEXEC);
            rc = rc < 0 ? -errno : rc;
            goto out;
        }
        if (n > NAME_MAX) { rc = -ENAMETOOLONG; goto out; }
        if (n == 2 && name[0] == '.' && name[1] == '.') {
            if (depth) close(stack[--depth]);
            if (last) {
                dir = depth ? stack[depth - 1] : rootfd;
                rc = openat(dir, ".", flags | O_CLOEXEC);
                rc = rc < 0 ? -errno : rc;
                goto out;
            }
            continue;
        }
        int fd;
        if (last)
            /* a slash after the last name can only come from a link's target ("file/"): it must
             * name a directory, as openat2 and every kernel lookup insist (ENOTDIR otherwise) */
            fd = openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC | (strchr(p, '/') ? O_DIRECTORY : 0));
        else
            fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
#if PN_HAS_O_PATH
                        | O_PATH
#endif
            );
        ssize_t tl = -1;
        if (fd >= 0) {
            if (!last) {
                if (depth == PN_MAX_DEPTH) { close(fd); rc = -ENAMETOOLONG; goto out; }
                stack[depth++] = fd;
                continue;
            }
#if PN_HAS_O_PATH
            struct stat st;
            /* O_PATH|O_NOFOLLOW opens a final symlink itself: follow it */
            if ((flags & O_PATH) && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
                tl = readlinkat(fd, "", target, PATH_MAX);
                close(fd);
                if (tl < 0) { rc = -errno; goto out; }
            } else
#endif
            { rc = fd; goto out; }
        } else {
            int e = errno;
            if (e != ELOOP && e != ENOTDIR && e != EMLINK) { rc = -e; goto out; }
            tl = readlinkat(dir, name, target, PATH_MAX);
            if (tl < 0) { rc = -e; goto out; }
        }
        /* splice the link target in front of the rest of the path */
        if (++links > PN_MAX_LINKS) { rc = -ELOOP; goto out; }
        target[tl] = '\0';
        if (target[0] == '/')
            while (depth) close(stack[--depth]);
        size_t rest = strlen(p);
        char *nb = bufs[cur_buf ^ 1];
        if ((size_t)tl + 1 + rest + 1 > sizeof bufs[0]) { rc = -ENAMETOOLONG; goto out; }
        memcpy(nb, target, (size_t)tl);
        nb[tl] = '/';
        memcpy(nb + tl + 1, p, rest + 1);
        if (!rest)
            nb[tl] = '\0'; /* the link was the last name: keep the target's own trailing slash, add none */
        cur_buf ^= 1;
        p = nb;
    }
out:
    while (depth) close(stack[--depth]);
    return rc;
}

#if PN_HAS_OPENAT2
static int try_openat2(int rootfd, const char *path, int flags)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    for (int tries = 0; tries < 4; tries++) {
        long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof how);
        if (fd >= 0) return (int)fd;
        if (errno != EAGAIN) return -errno; /* EAGAIN: a rename raced with ".." */
    }
    return -EAGAIN;
}
#endif

int pn_openat2_works(int rootfd)
{
#if PN_HAS_OPENAT2
    if (OPENAT2_STATE() < 0) {
        int fd = try_openat2(rootfd, ".", O_RDONLY | O_DIRECTORY);
        if (fd >= 0) close(fd);
        SET_OPENAT2_STATE(!(fd == -ENOSYS || fd == -EPERM || fd == -EINVAL || fd == -E2BIG));
    }
    return OPENAT2_STATE();
#else
    (void)rootfd;
    return 0;
#endif
}

void pn_fsread_walk_only(int on)
{
    SET_OPENAT2_STATE(on ? 0 : -1);
}

/* Drop empty and "." components ("a//b/./c/" -> "a/b/c") so that openat2 and
 * the walk treat "file/." and "file/" alike (as the pure twin does: they name
 * the file).  Returns path itself when it is already clean. */
static const char *clean_path(const char *path, char *buf, size_t cap)
{
    const char *s = path;
    int dirty = 0;
    for (const char *c = s; *c; c++)
        if (*c == '/' && (c[1] == '/' || c[1] == '\0' || (c[1] == '.' && (c[2] == '/' || c[2] == '\0'))))
            dirty = 1;
    if (s[0] == '.' && (s[1] == '/' || s[1] == '\0')) dirty = 1;
    if (!dirty) return path;
    size_t at = 0;
    while (*s) {
        while (*s == '/') s++;
        const char *e = s;
        while (*e && *e != '/') e++;
        size_t n = (size_t)(e - s);
        if (n && !(n == 1 && s[0] == '.')) {
            if (at + n + 2 > cap) return NULL;
            if (at) buf[at++] = '/';
            memcpy(buf + at, s, n);
            at += n;
        }
        s = e;
    }
    if (!at) buf[at++] = '.';
    buf[at] = '\0';
    return buf;
}

int pn_open_in_root(int rootfd, const char *path, int flags)
{
    char clean[PATH_MAX];
    while (*path == '/') path++;
    if (!*path) path = ".";
    path = clean_path(path, clean, sizeof clean);
    if (!path) return -ENAMETOOLONG;
#if PN_HAS_OPENAT2
    int state = OPENAT2_STATE();
    if (state != 0) {
        int fd = try_openat2(rootfd, path, flags);
        if (fd >= 0) {
            if (state < 0) SET_OPENAT2_STATE(1);
            return fd;
        }
        if (fd == -ENOSYS || (state < 0 && (fd == -EPERM || fd == -EINVAL || fd == -E2BIG))) {
            /* old kernel or a seccomp filter: decide once with a probe */
            if (!pn_openat2_works(rootfd)) return walk_open(rootfd, path, flags);
        }
        if (fd != -EAGAIN && fd != -EPERM) return fd;
        /* EAGAIN after retries, or EPERM: let the walk give the real answer */
    }
#endif
    return walk_open(rootfd, path, flags);
}

int pn_open_near(int rootfd, int dirfd, size_t dirlen, const char *path, int flags)
{
#if PN_HAS_OPENAT2
    while (*path == '/') path++;
    if (dirfd >= 0 && OPENAT2_STATE() > 0 && strlen(path) > dirlen + 1 && path[dirlen] == '/') {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (unsigned long long)(flags | O_CLOEXEC);
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dirfd, path + dirlen + 1, &how, sizeof how);
        if (fd >= 0) return (int)fd;
        /* EXDEV: the walk would leave the directory (the root may be further up); EAGAIN: a rename raced */
        if (errno != EXDEV && errno != EAGAIN) return -errno;
    }
#else
    (void)dirfd;
    (void)dirlen;
#endif
    return pn_open_in_root(rootfd, path, flags);
}

/* `fd` if it is a regular file, else closed: -EISDIR for a directory, -ENXIO for anything else
 * (FIFO, socket, device: what open(2) itself answers for a socket).  Never fails on sysfs,
 * procfs or cgroupfs, whose files are all regular; a dump may hold anything. */
static int regular_only(int fd)
{
    struct stat st;
    if (fd < 0) return fd;
    if (fstat(fd, &st) < 0) { int e = errno; close(fd); return -e; }
    if (S_ISREG(st.st_mode)) return fd;
    close(fd);
    return S_ISDIR(st.st_mode) ? -EISDIR : -ENXIO;
}

int pn_open_file(int rootfd, int dirfd, size_t dirlen, const char *path, int flags)
{
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer, forever */
    return regular_only(pn_open_near(rootfd, dirfd, dirlen, path, flags | O_NONBLOCK));
}

ssize_t pn_read_fd(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int pn_buf_reserve(pn_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra) return 0;
    size_t nc = b->cap ? b->cap : 4096; /* small: big transient buffers cost page faults on every call */
    while (nc - b->len < extra) nc *= 2;
    char *nd = realloc(b->data, nc);
    if (!nd) return -ENOMEM;
    b->data = nd;
    b->cap = nc;
    return 0;
}

/* May a short read() of `path` be taken as its end (saving the read() that
 * would return 0)?  Yes where every file is either a regular file (a dump:
 * a short read of a regular file is its end) or a plain sysfs attribute:
 * show() fills one buffer of at most a page and the first read() returns
 * all of it.  sysfs *binary* attributes (ACPI tables, PCI config) come in
 * page-sized pieces, so a short read that is a whole number of 4 KiB pages
 * is not trusted (every larger page size is a multiple of 4 KiB).  Not under
 * /proc, cgroupfs, debugfs...: seq_file files with many records (mounts,
 * cgroup.procs) return one kernel buffer per read(), short but not the end. */
static int short_read_ends(const char *path)
{
    static const char *const single_shot[] = {
        "sys/devices/", "sys/bus/", "sys/class/", "sys/kernel/mm/", NULL,
    };
    while (*path == '/') path++;
    for (const char *const *p = single_shot; *p; p++)
        if (strncmp(path, *p, strlen(*p)) == 0) return 1;
    return 0;
}

int pn_read_one(int rootfd, const char *path, size_t limit, pn_buf *out, ssize_t *result, size_t *offset)
{
    *offset = out->len;
    int fd = pn_open_file(rootfd, -1, 0, path, O_RDONLY);
    if (fd < 0) { *result = fd; return 0; }
    int ends = short_read_ends(path);
    /* read straight into the shared buffer, growing it as needed: the first
     * read asks for a page (most files are a line), full reads double that up
     * to 64 KiB, and after a short read only the end (0) is expected, so any
     * room left will do -- the buffer stays small and needs no new pages */
    size_t got = 0, step = 4096;
    int was_short = 0;
    ssize_t r = 0;
    while (got < limit) {
        size_t chunk = limit - got < step ? limit - got : step;
        if (pn_buf_reserve(out, was_short ? 1 : chunk) < 0) { close(fd); return -ENOMEM; }
        if (chunk > out->cap - out->len) chunk = out->cap - out->len;
        do { r = read(fd, out->data + out->len, chunk); } while (r < 0 && errno == EINTR);
        if (r < 0) { r = -errno; break; }
        out->len += (size_t)r;
        got += (size_t)r;
        if (r == 0 || (ends && (size_t)r < chunk && (size_t)r % 4096 != 0)) break;
        was_short = (size_t)r < chunk;
        if (!was_short && step < 65536) step *= 2;
    }
    close(fd);
    if (r < 0) { out->len = *offset; *result = r; }
    else *result = (ssize_t)got;
    return 0;
}

int pn_read_many(int rootfd, const char *const *paths, size_t n, size_t limit,
                 pn_buf *out, ssize_t *results, size_t *offsets)
{
    for (size_t i = 0; i < n; i++)
        if (pn_read_one(rootfd, paths[i], limit, out, &results[i], &offsets[i]) < 0) return -ENOMEM;
    return 0;
}

ssize_t pn_list_at(int rootfd, const char *path, pn_buf *out)
{
    int fd = pn_open_in_root(rootfd, path, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
    if (fd < 0) return fd;
    DIR *d = fdopendir(fd);
    if (!d) { int e = errno; close(fd); return -e; }
    ssize_t count = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))) continue;
        size_t l = strlen(nm) + 1;
        if (pn_buf_reserve(out, l) < 0) { closedir(d); return -ENOMEM; }
        memcpy(out->data + out->len, nm, l);
        out->len += l;
        count++;
    }
    int e = errno;
    closedir(d);
    return e ? -e : count;
}

int pn_kind_at(int rootfd, const char *path)
{
    struct stat st;
#if PN_HAS_O_PATH
    int fd = pn_open_in_root(rootfd, path, O_RDONLY | O_PATH);
#else
    int fd = pn_open_in_root(rootfd, path, O_RDONLY);
#endif
    if (fd < 0) return 0;
    int r = fstat(fd, &st);
    close(fd);
    if (r < 0) return 0;
    return S_ISDIR(st.st_mode) ? 2 : 1;
}

ssize_t pn_write_at(int rootfd, const char *path, const char *data, size_t len)
{
    /* O_TRUNC as a shell's `echo 2 > knob`: ignored by sysfs/cgroupfs, and a
     * plain file in a fake root ends up holding exactly `data` */
    int fd = pn_open_file(rootfd, -1, 0, path, O_WRONLY | O_TRUNC);
    if (fd < 0) return fd;
    ssize_t r;
    do { r = write(fd, data, len); } while (r < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    return r < 0 ? -e : r;
}
