#define _GNU_SOURCE
#include "CPosix.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
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

int cposix_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int cposix_pidfd_send_signal(int pidfd, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
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

int cposix_is_child_subreaper(void) {
    int value = 0;
    if (prctl(PR_GET_CHILD_SUBREAPER, &value, 0, 0, 0) != 0) {
        return 0;
    }
    return value != 0;
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

int cposix_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int cposix_wexited(void) { return WEXITED; }
int cposix_wnohang(void) { return WNOHANG; }

int cposix_malloc_trim(void) { return malloc_trim(0); }

int cposix_set_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }

// MARK: - Spawning with clone3

#include <sched.h>
#include <linux/sched.h>
#include <sys/inotify.h>
#include <string.h>
#include <stdint.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct cposix_spawn_report {
    /// The step that failed (a CPOSIX_SPAWN_STEP_*), 0 while none has.
    int step;
    int error;
};

/// Where the child tells the parent which step failed: with CLONE_VM, straight into the
/// parent's memory (the parent is suspended until the child execs or exits, so it reads the
/// report only after, as glibc's posix_spawn reads its child's error); otherwise a pipe whose
/// write end closes at exec.
struct cposix_spawn_reporter {
    struct cposix_spawn_report *shared;
    int fd;
};

/// In the child: tell the parent which step failed, then exit. A store to the shared report,
/// or write(2), then _exit(2).
static void cposix_spawn_child_fail(const struct cposix_spawn_reporter *reporter, int step) {
    struct cposix_spawn_report report = {step, errno};
    if (reporter->shared != NULL) {
        *reporter->shared = report;
    } else {
        ssize_t ignored = write(reporter->fd, &report, sizeof(report));
        (void)ignored;
    }
    _exit(127);
}

/// dup2(2), also when `from == to` (dup2 then leaves FD_CLOEXEC set, and the fd would close at
/// exec).
static int cposix_move_fd(int from, int to) {
    if (from == to) return fcntl(to, F_SETFD, 0);
    return dup2(from, to) < 0 ? -1 : 0;
}

/// In the child: creates or truncates a log file (``cposix_spawn_log``). With `owner` (the
/// identity was dropped to that uid), a link or a FIFO the user planted where the file goes is
/// refused rather than followed or blocked on (the daemon's thread waits for this child's
/// exec), and only a regular file of the user's own with one link is used. Returns the fd, or
/// -1 with errno set.
static int cposix_open_log(const struct cposix_spawn_log *log, const uid_t *owner) {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY;
    // Without an owner the daemon's own file: truncated on open, as a shell's `>`.
    flags |= owner != NULL ? O_NOFOLLOW | O_NONBLOCK : O_TRUNC;
    int fd = log->directory_fd >= 0 ? openat(log->directory_fd, log->name, flags, log->mode) : -1;
    if (fd < 0 && (log->directory_fd < 0 || errno == ENOENT)) fd = open(log->path, flags, log->mode);
    if (fd < 0) return -1;
    struct stat info;
    if (fstat(fd, &info) != 0) goto fail;
    if (owner != NULL) {
        if (!S_ISREG(info.st_mode) || info.st_nlink != 1 || info.st_uid != *owner) {
            errno = EPERM;
            goto fail;
        }
        int status = fcntl(fd, F_GETFL);
        if (status < 0 || ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, status & ~O_NONBLOCK) != 0) goto fail;
    }
    // Exactly `mode`, whatever the umask, for a file of the job's; a device such as
    // /dev/null (a hook's output) keeps its own. Best effort, as for a file that existed.
    if (S_ISREG(info.st_mode)) (void)fchmod(fd, log->mode);
    return fd;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

