/* pn_features.h -- what the build machine's kernel headers offer.
 *
 * Each PN_HAS_* is 1 when the headers define the interface, 0 otherwise; the
 * comment gives the first kernel that has it.  A compiled-in interface may
 * still be refused at run time (older running kernel, seccomp), so callers
 * fall back on ENOSYS/EPERM; pynuma.features() reports both views.
 */
#ifndef PN_FEATURES_H
#define PN_FEATURES_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sys/syscall.h>

/* openat2(2) with RESOLVE_IN_ROOT / RESOLVE_NO_MAGICLINKS: Linux 5.6. */
#if defined(SYS_openat2) && defined(__has_include)
#  if __has_include(<linux/openat2.h>)
#    define PN_HAS_OPENAT2 1
#  endif
#endif
#ifndef PN_HAS_OPENAT2
#  define PN_HAS_OPENAT2 0
#endif

/* O_PATH descriptors (open without read permission, usable as dirfd): Linux 2.6.39. */
#ifdef O_PATH
#  define PN_HAS_O_PATH 1
#else
#  define PN_HAS_O_PATH 0
#endif

/* statx(2): Linux 4.11. */
#ifdef SYS_statx
#  define PN_HAS_STATX 1
#else
#  define PN_HAS_STATX 0
#endif

/* pidfd_open(2) (race-free process handles): Linux 5.3. */
#ifdef SYS_pidfd_open
#  define PN_HAS_PIDFD_OPEN 1
#else
#  define PN_HAS_PIDFD_OPEN 0
#endif

/* set_mempolicy_home_node(2): Linux 5.17. */
#ifdef SYS_set_mempolicy_home_node
#  define PN_HAS_SET_MEMPOLICY_HOME_NODE 1
#else
#  define PN_HAS_SET_MEMPOLICY_HOME_NODE 0
#endif

/* move_pages(2) / migrate_pages(2): Linux 2.6.18 / 2.6.16. */
#if defined(SYS_move_pages) && defined(SYS_migrate_pages)
#  define PN_HAS_MOVE_PAGES 1
#else
#  define PN_HAS_MOVE_PAGES 0
#endif

/* getcpu(2) (current CPU and node): Linux 2.6.19. */
#ifdef SYS_getcpu
#  define PN_HAS_GETCPU 1
#else
#  define PN_HAS_GETCPU 0
#endif

#endif /* PN_FEATURES_H */
