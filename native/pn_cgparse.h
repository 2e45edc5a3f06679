/* Parsers and kubelet cgroup naming for pn_cgwalk.c.  0 / -errno, no Python objects. */
#ifndef PN_CGPARSE_H
#define PN_CGPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "pn_cgwalk.h"

/* One number or "max" (INT64_MAX); whitespace around it as Python's str.strip(). */
int pn_cg_parse_int(const char *s, long n, int64_t *v);
/* "key value" lines: the file's wanted keys into slots (all or nothing); -EINVAL on garbage. */
int pn_cg_parse_keyed(const char *s, long n, const struct pn_cgfile *f, int64_t *slots, uint32_t *have);
/* QoS of a tier directory under kubepods (PN_CG_BURSTABLE / PN_CG_BESTEFFORT) or -1. */
int pn_cg_tier_of(const char *name, size_t n, int systemd);
/* 1 and the uid span when `name` is a pod cgroup of `tier` (PN_CG_NOQOS: under kubepods), else 0. */
int pn_cg_pod_uid_of(const char *name, size_t n, int systemd, int tier, size_t *off, size_t *len);
/* runtime code and id span of a container cgroup name, or -1. */
int pn_cg_container_of(const char *name, size_t n, int systemd, size_t *off, size_t *len);

#endif
