/* proot-launch: runs a command (proot -q qemu-aarch64-static -r ROOT ...) with the system calls
 * Debian 12's proot 5.1 predates made to fail with ENOSYS: statx, faccessat2, openat2 (proot
 * would pass their paths to the kernel untranslated, i.e. outside the root) and clone3 (a
 * child proot would not trace). glibc and qemu then fall back to the older calls (newfstatat,
 * faccessat, openat, clone), which proot knows.
 *
 * The filter is a seccomp one, inherited by everything started below (proot, qemu-aarch64 and
 * what it runs). qemu-user translates the guest's aarch64 system calls into host calls, so the
 * numbers filtered are the host's (x86_64). Other architectures are let through unfiltered.
 *
 * Build: cc -O2 -o proot-launch proot-launch.c    Usage: proot-launch PROGRAM [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "proot-launch filters x86_64 system call numbers: build it on an x86_64 host"
#endif

/* x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl), written out so that old headers do. */
enum { NR_statx = 332, NR_clone3 = 435, NR_openat2 = 437, NR_faccessat2 = 439 };

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
                 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: proot-launch PROGRAM [ARG...]\n");
    return 2;
  }
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    DENY(NR_statx),
    DENY(NR_clone3),
    DENY(NR_openat2),
    DENY(NR_faccessat2),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("proot-launch: PR_SET_NO_NEW_PRIVS");
    return 1;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("proot-launch: installing the seccomp filter");
    return 1;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "proot-launch: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