static void cposix_spawn_child(const struct cposix_spawn_request *request, const struct cposix_spawn_reporter *reporter) {
    // Every disposition back to the default while all signals are still blocked (inherited
    // from the parent), so no handler of the daemon's can run here. The raw system call:
    // glibc's sigaction(2) refuses 32 and 33. An all-zero kernel sigaction is SIG_DFL with no
    // flags and an empty mask on every architecture.
    unsigned long zero_action[4] = {0, 0, 0, 0};
    for (int sig = 1; sig < _NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        if (syscall(SYS_rt_sigaction, sig, zero_action, NULL, _NSIG / 8) != 0 && errno != EINVAL) {
            cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_SIGNALS);
        }
    }
    uint64_t empty_mask = 0;
    if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, NULL, sizeof(empty_mask)) != 0) {
        cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_SIGNALS);
    }
    if (setsid() < 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_SESSION);
    if (request->change_identity) {
        // Groups first, while still root; then the gid; the uid last, after which neither can
        // change. setresuid to a non-zero uid clears the permitted, effective and ambient
        // capabilities (capabilities(7)).
        if (syscall(SYS_setgroups, (size_t)request->group_count, request->groups) != 0) {
            cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_GROUPS);
        }
        if (syscall(SYS_setresgid, request->gid, request->gid, request->gid) != 0) {
            cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_GID);
        }
        if (syscall(SYS_setresuid, request->uid, request->uid, request->uid) != 0) {
            cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_UID);
        }
        if (request->uid != 0 && syscall(SYS_setuid, 0) == 0) {
            errno = EPERM;
            cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_REGAIN);
        }
    }
    // After the drop: the job's user creates its log files, so nothing planted in its log
    // directory can make root write anywhere, and a new file is the user's from the start.
    // Before chdir(2): a relative fallback path means what it meant to the daemon.
    const uid_t *owner = request->change_identity ? &request->uid : NULL;
    int out_file = cposix_open_log(&request->stdout_log, owner);
    if (out_file < 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_OPEN_STDOUT);
    int err_file = out_file;
    if (request->stderr_log.name != NULL) {
        err_file = cposix_open_log(&request->stderr_log, owner);
        if (err_file < 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_OPEN_STDERR);
    }
    if (chdir(request->working_directory) != 0) {
        cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_WORKING_DIRECTORY);
    }
    // The log fds are moved out of 0-2 first, so placing one cannot overwrite another.
    int in = fcntl(request->stdin_fd, F_DUPFD_CLOEXEC, 3);
    if (in < 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_STDIN);
    int out = fcntl(out_file, F_DUPFD_CLOEXEC, 3);
    if (out < 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_STDOUT);
    int err = fcntl(err_file, F_DUPFD_CLOEXEC, 3);
    if (err < 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_STDERR);
    if (cposix_move_fd(in, 0) != 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_STDIN);
    if (cposix_move_fd(out, 1) != 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_STDOUT);
    if (cposix_move_fd(err, 2) != 0) cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_STDERR);
    // Close-on-exec, not closed: a report pipe must stay open until execve succeeds.
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_FDS);
    }
    if (request->search_path_count > 0) {
        int denied = 0;
        for (int i = 0; i < request->search_path_count; i++) {
            execve(request->search_paths[i], request->argv, request->envp);
            // As execvp(3): a candidate that is not there, or not executable, lets the search
            // go on; any other failure is this command's.
            if (errno == EACCES) {
                denied = 1;
            } else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV && errno != ETIMEDOUT) {
                cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_EXEC);
            }
        }
        errno = denied ? EACCES : ENOENT;
        cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_SEARCH);
    }
    execve(request->path, request->argv, request->envp);
    cposix_spawn_child_fail(reporter, CPOSIX_SPAWN_STEP_EXEC);
}

#if defined(__x86_64__)
/// What the child of a shared-memory spawn gets: its request and where to report a failure.
struct cposix_spawn_context {
    const struct cposix_spawn_request *request;
    const struct cposix_spawn_reporter *reporter;
};

/// The child of a shared-memory spawn (``cposix_clone3_shared``), on its own stack.
static int cposix_spawn_shared_child(void *argument) {
    struct cposix_spawn_context *context = argument;
    cposix_spawn_child(context->request, context->reporter);
    _exit(127);
}

