/* pn_minplus.c -- suffix tables of a layered min-plus program.
 *
 * The arithmetic core of pynuma/policy/cpumanager/distribute_search.py (what
 * the options mean lives there, once).  Positions 0..n-1 each offer options
 * (join 0/1, groups, kind, cost); a walk picks one option per position.  The
 * table cell tab[i][phase][j][x] is the least total cost of positions i..n-1
 * that picks exactly j joining options and exactly x groups, where kind HIGH
 * is barred once phase is 1 and kind LOW moves the walk to phase 1.
 * Impossible cells hold PN_MINPLUS_INF.  Only cells a walk from position 0
 * with j >= j_least can reach are computed (the rest stay INF).
 *
 * Pure C: no Python objects; 0 or -errno.  The pure twin is
 * pynuma/_pure_minplus.py and must produce the same table cell for cell.
 */
#include <errno.h>
#include <stdint.h>
#include <stddef.h>

#define PN_MINPLUS_INF ((int64_t)1 << 62)
#define KIND_HIGH 1
#define KIND_LOW 2

int pn_minplus_suffix(int32_t n, const int32_t *off, const uint8_t *join, const int32_t *groups,
                      const uint8_t *kind, const int64_t *cost, int32_t J, int32_t X, int32_t j_least,
                      int64_t *tab)
{
    if (n < 0 || J < 0 || X < 0 || J > 4096 || X > 4096)
        return -EINVAL;
    const size_t W = (size_t)X + 1, plane = ((size_t)J + 1) * W, layer = 2 * plane;
    const size_t cells = ((size_t)n + 1) * layer;
    for (size_t c = 0; c < cells; c++)
        tab[c] = PN_MINPLUS_INF;
    int64_t *end = tab + (size_t)n * layer;
    end[0] = 0;
    end[plane] = 0;
    int32_t joinable = 0, jl = j_least < 0 ? J : j_least;
    for (int32_t i = n - 1; i >= 0; i--) {
        for (int32_t o = off[i]; o < off[i + 1]; o++) {
            if (join[o] > 1 || groups[o] < 0 || cost[o] < 0 || cost[o] >= PN_MINPLUS_INF / 2)
                return -EINVAL;
        }
        for (int32_t o = off[i]; o < off[i + 1]; o++) {
            if (join[o]) {
                joinable++;
                break;
            }
        }
        const int64_t *nxt = tab + ((size_t)i + 1) * layer;
        int64_t *cur = tab + (size_t)i * layer;
        int32_t lo = jl - i > 0 ? jl - i : 0, hi = joinable < J ? joinable : J;
        for (int ph = 0; ph < 2; ph++) {
            for (int32_t j = lo; j <= hi; j++) {
                int64_t *out = cur + (size_t)ph * plane + (size_t)j * W;
                for (int32_t o = off[i]; o < off[i + 1]; o++) {
                    int32_t dj = join[o], dx = groups[o];
                    if (dj > j || dx > X || (kind[o] == KIND_HIGH && ph))
                        continue;
                    int ph2 = kind[o] == KIND_LOW ? 1 : ph;
                    const int64_t *src = nxt + (size_t)ph2 * plane + (size_t)(j - dj) * W;
                    for (int32_t x = dx; x <= X; x++) {
                        int64_t v = src[x - dx];
                        if (v >= PN_MINPLUS_INF)
                            continue;
                        v += cost[o];
                        if (v < out[x])
                            out[x] = v;
                    }
                }
            }
        }
    }
    return 0;
}
