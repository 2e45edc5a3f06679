/* pn.h -- the native core of pynuma.
 *
 * Plain C, no Python objects.  Every function returns 0 (or a count/length)
 * on success and -errno on failure; the Cython layer turns -errno into the
 * matching OSError or ValueError.  Bitmaps are arrays of uint64_t words,
 * least significant first, sized by the caller or grown with malloc (no cap
 * at 64 CPUs).
 */
#ifndef PN_H
#define PN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pn_features.h"

/* ---- root-relative reader (pn_fsread.c) -------------------------------- */

/* Open a directory to serve as root; fd or -errno. */
int pn_open_root(const char *path);

/* Open `path` (relative; leading '/' ignored) inside `rootfd`, never leaving
 * it: `..` stops at the root and absolute symlinks restart from the root.
 * openat2(RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) when the kernel has it, else
 * a component walk with O_NOFOLLOW.  A final symlink is followed.  fd or -errno. */
int pn_open_in_root(int rootfd, const char *path, int flags);

/* pn_open_in_root, for many files below one directory of the root: `dirfd`
 * is that directory, opened with pn_open_in_root from the path made of
 * `path`'s first `dirlen` characters.  The rest of `path` is looked up from
 * `dirfd` (fewer components per file), kept beneath it
 * (RESOLVE_BENEATH); where it would leave it (an absolute symlink, a ".."
 * above it) the whole path is resolved from the root instead, so the answer
 * is always pn_open_in_root's.  `dirfd` < 0, a path not below it, or no
 * openat2: pn_open_in_root.  fd or -errno. */
int pn_open_near(int rootfd, int dirfd, size_t dirlen, const char *path, int flags);

/* Open a file to read or write it, as pn_open_near(rootfd, dirfd, dirlen, path, flags) does, but
 * never blocking (O_NONBLOCK) and only when it is a regular file: -EISDIR for a directory, -ENXIO
 * for a FIFO, socket or device.  fd or -errno. */
int pn_open_file(int rootfd, int dirfd, size_t dirlen, const char *path, int flags);

/* Read from `fd` until EOF or `cap` bytes; count or -errno. */
ssize_t pn_read_fd(int fd, char *buf, size_t cap);

/* A growable byte buffer owned by the caller (free `data` with free()). */
typedef struct {
    char *data;
    size_t len, cap;
} pn_buf;

/* Make room for `extra` more bytes in `b` (grown by doubling); 0 or -ENOMEM. */
int pn_buf_reserve(pn_buf *b, size_t extra);

/* Read each of `n` paths (at most `limit` bytes each) into `out`, appending.
 * results[i] is the length read (offsets[i] where it starts in out->data) or
 * -errno.  Returns 0, or -ENOMEM when the buffer cannot grow. */
int pn_read_many(int rootfd, const char *const *paths, size_t n, size_t limit,
                 pn_buf *out, ssize_t *results, size_t *offsets);

/* Read one file (as pn_read_many does for each of its paths): *result is the
 * length read (*offset where it starts in out->data) or -errno.  Returns 0,
 * or -ENOMEM when the buffer cannot grow. */
int pn_read_one(int rootfd, const char *path, size_t limit, pn_buf *out, ssize_t *result, size_t *offset);

/* Names in the directory `path` (without . and ..), NUL-terminated one after
 * the other in `out`; count or -errno. */
ssize_t pn_list_at(int rootfd, const char *path, pn_buf *out);

/* 0 missing/unreachable, 1 not a directory, 2 directory. */
int pn_kind_at(int rootfd, const char *path);

/* One write(2) of `data` to the existing file `path`; count or -errno. */
ssize_t pn_write_at(int rootfd, const char *path, const char *data, size_t len);

/* Tests: 1 forces the component walk (as on a kernel without openat2), 0 re-probes. */
void pn_fsread_walk_only(int on);

/* 1 when openat2 is compiled in and the running kernel accepts it. */
int pn_openat2_works(int rootfd);

/* ---- bitmaps (pn_bitmap.c) ---------------------------------------------- */

/* Largest id a cpulist may name (bounds memory on hostile input): CPU ids are below
 * CONFIG_NR_CPUS, at most 8192 on any architecture (pynuma/limits.py MAX_CPUS). */
#define PN_MAX_ID 8191u

/* Where a parse failed: [pos, end) of the offending item, and why. */
typedef struct {
    size_t pos, end;
    int why; /* PN_E_* */
} pn_parse_err;

enum { PN_E_ITEM = 1, PN_E_EMPTY_ITEM, PN_E_RANGE, PN_E_STRIDE, PN_E_TOO_BIG,
       PN_E_EMPTY_MASK, PN_E_WORD_LONG, PN_E_WORD, PN_E_MASK_TOO_BIG };

/* Parse a cpulist of `len` bytes into *words (malloc'd, *nwords long,
 * possibly 0 words).  0, -EINVAL (see *err) or -ENOMEM. */
int pn_cpulist_parse(const char *s, size_t len, uint64_t **words, size_t *nwords, pn_parse_err *err);

/* Canonical cpulist of a bitmap into buf (NUL-terminated when it fits);
 * returns the length the full text needs (like snprintf). */
size_t pn_cpulist_format(const uint64_t *words, size_t nwords, char *buf, size_t cap);

/* Parse a cpumask (comma-separated 32-bit hex words, most significant
 * first).  0, -EINVAL (see *err) or -ENOMEM. */
int pn_cpumask_parse(const char *s, size_t len, uint64_t **words, size_t *nwords, pn_parse_err *err);

/* Cpumask text with at least `min_words` 32-bit words into buf (size must be
 * >= 9 * max(words needed, min_words) + 1); returns the length. */
size_t pn_cpumask_format(const uint64_t *words, size_t nwords, size_t min_words, char *buf);

/* Convert words between host order and little-endian bytes in place. */
void pn_words_le(uint64_t *words, size_t nwords);

/* ---- ACPI tables (pn_acpi.c) ---------------------------------------------- */

enum { PN_ACPI_OK = 0, PN_ACPI_TRUNCATED, PN_ACPI_SIGNATURE, PN_ACPI_LENGTH, PN_ACPI_CHECKSUM,
       PN_ACPI_COUNT, PN_ACPI_SUBTABLE, PN_ACPI_SUBTABLE_SHORT };

/* Check a table's header: signature, length field == len, checksum.  PN_ACPI_*. */
int pn_acpi_check(const uint8_t *data, size_t len, const char *sig, size_t min_len);

/* SLIT: validate and return the locality count in *count and the first
 * entry's offset (entries are count*count bytes, row-major).  PN_ACPI_*. */
int pn_slit_parse(const uint8_t *data, size_t len, uint64_t *count, size_t *entries_off);

/* 1 when the kernel would use the matrix; else 0 with the failing [i][j]. */
int pn_slit_valid(const uint8_t *entries, size_t n, size_t *bad_i, size_t *bad_j);

typedef struct {
    uint32_t type, domain, hwid, flags;
    uint64_t base, length;
} pn_srat_entry;

/* SRAT: decode up to `cap` known subtables into `out` (table order).  Returns
 * PN_ACPI_*; *count gets the number of known subtables (may exceed cap: call
 * again with more room); *bad_off the offset of a bad subtable. */
int pn_srat_parse(const uint8_t *data, size_t len, pn_srat_entry *out, size_t cap,
                  size_t *count, size_t *bad_off, unsigned *revision);

#endif /* PN_H */