/// clone3(2) with CLONE_VM | CLONE_VFORK, as glibc's posix_spawn clones: the child borrows
/// the daemon's memory until it execs (no page tables copied, no copy-on-write faults in the
/// daemon after), while the calling thread stays suspended. The child starts on `stack` (a
/// buffer on this suspended thread's stack) and calls `body(argument)`, which must not
/// return; it makes only system calls that touch no memory of the daemon's but that buffer.
/// glibc exports no clone3 wrapper, so the child's first instructions are written here (the
/// x86-64 system call convention: number in rax, arguments in rdi and rsi; rcx and r11
/// clobbered; r8 and r9 survive into the child). Returns the child's pid, or -1 with errno.
static long cposix_clone3_shared(struct clone_args *args, int (*body)(void *), void *argument) {
    register void *function asm("r8") = (void *)body;
    register void *context asm("r9") = argument;
    long result;
    __asm__ volatile(
        "syscall\n\t"
        "test %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        // The child, on the new stack (16-byte aligned at its top): call body(argument).
        "xor %%ebp, %%ebp\n\t"
        "mov %%r9, %%rdi\n\t"
        "call *%%r8\n\t"
        "mov %%eax, %%edi\n\t"
        "mov %[exit], %%eax\n\t"
        "syscall\n\t"
        "hlt\n\t"
        "1:\n\t"
        : "=a"(result)
        : "a"((long)SYS_clone3), "D"(args), "S"(sizeof(*args)), "r"(function), "r"(context), [exit] "i"(SYS_exit)
        : "rcx", "r11", "memory");
    if (result < 0) {
        errno = (int)-result;
        return -1;
    }
    return result;
}
#endif

int cposix_spawn(const struct cposix_spawn_request *request, pid_t *pid, int *pidfd, int *failed_step, int *failed_errno) {
    struct cposix_spawn_report failure = {0, 0};
#if defined(__x86_64__)
    // The child shares this memory until its exec: it writes a failure here, no pipe needed
    // (a pipe cost four system calls and two descriptors a spawn).
    struct cposix_spawn_reporter reporter = {&failure, -1};
#else
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *failed_step = CPOSIX_SPAWN_STEP_SETUP;
        *failed_errno = errno;
        return -1;
    }
    struct cposix_spawn_reporter reporter = {NULL, report[1]};
#endif
    // All signals blocked across the clone: the child must not run a daemon handler before it
    // has reset them (glibc's posix_spawn does the same).
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);

    int child_pidfd = -1;
    struct clone_args args;
    memset(&args, 0, sizeof(args));
    args.flags = CLONE_PIDFD | CLONE_VFORK;
    args.pidfd = (uint64_t)(uintptr_t)&child_pidfd;
    args.exit_signal = SIGCHLD;
    if (request->cgroup_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)request->cgroup_fd;
    }
    if (request->child_pid != NULL) {
        args.flags |= CLONE_PARENT_SETTID;
        args.parent_tid = (uint64_t)(uintptr_t)request->child_pid;
    }
    // CLONE_VFORK: the parent resumes once the child has exec'd or exited.
#if defined(__x86_64__)
    enum { stack_size = 64 * 1024 };
    _Alignas(16) char stack[stack_size];
    args.flags |= CLONE_VM;
    args.stack = (uint64_t)(uintptr_t)stack;
    args.stack_size = stack_size;
    struct cposix_spawn_context context = {request, &reporter};
    long child = cposix_clone3_shared(&args, cposix_spawn_shared_child, &context);
    if (child < 0 && errno == ENOSYS && request->cgroup_fd < 0) {
        // No clone3 (a kernel before 5.3, or a sandbox that refuses it, as valgrind does):
        // clone(2) with the same flags; only a start in a cgroup needs clone3.
        // (clone(2) takes CLONE_PARENT_SETTID and CLONE_PIDFD in one argument, so not both:
        // without clone3, `child_pid` stays 0 and a child stopped before its exec is not
        // killed until it resumes.)
        child = clone(cposix_spawn_shared_child, stack + stack_size, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                      &context, &child_pidfd);
    }
    int clone_errno = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (child < 0) {
        *failed_step = CPOSIX_SPAWN_STEP_CLONE;
        *failed_errno = clone_errno;
        return -1;
    }
    // The child has exec'd or exited (CLONE_VFORK), and the clone's "memory" clobber makes
    // the compiler read what it stored.
    int reported = failure.step != 0;
