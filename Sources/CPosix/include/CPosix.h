#ifndef ORCHD_CPOSIX_H
#define ORCHD_CPOSIX_H

// POSIX and Linux calls that Glibc's Swift overlay does not expose (they need _GNU_SOURCE,
// which is defined in CPosix.c only, never here) or that read unions Swift cannot reach.

#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/types.h>

/// posix_spawn_file_actions_addclosefrom_np(3): close every fd >= `from` in the child.
int cposix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// pidfd_open(2) with flags 0. Returns the fd, or -1 with errno set.
int cposix_pidfd_open(pid_t pid);

/// pidfd_send_signal(2) with no siginfo and flags 0: signals the process the pidfd refers to,
/// never a later process that reused its pid. Returns 0 or -1 with errno set.
int cposix_pidfd_send_signal(int pidfd, int signal);

/// waitid(P_PIDFD, pidfd, ..., WEXITED | options) (waitid(2)). On success returns 0 and stores
/// si_code (CLD_EXITED, CLD_KILLED, CLD_DUMPED) in `code` and si_status in `status`; when
/// `options` has WNOHANG and the child has not exited, returns 0 with `code` set to 0.
/// Returns -1 with errno set on failure.
int cposix_waitid_pidfd(int pidfd, int options, int *code, int *status);

/// prctl(PR_SET_CHILD_SUBREAPER, 1) (prctl(2)). Returns 0 or -1 with errno set.
int cposix_set_child_subreaper(void);

/// prctl(PR_GET_CHILD_SUBREAPER) (prctl(2)): 1 when this process is a child subreaper, else 0.
int cposix_is_child_subreaper(void);

/// getsockopt(SO_PEERCRED) (unix(7)): the connected peer's pid, uid and gid.
int cposix_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// fstatat(2) with AT_NO_AUTOMOUNT: a path's identity without mounting anything on the way
/// (an automount point stays unmounted). Returns 0 or -1 with errno set.
int cposix_stat_no_automount(const char *path, struct stat *info);

/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK.
int cposix_accept_cloexec_nonblock(int fd);

/// pipe2(2) with O_CLOEXEC: both ends close-on-exec from creation, so a process spawned
/// by another thread meanwhile cannot inherit them. Returns 0 or -1 with errno set.
int cposix_pipe_cloexec(int fds[2]);

/// signalfd(2) for SIGCHLD, non-blocking and close-on-exec; SIGCHLD must be blocked in every
/// thread. Returns the fd, or -1 with errno set.
int cposix_signalfd_sigchld(void);

/// Reads every pending signal from a non-blocking signalfd(2). Returns how many were read
/// (0: none was pending), or -1 with errno set.
int cposix_signalfd_drain(int fd);

/// epoll_create1(2) with EPOLL_CLOEXEC. Returns the fd, or -1 with errno set.
int cposix_epoll_create(void);

/// epoll_ctl(2) with the event's mask and its data as a 64-bit number: `struct epoll_event` is
/// packed on x86_64, which Swift does not import faithfully. Returns 0 or -1 with errno set.
int cposix_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);

/// epoll_wait(2) for up to `capacity` events, each returned as its mask in `events[i]` and its
/// data in `data[i]`; `timeout` in milliseconds, -1 for none. Returns the count, or -1 with
/// errno set.
int cposix_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout);

/// The WEXITED / WNOHANG / WNOWAIT constants, for Swift callers.
int cposix_wexited(void);
int cposix_wnohang(void);

/// malloc_trim(3) with pad 0: give freed heap memory back to the kernel. Returns 1 if any was.
int cposix_malloc_trim(void);

/// mallopt(M_ARENA_MAX, count) (mallopt(3)): cap glibc's per-thread arenas, which otherwise
/// keep freed memory of every worker thread. Returns 1 on success.
int cposix_set_malloc_arena_max(int count);

