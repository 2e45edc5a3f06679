/* pn_bitmap.c -- Linux cpulist / cpumask text <-> uint64 word bitmaps.
 *
 * Accepts and rejects exactly what pynuma/_pure_bitmap.py does (the pure
 * twin is the oracle; tests compare both on generated input):
 *   cpulist: outer " \t\r\n\0" trimmed; items split on ','; each item
 *            trimmed of " \t"; "a", "a-b" (a <= b), "a-b:used/group"
 *            (0 < used <= group); ASCII decimal only; ids <= PN_MAX_ID.
 *   cpumask: outer trim as above; words split on ','; each trimmed of
 *            " \t", optional "0x"; 0..8 hex digits (empty word = 0); no
 *            bit above PN_MAX_ID (leading zero words are fine).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pn.h"

static int outer_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0'; }
static int item_space(char c) { return c == ' ' || c == '\t'; }

static void trim(const char *s, size_t *b, size_t *e, int (*sp)(char))
{
    while (*b < *e && sp(s[*b])) (*b)++;
    while (*e > *b && sp(s[*e - 1])) (*e)--;
}

/* grow *w to hold bit `bit` */
static int reserve(uint64_t **w, size_t *n, size_t *cap, uint64_t bit)
{
    size_t need = (size_t)(bit / 64) + 1;
    if (need <= *n) return 0;
    if (need > *cap) {
        size_t nc = *cap ? *cap : 4;
        while (nc < need) nc *= 2;
        uint64_t *nw = realloc(*w, nc * sizeof *nw);
        if (!nw) return -ENOMEM;
        *w = nw;
        *cap = nc;
    }
    memset(*w + *n, 0, (need - *n) * sizeof **w);
    *n = need;
    return 0;
}

static void set_range(uint64_t *w, uint64_t lo, uint64_t hi) /* inclusive */
{
    while (lo <= hi) {
        size_t i = lo / 64;
        unsigned b = lo % 64;
        uint64_t span = hi - lo + 1;
        if (b == 0 && span >= 64) {
            w[i] = ~(uint64_t)0;
            lo += 64;
            continue;
        }
        unsigned cnt = (unsigned)(span < 64 - b ? span : 64 - b);
        uint64_t m = (cnt == 64 ? ~(uint64_t)0 : ((((uint64_t)1) << cnt) - 1)) << b;
        w[i] |= m;
        lo += cnt;
    }
}

/* ASCII decimal in s[b,e); -1 when not a number, -2 when above PN_MAX_ID. */
static int64_t number(const char *s, size_t b, size_t e)
{
    if (b >= e) return -1;
    uint64_t v = 0;
    int big = 0;
    for (size_t i = b; i < e; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        if (!big) {
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > PN_MAX_ID) big = 1;
        }
    }
    return big ? -2 : (int64_t)v;
}

static size_t find(const char *s, size_t b, size_t e, char c)
{
    for (size_t i = b; i < e; i++)
        if (s[i] == c) return i;
    return e;
}

