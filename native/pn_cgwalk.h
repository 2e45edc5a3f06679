/* Kubelet cgroup walker: pods and containers under kubepods, one flat record each.
 * Returns 0 or -errno; never touches Python objects (safe without the GIL). */
#ifndef PN_CGWALK_H
#define PN_CGWALK_H

#include <stdint.h>

#define PN_CG_NSLOTS 16
#define PN_CG_MAXBASES 4
#define PN_CG_MAXKEYS 4
#define PN_CG_MAXFILES 24
#define PN_CG_NAMELEN 64

enum { PN_CG_BASE = 0, PN_CG_TIER = 1, PN_CG_POD = 2, PN_CG_CONTAINER = 3 };
enum { PN_CG_GUARANTEED = 0, PN_CG_BURSTABLE = 1, PN_CG_BESTEFFORT = 2, PN_CG_NOQOS = 3 };
enum { PN_CG_INT = 0, PN_CG_KEYED = 1 };
enum { PN_RT_NONE = 0, PN_RT_CONTAINERD = 1, PN_RT_CRIO = 2, PN_RT_DOCKER = 3 };

struct pn_cgfile {
    int base;                       /* hierarchy index (0 = primary) */
    int kind;                       /* PN_CG_INT or PN_CG_KEYED */
    int slot;                       /* PN_CG_INT: slot filled */
    int nkeys;
    char name[PN_CG_NAMELEN];
    char keys[PN_CG_MAXKEYS][32];
    int keylen[PN_CG_MAXKEYS];
    int kslot[PN_CG_MAXKEYS];
    int64_t kmult[PN_CG_MAXKEYS];
};

struct pn_cgrec {
    int8_t kind, qos, runtime, pad;
    uint32_t have;                  /* bit per slot: value present */
    uint32_t bad;                   /* bit per slot: unreadable or garbage */
    int32_t path_off, path_len;     /* into the names buffer */
    int32_t uid_off, uid_len;
    int32_t cid_off, cid_len;
    int64_t slots[PN_CG_NSLOTS];
};

struct pn_cgresult {
    struct pn_cgrec *recs;
    long nrecs, caprecs;
    char *names;
    long nnames, capnames;
};

typedef void (*pn_cg_hook)(void *ctx, const char *path);

int pn_cgwalk(int rootfd, const char *const *bases, int nbases, int systemd,
              const struct pn_cgfile *files, int nfiles, int full,
              pn_cg_hook hook, void *hookctx, struct pn_cgresult *out);
void pn_cgresult_free(struct pn_cgresult *res);

#endif