/// The step of ``cposix_spawn`` that failed, so an error can name it.
enum cposix_spawn_step {
    /// clone3(2) itself failed in the parent (with a cgroup: the kernel refused to start the
    /// child in it).
    CPOSIX_SPAWN_STEP_CLONE = 1,
    /// Resetting the signal mask or dispositions in the child.
    CPOSIX_SPAWN_STEP_SIGNALS = 2,
    /// setsid(2) in the child.
    CPOSIX_SPAWN_STEP_SESSION = 3,
    /// chdir(2) to the working directory in the child.
    CPOSIX_SPAWN_STEP_WORKING_DIRECTORY = 4,
    /// Placing standard input (the fd the daemon opened) in the child.
    CPOSIX_SPAWN_STEP_STDIN = 5,
    /// dup2(2) of the standard output log file in the child.
    CPOSIX_SPAWN_STEP_STDOUT = 6,
    /// dup2(2) of the standard error log file in the child.
    CPOSIX_SPAWN_STEP_STDERR = 7,
    /// close_range(2) of the fds >= 3 in the child.
    CPOSIX_SPAWN_STEP_FDS = 8,
    /// execve(2) in the child.
    CPOSIX_SPAWN_STEP_EXEC = 9,
    /// The parent's setup: the error report (a pipe where the child does not share memory).
    CPOSIX_SPAWN_STEP_SETUP = 10,
    /// setgroups(2) to the job user's supplementary groups in the child.
    CPOSIX_SPAWN_STEP_GROUPS = 11,
    /// setresgid(2) to the job user's primary group in the child.
    CPOSIX_SPAWN_STEP_GID = 12,
    /// setresuid(2) to the job user in the child.
    CPOSIX_SPAWN_STEP_UID = 13,
    /// The check after the drop: setuid(0) succeeded, so privileges could be regained.
    CPOSIX_SPAWN_STEP_REGAIN = 14,
    /// Creating the standard output log file in the child.
    CPOSIX_SPAWN_STEP_OPEN_STDOUT = 15,
    /// Creating the standard error log file in the child.
    CPOSIX_SPAWN_STEP_OPEN_STDERR = 16,
    /// execve(2) of each of the request's `search_paths` failed as execvp(3)'s search does
    /// (errno EACCES when one was found but not executable, else ENOENT).
    CPOSIX_SPAWN_STEP_SEARCH = 17,
};

/// A log file the child creates (or truncates) itself: openat(2) of `name` relative to
/// `directory_fd`, a descriptor the daemon keeps open, so no path is walked; when that fails
/// with ENOENT (the kept directory was removed since), or `directory_fd` is -1, open(2) of
/// the full `path`. Creating it in the child charges the file system's work to the job, as a
/// shell's `>` redirection does, and keeps the daemon's thread out of the inode allocator.
///
/// A regular file gets exactly `mode`, whatever the umask; anything else (a hook's
/// /dev/null) keeps its own. When the request changes identity, the file is opened after the
/// drop, as the job's user, and never through a symbolic link (`O_NOFOLLOW`), nor blocking on
/// a FIFO (`O_NONBLOCK` while opening); it is used (and truncated) only if it is a regular
/// file with one link owned by that user, else the step fails with EPERM.
struct cposix_spawn_log {
    int directory_fd;
    const char *name;
    const char *path;
    unsigned int mode;
};