int pn_cpulist_parse(const char *s, size_t len, uint64_t **words, size_t *nwords, pn_parse_err *err)
{
    size_t b = 0, e = len, n = 0, cap = 0;
    uint64_t *w = NULL;
    int rc = 0;
    trim(s, &b, &e, outer_space);
    *words = NULL;
    *nwords = 0;
    if (b == e) return 0;
    for (size_t pos = b; pos <= e;) {
        size_t stop = find(s, pos, e, ',');
        size_t ib = pos, ie = stop;
        trim(s, &ib, &ie, item_space);
        err->pos = ib;
        err->end = ie;
        if (ib == ie) { err->why = PN_E_EMPTY_ITEM; rc = -EINVAL; goto fail; }
        size_t colon = find(s, ib, ie, ':');
        size_t dash = find(s, ib, colon, '-');
        int64_t lo = number(s, ib, dash);
        int64_t hi = dash < colon ? number(s, dash + 1, colon) : lo;
        int64_t used = 0, group = 0;
        int stride = colon < ie, slash = 0;
        if (stride) {
            size_t sl = find(s, colon + 1, ie, '/');
            slash = sl < ie;
            used = number(s, colon + 1, sl);
            group = slash ? number(s, sl + 1, ie) : 0;
        }
        if (lo == -1 || hi == -1 || used == -1 || group == -1) { err->why = PN_E_ITEM; rc = -EINVAL; goto fail; }
        if (lo == -2 || hi == -2 || used == -2 || group == -2) { err->why = PN_E_TOO_BIG; rc = -EINVAL; goto fail; }
        if (hi < lo) { err->why = PN_E_RANGE; rc = -EINVAL; goto fail; }
        if (stride && (!slash || used == 0 || group == 0 || used > group)) {
            err->why = PN_E_STRIDE; rc = -EINVAL; goto fail;
        }
        if ((rc = reserve(&w, &n, &cap, (uint64_t)hi)) < 0) goto fail;
        if (!stride) {
            set_range(w, (uint64_t)lo, (uint64_t)hi);
        } else {
            for (uint64_t st = (uint64_t)lo; st <= (uint64_t)hi; st += (uint64_t)group) {
                uint64_t last = st + (uint64_t)used - 1;
                set_range(w, st, last < (uint64_t)hi ? last : (uint64_t)hi);
            }
        }
        pos = stop + 1;
    }
    *words = w;
    *nwords = n;
    return 0;
fail:
    free(w);
    return rc;
}