#else
    // Fork semantics (no CLONE_VM): the child has its own copy of memory and returns here.
    long child = syscall(SYS_clone3, &args, sizeof(args));
    if (child == 0) {
        close(report[0]);
        cposix_spawn_child(request, &reporter);
        _exit(127);
    }
    int clone_errno = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(report[1]);
    if (child < 0) {
        close(report[0]);
        *failed_step = CPOSIX_SPAWN_STEP_CLONE;
        *failed_errno = clone_errno;
        return -1;
    }
    ssize_t got;
    do {
        got = read(report[0], &failure, sizeof(failure));
    } while (got < 0 && errno == EINTR);
    int read_errno = errno;
    close(report[0]);
    if (got != 0 && got != (ssize_t)sizeof(failure)) {
        failure.step = CPOSIX_SPAWN_STEP_SETUP;
        failure.error = got < 0 ? read_errno : EIO;
    }
    int reported = got != 0;
#endif
    if (!reported) {
        *pid = (pid_t)child;
        *pidfd = child_pidfd;
        return 0;
    }
    // The child failed before exec (or the report did): reap it, it exits at once.
    int status;
    while (waitpid((pid_t)child, &status, 0) < 0 && errno == EINTR) {}
    close(child_pidfd);
    *failed_step = failure.step;
    *failed_errno = failure.error;
    return -1;
}

pid_t cposix_load_pid(const pid_t *pid) { return __atomic_load_n(pid, __ATOMIC_ACQUIRE); }

void cposix_store_pid(pid_t *pid, pid_t value) { __atomic_store_n(pid, value, __ATOMIC_RELEASE); }

// MARK: - inotify

int cposix_inotify_init(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }

int cposix_inotify_watch_modify(int fd, const char *path) { return inotify_add_watch(fd, path, IN_MODIFY); }

int cposix_inotify_remove(int fd, int wd) { return inotify_rm_watch(fd, wd); }

int cposix_inotify_read_wds(int fd, int *wds, int capacity) {
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int stored = 0;
    for (;;) {
        ssize_t length = read(fd, buffer, sizeof(buffer));
        if (length < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return stored;
            return -1;
        }
        if (length == 0) return stored;
        for (char *p = buffer; p < buffer + length;) {
            struct inotify_event *event = (struct inotify_event *)p;
            if (stored < capacity) wds[stored] = event->wd;
            stored++;
            p += sizeof(struct inotify_event) + event->len;
        }
    }
}

// MARK: - Extended attributes

#include <sys/xattr.h>

int cposix_stat_no_automount(const char *path, struct stat *info) {
    return fstatat(AT_FDCWD, path, info, AT_NO_AUTOMOUNT);
}

long cposix_getxattr(const char *path, const char *name, void *value, unsigned long size) {
    return (long)getxattr(path, name, value, size);
}

int cposix_setxattr(const char *path, const char *name, const void *value, unsigned long size) {
    return setxattr(path, name, value, size, 0);
}

int cposix_open_pseudo_terminal(char *name, unsigned long size) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, size) != 0) {
        int saved = errno;
        close(master);
        errno = saved;
        return -1;
    }
    return master;
}

int cposix_signalfd_sigchld(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int cposix_signalfd_drain(int fd) {
    struct signalfd_siginfo infos[16];
    int count = 0;
    for (;;) {
        ssize_t got = read(fd, infos, sizeof(infos));
        if (got > 0) {
            count += (int)(got / (ssize_t)sizeof(infos[0]));
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno != EAGAIN) return -1;
        return count;
    }
}

int cposix_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int cposix_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event = {.events = events, .data = {.u64 = data}};
    return epoll_ctl(epfd, op, fd, &event);
}

int cposix_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epfd, ready, capacity, timeout);
    for (int i = 0; i < count; i++) {
        events[i] = ready[i].events;
        data[i] = ready[i].data.u64;
    }
    return count;
}