/// What ``cposix_spawn`` starts.
struct cposix_spawn_request {
    /// The executable's path, given to execve(2) as is.
    const char *path;
    /// NULL-terminated argument and environment vectors.
    char *const *argv;
    char *const *envp;
    /// The working directory to chdir(2) to.
    const char *working_directory;
    /// The fd that becomes standard input, opened by the caller (a job user may not be able
    /// to open /dev/null itself: it can be mode 0640).
    int stdin_fd;
    /// The files that become standard output and standard error, created in the child (as
    /// the job's user when the identity changes). A NULL `stderr_log.name` shares standard
    /// output's file (and its offset, as `2>&1`).
    struct cposix_spawn_log stdout_log;
    struct cposix_spawn_log stderr_log;
    /// An fd of the cgroup v2 directory the child starts in (CLONE_INTO_CGROUP), or -1 to
    /// start it in the caller's cgroup.
    int cgroup_fd;
    /// Non-zero: drop to `uid`, `gid` and the `group_count` supplementary `groups` before
    /// chdir(2) and execve(2) (the caller must be root). Zero: keep the caller's identity.
    int change_identity;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int group_count;
    /// When `search_path_count` > 0, `path` is ignored and the child, as its new identity and
    /// in its working directory, execs the first of these candidates that it may, as
    /// execvp(3) searches `PATH`: a job's command is looked up with the job user's rights,
    /// never the daemon's, so whether a file exists where the user cannot look stays hidden.
    const char *const *search_paths;
    int search_path_count;
    /// Where the kernel stores the child's pid as it creates it (CLONE_PARENT_SETTID), before
    /// the child runs, so that another thread can kill a child that never gets to its exec
    /// (one its user stopped with SIGSTOP once it runs as that user); NULL: nowhere. Read it
    /// with ``cposix_load_pid``.
    pid_t *child_pid;
};

/// Starts a process with clone3(2) (`CLONE_PIDFD | CLONE_VFORK`, plus `CLONE_INTO_CGROUP`
/// when `cgroup_fd >= 0`, so the child is in its cgroup from its first instruction and cannot
/// fork outside it). The child resets its signal mask and every disposition (32 and 33
/// included) to the default, calls setsid(2), drops to the request's identity when asked
/// (setgroups(2), setresgid(2), setresuid(2), in that order, then checks that setuid(0)
/// fails: raw system calls, which change this one process only, where glibc's would signal
/// the daemon's threads), creates its log files as that identity (``cposix_spawn_log``),
/// chdir(2)s, takes standard input and the two log files as 0-2, marks every other fd
/// close-on-exec (close_range(2)) and execve(2)s. Only
/// async-signal-safe system calls run in the child; a failure there is reported to the parent
/// as {step, errno} (on x86-64, where the child shares the parent's memory until its exec,
/// stored straight into the suspended parent's frame; elsewhere through a close-on-exec pipe)
/// and the child exits 127 (and is reaped here).
///
/// Returns 0 with `*pid` and `*pidfd` set, or -1 with `*failed_step` (an
/// ``cposix_spawn_step``) and `*failed_errno` set.
int cposix_spawn(const struct cposix_spawn_request *request, pid_t *pid, int *pidfd, int *failed_step, int *failed_errno);

/// Reads a pid another thread (or the kernel) may store meanwhile: an atomic load.
pid_t cposix_load_pid(const pid_t *pid);

/// Stores a pid another thread may read meanwhile: an atomic store.
void cposix_store_pid(pid_t *pid, pid_t value);

/// inotify_init1(IN_NONBLOCK | IN_CLOEXEC) (inotify(7)). Returns the fd or -1 with errno set.
int cposix_inotify_init(void);

/// inotify_add_watch(fd, path, IN_MODIFY). Returns the watch descriptor or -1 with errno set.
int cposix_inotify_watch_modify(int fd, const char *path);

/// inotify_rm_watch(2).
int cposix_inotify_remove(int fd, int wd);

/// Reads every pending event of a non-blocking inotify fd and stores the watch descriptors of
/// the first `capacity` in `wds`. Returns how many events were read (0 when none were
/// pending; more than `capacity` means some wds were not stored), or -1 with errno set.
int cposix_inotify_read_wds(int fd, int *wds, int capacity);

/// getxattr(2): reads an extended attribute of a path. Returns its size or -1 with errno set.
long cposix_getxattr(const char *path, const char *name, void *value, unsigned long size);

/// setxattr(2) with flags 0: sets an extended attribute of a path. Returns 0 or -1 with errno
/// set.
int cposix_setxattr(const char *path, const char *name, const void *value, unsigned long size);

/// posix_openpt(3), grantpt(3), unlockpt(3) and ptsname_r(3): opens a new pseudo-terminal's
/// master side (close-on-exec, not the controlling terminal) and writes its slave's path to
/// `name`. Returns the master fd, or -1 with errno set.
int cposix_open_pseudo_terminal(char *name, unsigned long size);

#endif
