#define _GNU_SOURCE
#include "CPosix.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

int cposix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int cposix_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int cposix_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int cposix_waitid_pidfd(int pidfd, int options, int *code, int *status) {
    siginfo_t info = {0};
    if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | options) != 0) {
        return -1;
    }
    *code = info.si_pid == 0 ? 0 : info.si_code;
    *status = info.si_status;
    return 0;
}

int cposix_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int cposix_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t length = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
        return -1;
    }
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int cposix_accept_cloexec_nonblock(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

short cposix_spawn_flag_setsid(void) { return POSIX_SPAWN_SETSID; }

void cposix_sigset_fill_all(sigset_t *set) {
    sigemptyset(set);
    unsigned long *words = (unsigned long *)set;
    const int bits = 8 * (int)sizeof(unsigned long);
    for (int sig = 1; sig < _NSIG && (sig - 1) / bits < (int)(sizeof(sigset_t) / sizeof(unsigned long)); sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        words[(sig - 1) / bits] |= 1UL << ((sig - 1) % bits);
    }
}

int cposix_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int cposix_wexited(void) { return WEXITED; }
int cposix_wnohang(void) { return WNOHANG; }

int cposix_malloc_trim(void) { return malloc_trim(0); }

int cposix_set_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }
