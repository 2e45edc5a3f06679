/* Inner loops of `pynuma bench memory`: pointer chase, streaming read, copy.
 *
 * The chase buffer holds, every `stride` bytes, the byte offset of the next
 * slot; the slots form one random cycle (Sattolo's algorithm), so every load
 * depends on the previous one and hardware prefetchers cannot guess the
 * next line.  The PRNG is splitmix64 so the pure-Python twin builds the
 * very same buffer from the same seed.  Timing is taken here, around the
 * loop only, with CLOCK_MONOTONIC.  Functions return 0 / -errno or a time
 * in ns, and never touch Python objects (called with the GIL released).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static uint64_t pn_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t pn_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Lay a random single cycle over the `bytes / stride` slots of `buf`. */
int pn_chase_build(void *buf, size_t bytes, size_t stride, uint64_t seed)
{
    char *base = buf;
    size_t n, i;
    uint64_t state = seed;

    if (stride < sizeof(uint64_t) || stride % sizeof(uint64_t) != 0)
        return -EINVAL;
    n = bytes / stride;
    if (n < 2)
        return -EINVAL;
    for (i = 0; i < n; i++)
        *(uint64_t *)(base + i * stride) = i;
    /* Sattolo: swapping with j < i only yields one cycle through all slots. */
    for (i = n - 1; i > 0; i--) {
        size_t j = (size_t)(pn_splitmix64(&state) % i);
        uint64_t *a = (uint64_t *)(base + i * stride);
        uint64_t *b = (uint64_t *)(base + j * stride);
        uint64_t t = *a;
        *a = *b;
        *b = t;
    }
    for (i = 0; i < n; i++)
        *(uint64_t *)(base + i * stride) *= stride;
    return 0;
}

/* Follow `steps` links from byte offset `start`; returns the elapsed ns
 * and stores the final offset in `*end` (which also keeps the loop alive). */
uint64_t pn_chase_run(const void *buf, uint64_t start, uint64_t steps, uint64_t *end)
{
    const char *base = buf;
    uint64_t off = start, i, t0, t1;

    t0 = pn_now_ns();
    for (i = 0; i + 8 <= steps; i += 8) {
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
        off = *(const uint64_t *)(base + off);
    }
    for (; i < steps; i++)
        off = *(const uint64_t *)(base + off);
    t1 = pn_now_ns();
    *end = off;
    return t1 - t0;
}

/* Read every 64-bit word of `buf` `reps` times; returns ns, `*sum` the
 * wrap-around sum of one pass (the pure twin checks it). */
uint64_t pn_read_run(const void *buf, size_t bytes, uint64_t reps, uint64_t *sum)
{
    const uint64_t *w = buf;
    size_t n = bytes / sizeof(uint64_t), i;
    uint64_t r, t0, t1, s0 = 0, s1 = 0, s2 = 0, s3 = 0;

    t0 = pn_now_ns();
    for (r = 0; r < reps; r++) {
        s0 = s1 = s2 = s3 = 0;
        for (i = 0; i + 4 <= n; i += 4) {
            s0 += w[i];
            s1 += w[i + 1];
            s2 += w[i + 2];
            s3 += w[i + 3];
        }
        for (; i < n; i++)
            s0 += w[i];
        __asm__ __volatile__("" : : "r"(s0), "r"(s1), "r"(s2), "r"(s3) : "memory");
    }
    t1 = pn_now_ns();
    *sum = s0 + s1 + s2 + s3;
    return t1 - t0;
}

/* Copy `src` to `dst` (`bytes` each) `reps` times; returns ns. */
uint64_t pn_copy_run(void *dst, const void *src, size_t bytes, uint64_t reps)
{
    uint64_t r, t0, t1;

    t0 = pn_now_ns();
    for (r = 0; r < reps; r++) {
        memcpy(dst, src, bytes);
        __asm__ __volatile__("" : : "r"(dst) : "memory");
    }
    t1 = pn_now_ns();
    return t1 - t0;
}