static size_t put_num(char *buf, size_t cap, size_t at, uint64_t v)
{
    char tmp[24];
    size_t k = 0;
    do { tmp[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (size_t i = 0; i < k; i++, at++)
        if (at < cap) buf[at] = tmp[k - 1 - i];
    return at;
}

/* index of the next set bit at or after `from`, or `limit` */
static uint64_t next_bit(const uint64_t *w, uint64_t limit, uint64_t from, int want)
{
    while (from < limit) {
        size_t i = from / 64;
        uint64_t word = want ? w[i] : ~w[i];
        word &= ~(uint64_t)0 << (from % 64);
        if (word) {
            uint64_t r = (uint64_t)i * 64 + (uint64_t)__builtin_ctzll(word);
            return r < limit ? r : limit;
        }
        from = ((uint64_t)i + 1) * 64;
    }
    return limit;
}

size_t pn_cpulist_format(const uint64_t *words, size_t nwords, char *buf, size_t cap)
{
    uint64_t limit = (uint64_t)nwords * 64, pos = 0;
    size_t at = 0;
    for (;;) {
        uint64_t lo = next_bit(words, limit, pos, 1);
        if (lo >= limit) break;
        uint64_t end = next_bit(words, limit, lo, 0); /* first clear bit after the run */
        if (at) { if (at < cap) buf[at] = ','; at++; }
        at = put_num(buf, cap, at, lo);
        if (end - 1 > lo) {
            if (at < cap) buf[at] = '-';
            at = put_num(buf, cap, at + 1, end - 1);
        }
        pos = end;
    }
    if (at < cap) buf[at] = '\0';
    return at;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The kernel's own form, 8-digit hex words joined by single commas, parsed
 * without the general path's per-word trimming (wide masks are mostly
 * "00000000" words).  1 when parsed, 0 when the text needs the general
 * path (which also names any error), or -ENOMEM. */
static int kernel_mask(const char *s, size_t b, size_t e, uint64_t **words, size_t *nwords)
{
    size_t len = e - b;
    if (len < 8 || (len + 1) % 9) return 0;
    size_t count = (len + 1) / 9;
    for (size_t k = 1; k < count; k++)
        if (s[e - k * 9] != ',') return 0;
    size_t n = (count + 1) / 2;
    uint64_t *w = calloc(n, sizeof *w);
    if (!w) return -ENOMEM;
    for (size_t k = 0; k < count; k++) { /* k = 0: the least significant word, last in the text */
        const char *p = s + e - 8 - k * 9;
        if (memcmp(p, "00000000", 8) == 0) continue;
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) {
            int h = hexval(p[i]);
            if (h < 0) { free(w); return 0; }
            v = v << 4 | (uint64_t)h;
        }
        w[k / 2] |= v << (32 * (k % 2));
    }
    while (n && w[n - 1] == 0) n--;
    *words = w;
    *nwords = n;
    return 1;
}

/* 0, or -EINVAL (PN_E_MASK_TOO_BIG, the whole text) when a bit above PN_MAX_ID is set */
static int mask_bound(uint64_t **words, size_t *nwords, pn_parse_err *err)
{
    if (*nwords <= PN_MAX_ID / 64 + 1 &&
        (*nwords < PN_MAX_ID / 64 + 1 || !((*words)[*nwords - 1] >> (PN_MAX_ID % 64) >> 1)))
        return 0;
    free(*words);
    *words = NULL;
    *nwords = 0;
    err->why = PN_E_MASK_TOO_BIG;
    return -EINVAL;
}

int pn_cpumask_parse(const char *s, size_t len, uint64_t **words, size_t *nwords, pn_parse_err *err)
{
    size_t b = 0, e = len, count = 1;
    trim(s, &b, &e, outer_space);
    *words = NULL;
    *nwords = 0;
    err->pos = b;
    err->end = e;
    if (b == e) { err->why = PN_E_EMPTY_MASK; return -EINVAL; }
    int fast = kernel_mask(s, b, e, words, nwords);
    if (fast) return fast < 0 ? fast : mask_bound(words, nwords, err);
    for (size_t i = b; i < e; i++) count += s[i] == ',';
    size_t n = (count + 1) / 2;
    uint64_t *w = calloc(n, sizeof *w);
    if (!w) return -ENOMEM;
    /* walk words from the least significant (last) one */
    size_t k = 0, stop = e;
    for (;;) {
        size_t start = stop;
        while (start > b && s[start - 1] != ',') start--;
        size_t wb = start, we = stop;
        trim(s, &wb, &we, item_space);
        if (we - wb >= 2 && s[wb] == '0' && (s[wb + 1] == 'x' || s[wb + 1] == 'X')) wb += 2;
        err->pos = wb;
        err->end = we;
        if (we - wb > 8) { err->why = PN_E_WORD_LONG; free(w); return -EINVAL; }
        uint64_t v = 0;
        for (size_t i = wb; i < we; i++) {
            int h = hexval(s[i]);
            if (h < 0) { err->why = PN_E_WORD; free(w); return -EINVAL; }
            v = v << 4 | (uint64_t)h;
        }
        w[k / 2] |= v << (32 * (k % 2));
        k++;
        if (start == b) break;
        stop = start - 1;
    }
    while (n && w[n - 1] == 0) n--;
    *words = w;
    *nwords = n;
    err->pos = b;
    err->end = e;
    return mask_bound(words, nwords, err);
}

size_t pn_cpumask_format(const uint64_t *words, size_t nwords, size_t min_words, char *buf)
{
    static const char hex[] = "0123456789abcdef";
    size_t n32 = nwords * 2;
    while (n32 && ((words[(n32 - 1) / 2] >> (32 * ((n32 - 1) % 2))) & 0xffffffffu) == 0) n32--;
    if (n32 < min_words) n32 = min_words;
    size_t at = 0;
    for (size_t k = n32; k-- > 0;) {
        uint32_t v = k / 2 < nwords ? (uint32_t)(words[k / 2] >> (32 * (k % 2))) : 0;
        for (int sh = 28; sh >= 0; sh -= 4) buf[at++] = hex[(v >> sh) & 0xf];
        if (k) buf[at++] = ',';
    }
    buf[at] = '\0';
    return at;
}

void pn_words_le(uint64_t *words, size_t nwords)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < nwords; i++) words[i] = htole64(words[i]);
#else
    (void)words;
    (void)nwords;
#endif
}
