#ifndef ORCHD_CPOSIX_H
#define ORCHD_CPOSIX_H

// POSIX and Linux calls that Glibc's Swift overlay does not expose (they need _GNU_SOURCE,
// which is defined in CPosix.c only, never here) or that read unions Swift cannot reach.

#include <signal.h>
#include <spawn.h>
#include <sys/types.h>

/// posix_spawn_file_actions_addclosefrom_np(3): close every fd >= `from` in the child.
int cposix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// posix_spawn_file_actions_addchdir_np(3): chdir to `path` in the child before exec.
int cposix_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path);

/// pidfd_open(2) with flags 0. Returns the fd, or -1 with errno set.
int cposix_pidfd_open(pid_t pid);

/// waitid(P_PIDFD, pidfd, ..., WEXITED | options) (waitid(2)). On success returns 0 and stores
/// si_code (CLD_EXITED, CLD_KILLED, CLD_DUMPED) in `code` and si_status in `status`; when
/// `options` has WNOHANG and the child has not exited, returns 0 with `code` set to 0.
/// Returns -1 with errno set on failure.
int cposix_waitid_pidfd(int pidfd, int options, int *code, int *status);

/// prctl(PR_SET_CHILD_SUBREAPER, 1) (prctl(2)). Returns 0 or -1 with errno set.
int cposix_set_child_subreaper(void);

/// getsockopt(SO_PEERCRED) (unix(7)): the connected peer's pid, uid and gid.
int cposix_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK.
int cposix_accept_cloexec_nonblock(int fd);

/// POSIX_SPAWN_SETSID (posix_spawnattr_setflags(3)): the child calls setsid(2), so it leads
/// a new session and process group. Glibc declares it only under _GNU_SOURCE.
short cposix_spawn_flag_setsid(void);

/// Fills `set` with every signal 1..<NSIG except SIGKILL and SIGSTOP, including the two
/// glibc keeps for itself (32, 33), which sigfillset(3) and sigaddset(3) leave out. Used as
/// posix_spawnattr_setsigdefault(3)'s set: otherwise glibc's posix_spawn marks those two
/// SIG_IGN in the child, and ignored signals survive exec into the job.
void cposix_sigset_fill_all(sigset_t *set);

/// pipe2(2) with O_CLOEXEC: both ends close-on-exec from creation, so a process spawned
/// by another thread meanwhile cannot inherit them. Returns 0 or -1 with errno set.
int cposix_pipe_cloexec(int fds[2]);

/// The WEXITED / WNOHANG / WNOWAIT constants, for Swift callers.
int cposix_wexited(void);
int cposix_wnohang(void);

/// malloc_trim(3) with pad 0: give freed heap memory back to the kernel. Returns 1 if any was.
int cposix_malloc_trim(void);

/// mallopt(M_ARENA_MAX, count) (mallopt(3)): cap glibc's per-thread arenas, which otherwise
/// keep freed memory of every worker thread. Returns 1 on success.
int cposix_set_malloc_arena_max(int count);

#endif
