/* CPU affinity syscalls for pynuma (sched_getaffinity / sched_setaffinity).
 *
 * Raw syscalls rather than glibc's wrappers: glibc's sched_getaffinity
 * hides the number of bytes the kernel wrote, which is how we learn the
 * kernel's cpumask size (nr_cpu_ids).  Every function returns 0 (or a
 * non-negative count) on success and -errno on failure, and never touches
 * Python objects, so the Cython layer can call it with the GIL released.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Read the affinity mask of thread `tid` (0 = caller) into `mask`
 * (`bytes` long, a multiple of sizeof(unsigned long)).  Returns the number
 * of bytes the kernel wrote, or -EINVAL when `bytes` is smaller than the
 * kernel's cpumask (the caller doubles and retries, like CPython). */
long pn_sched_getaffinity(int tid, unsigned long *mask, size_t bytes)
{
    long rc = syscall(SYS_sched_getaffinity, (pid_t)tid, bytes, mask);
    return rc < 0 ? -errno : rc;
}

/* Set the affinity mask of thread `tid` (0 = caller).  Bits beyond the
 * kernel's cpumask are ignored by the kernel only when they are zero; the
 * caller sizes the mask to its highest CPU.  -EINVAL means the mask has
 * no online CPU the caller's cpuset allows. */
int pn_sched_setaffinity(int tid, const unsigned long *mask, size_t bytes)
{
    long rc = syscall(SYS_sched_setaffinity, (pid_t)tid, bytes, mask);
    return rc < 0 ? -errno : 0;
}

/* The caller's kernel thread id (gettid(2)). */
int pn_gettid(void)
{
    return (int)syscall(SYS_gettid);
}
