/* NUMA memory-policy syscalls for pynuma, without libnuma.
 *
 * set_mempolicy(2), get_mempolicy(2), mbind(2), migrate_pages(2) and
 * move_pages(2) through syscall(2): glibc has no wrappers for them and we
 * do not want a libnuma dependency.  Node masks are arrays of unsigned
 * long sized by the caller; `maxnode` follows the kernel's convention for
 * each call (see the Python layer).  Return 0 (or a count) or -errno;
 * never touch Python objects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_set_mempolicy_home_node
#  if defined(__x86_64__) || defined(__aarch64__)
#    define SYS_set_mempolicy_home_node 450   /* Linux 5.17 */
#  endif
#endif

int pn_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode)
{
    long rc = syscall(SYS_set_mempolicy, mode, nodemask, maxnode);
    return rc < 0 ? -errno : 0;
}

/* `addr` is only used with MPOL_F_ADDR in `flags`. */
int pn_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode,
                     void *addr, unsigned long flags)
{
    long rc = syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
    return rc < 0 ? -errno : 0;
}

int pn_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
             unsigned long maxnode, unsigned int flags)
{
    long rc = syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
    return rc < 0 ? -errno : 0;
}

/* Returns the number of pages that could not be moved, or -errno. */
long pn_migrate_pages(int pid, unsigned long maxnode, const unsigned long *old_nodes,
                      const unsigned long *new_nodes)
{
    long rc = syscall(SYS_migrate_pages, pid, maxnode, old_nodes, new_nodes);
    return rc < 0 ? -errno : rc;
}

/* `nodes` NULL queries: `status[i]` receives the node of page i or -errno
 * for that page.  Returns 0, the number of pages not moved, or -errno. */
long pn_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
                   int *status, int flags)
{
    long rc = syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
    return rc < 0 ? -errno : rc;
}

int pn_set_mempolicy_home_node(unsigned long start, unsigned long len,
                               unsigned long home_node, unsigned long flags)
{
#ifdef SYS_set_mempolicy_home_node
    long rc = syscall(SYS_set_mempolicy_home_node, start, len, home_node, flags);
    return rc < 0 ? -errno : 0;
#else
    (void)start; (void)len; (void)home_node; (void)flags;
    return -ENOSYS;
#endif
}
