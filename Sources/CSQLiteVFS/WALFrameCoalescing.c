// A VFS over SQLite's default (unix) VFS that gathers the frames of a write transaction in
// the WAL file into two writes: the first frame's header alone, then the rest.
//
// SQLite appends each WAL frame with two xWrite calls, its 24-byte header and then its page
// (wal.c, walWriteOneFrame), so a commit that changes 12 pages makes 24 pwrite(2)s; the kernel's
// work for each, not the bytes, is most of their cost (a C loop on this machine: 21 µs for 24
// pwrites against 4 µs for one write of the same 12 frames). Here the frames of a transaction
// are kept in memory while they are contiguous and written at once when the commit frame's
// page arrives: the commit frame is the one whose header carries the database's size after the
// commit (bytes 4-7 not zero; https://www.sqlite.org/fileformat2.html#walformat). A frame
// header never starts what is kept, so one that no page follows is never left kept (see
// coalescingWrite). The write
// happens inside SQLite's own xWrite of that page, before SQLite publishes the commit in the
// WAL index, so no reader in this process or another can look for a frame that is not in the
// file, and a crash loses at most frames of a transaction that never committed, as before.
//
// Anything else that needs the file as written (a read, a sync, the size, a truncation, a
// close, a write elsewhere in the file) writes the kept frames first. Every other file
// (the database, journals) and every other call passes straight to the unix VFS, which keeps
// the locking and the shared-memory WAL index, so other processes (the sqlite3 shell) work
// with the same files as before.

#include "CSQLiteVFS.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/// One open file: ours first (SQLite sees this), the unix VFS's right after it.
typedef struct CoalescingFile {
    sqlite3_file base;
    sqlite3_file *real;
    /// Frames kept for one write; NULL for files that are not a WAL (pass-through).
    unsigned char *buffer;
    int used;
    sqlite3_int64 bufferOffset;
    /// Where the commit frame's header just written ends (kept or not), -1 when the last write
    /// was something else: a write there is that frame's page, which completes the transaction.
    sqlite3_int64 commitHeaderEnd;
} CoalescingFile;

/// The unix VFS's sqlite3_file follows ours at this offset (keeps its 8-byte alignment).
#define REAL_FILE_OFFSET ((sizeof(CoalescingFile) + 7) & ~(size_t)7)

static sqlite3_vfs *underlying;
static sqlite3_vfs coalescingVFS;
static int registration = -1;

static int flushKept(CoalescingFile *file) {
    if (file->used == 0) return SQLITE_OK;
    int used = file->used;
    // Whatever the outcome, these bytes are no longer kept: a failed write fails the
    // transaction, and SQLite writes its frames again when it retries.
    file->used = 0;
    return file->real->pMethods->xWrite(file->real, file->buffer, used, file->bufferOffset);
}

static int coalescingClose(sqlite3_file *base) {
    CoalescingFile *file = (CoalescingFile *)base;
    int flushed = flushKept(file);
    int closed = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    free(file->buffer);
    file->buffer = NULL;
    return flushed != SQLITE_OK ? flushed : closed;
}

static int coalescingRead(sqlite3_file *base, void *data, int amount, sqlite3_int64 offset) {
    CoalescingFile *file = (CoalescingFile *)base;
    int rc = flushKept(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, data, amount, offset);
}

/// A WAL frame header's size in bytes (https://www.sqlite.org/fileformat2.html#walformat).
#define WAL_FRAME_HEADER_BYTES 24

/// Bytes 4-7 (big-endian) of a WAL frame header are the database's size in pages after the
/// commit in a commit frame, zero in any other frame.
static int isCommitFrameHeader(const void *data, int amount) {
    if (amount != WAL_FRAME_HEADER_BYTES) return 0;
    const unsigned char *bytes = data;
    return (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
}

static int coalescingWrite(sqlite3_file *base, const void *data, int amount, sqlite3_int64 offset) {
    CoalescingFile *file = (CoalescingFile *)base;
    if (file->buffer == NULL) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    int completesCommit = offset == file->commitHeaderEnd;
    file->commitHeaderEnd = isCommitFrameHeader(data, amount) ? offset + amount : -1;
    int contiguous = file->used > 0 && offset == file->bufferOffset + file->used;
    int rc;
    if (file->used > 0 && (!contiguous || amount > ORCHD_SQLITE_VFS_BUFFER_BYTES - file->used)) {
        // Not contiguous, or no room: what is kept goes first, in its order.
        if ((rc = flushKept(file)) != SQLITE_OK) return rc;
    }
    // A frame header alone never starts what is kept: a header that no page follows is one
    // SQLite rewrites in place (wal.c, walRewriteChecksums, after a transaction changed a page
    // it had already spilled to the WAL; the commit frame's header comes last, and SQLite then
    // publishes the commit without another write). Kept, it would reach the file only with a
    // later write, so a crash in between lost a committed transaction. A transaction's first
    // frame header is written alone so; its page starts the run that the commit completes.
    if (amount > ORCHD_SQLITE_VFS_BUFFER_BYTES || (file->used == 0 && amount == WAL_FRAME_HEADER_BYTES)) {
        return file->real->pMethods->xWrite(file->real, data, amount, offset);
    }
    if (file->used == 0) file->bufferOffset = offset;
    memcpy(file->buffer + file->used, data, (size_t)amount);
    file->used += amount;
    // The commit frame's page: the transaction is complete, so it goes to the file now.
    if (completesCommit) return flushKept(file);
    return SQLITE_OK;
}

static int coalescingTruncate(sqlite3_file *base, sqlite3_int64 size) {
    CoalescingFile *file = (CoalescingFile *)base;
    int rc = flushKept(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int coalescingSync(sqlite3_file *base, int flags) {
    CoalescingFile *file = (CoalescingFile *)base;
    int rc = flushKept(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

static int coalescingFileSize(sqlite3_file *base, sqlite3_int64 *size) {
    CoalescingFile *file = (CoalescingFile *)base;
    int rc = flushKept(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileSize(file->real, size);
}

// The rest passes straight through.

static sqlite3_file *realOf(sqlite3_file *base) { return ((CoalescingFile *)base)->real; }

static int coalescingLock(sqlite3_file *base, int level) {
    sqlite3_file *real = realOf(base);
    return real->pMethods->xLock(real, level);
}

static int coalescingUnlock(sqlite3_file *base, int level) {
    sqlite3_file *real = realOf(base);
    return real->pMethods->xUnlock(real, level);
}

static int coalescingCheckReservedLock(sqlite3_file *base, int *reserved) {
    sqlite3_file *real = realOf(base);
    return real->pMethods->xCheckReservedLock(real, reserved);
}

static int coalescingFileControl(sqlite3_file *base, int op, void *argument) {
    sqlite3_file *real = realOf(base);
    return real->pMethods->xFileControl(real, op, argument);
}

static int coalescingSectorSize(sqlite3_file *base) {
    sqlite3_file *real = realOf(base);
    return real->pMethods->xSectorSize(real);
}

static int coalescingDeviceCharacteristics(sqlite3_file *base) {
    sqlite3_file *real = realOf(base);
    return real->pMethods->xDeviceCharacteristics(real);
}

static int coalescingShmMap(sqlite3_file *base, int region, int size, int extend, void volatile **memory) {
    sqlite3_file *real = realOf(base);
    if (real->pMethods->iVersion < 2 || real->pMethods->xShmMap == NULL) return SQLITE_IOERR_SHMMAP;
    return real->pMethods->xShmMap(real, region, size, extend, memory);
}

static int coalescingShmLock(sqlite3_file *base, int offset, int count, int flags) {
    sqlite3_file *real = realOf(base);
    if (real->pMethods->iVersion < 2 || real->pMethods->xShmLock == NULL) return SQLITE_IOERR_SHMLOCK;
    return real->pMethods->xShmLock(real, offset, count, flags);
}

static void coalescingShmBarrier(sqlite3_file *base) {
    sqlite3_file *real = realOf(base);
    if (real->pMethods->iVersion >= 2 && real->pMethods->xShmBarrier != NULL) real->pMethods->xShmBarrier(real);
}

static int coalescingShmUnmap(sqlite3_file *base, int deleteFlag) {
    sqlite3_file *real = realOf(base);
    if (real->pMethods->iVersion < 2 || real->pMethods->xShmUnmap == NULL) return SQLITE_OK;
    return real->pMethods->xShmUnmap(real, deleteFlag);
}

static int coalescingFetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **pointer) {
    sqlite3_file *real = realOf(base);
    if (real->pMethods->iVersion < 3 || real->pMethods->xFetch == NULL) {
        *pointer = NULL;
        return SQLITE_OK;
    }
    return real->pMethods->xFetch(real, offset, amount, pointer);
}

static int coalescingUnfetch(sqlite3_file *base, sqlite3_int64 offset, void *pointer) {
    sqlite3_file *real = realOf(base);
    if (real->pMethods->iVersion < 3 || real->pMethods->xUnfetch == NULL) return SQLITE_OK;
    return real->pMethods->xUnfetch(real, offset, pointer);
}

static const sqlite3_io_methods coalescingMethods = {
    .iVersion = 3,
    .xClose = coalescingClose,
    .xRead = coalescingRead,
    .xWrite = coalescingWrite,
    .xTruncate = coalescingTruncate,
    .xSync = coalescingSync,
    .xFileSize = coalescingFileSize,
    .xLock = coalescingLock,
    .xUnlock = coalescingUnlock,
    .xCheckReservedLock = coalescingCheckReservedLock,
    .xFileControl = coalescingFileControl,
    .xSectorSize = coalescingSectorSize,
    .xDeviceCharacteristics = coalescingDeviceCharacteristics,
    .xShmMap = coalescingShmMap,
    .xShmLock = coalescingShmLock,
    .xShmBarrier = coalescingShmBarrier,
    .xShmUnmap = coalescingShmUnmap,
    .xFetch = coalescingFetch,
    .xUnfetch = coalescingUnfetch,
};

static int coalescingOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *base, int flags, int *outFlags) {
    (void)vfs;
    CoalescingFile *file = (CoalescingFile *)base;
    memset(file, 0, sizeof *file);
    file->commitHeaderEnd = -1;
    file->real = (sqlite3_file *)((unsigned char *)file + REAL_FILE_OFFSET);
    if (flags & SQLITE_OPEN_WAL) {
        file->buffer = malloc(ORCHD_SQLITE_VFS_BUFFER_BYTES);
        if (file->buffer == NULL) return SQLITE_NOMEM;
    }
    // The unix VFS's own object: its xOpen picks its locking style from the VFS it is given.
    int rc = underlying->xOpen(underlying, name, file->real, flags, outFlags);
    if (file->real->pMethods == NULL) {
        // Nothing to close: SQLite calls no method of a file whose pMethods is NULL.
        free(file->buffer);
        file->buffer = NULL;
        base->pMethods = NULL;
        return rc == SQLITE_OK ? SQLITE_CANTOPEN : rc;
    }
    base->pMethods = &coalescingMethods;
    return rc;
}

// The VFS's other methods are the unix VFS's, called with its own object.

static int forwardDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    return underlying->xDelete(underlying, name, syncDirectory);
}

static int forwardAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return underlying->xAccess(underlying, name, flags, result);
}

static int forwardFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *output) {
    (void)vfs;
    return underlying->xFullPathname(underlying, name, size, output);
}

static void *forwardDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return underlying->xDlOpen(underlying, name);
}

static void forwardDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    underlying->xDlError(underlying, size, message);
}

static void (*forwardDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return underlying->xDlSym(underlying, handle, symbol);
}

static void forwardDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    underlying->xDlClose(underlying, handle);
}

static int forwardRandomness(sqlite3_vfs *vfs, int size, char *output) {
    (void)vfs;
    return underlying->xRandomness(underlying, size, output);
}

static int forwardSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return underlying->xSleep(underlying, microseconds);
}

static int forwardCurrentTime(sqlite3_vfs *vfs, double *time) {
    (void)vfs;
    return underlying->xCurrentTime(underlying, time);
}

static int forwardGetLastError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    return underlying->xGetLastError ? underlying->xGetLastError(underlying, size, message) : 0;
}

static int forwardCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *time) {
    (void)vfs;
    return underlying->xCurrentTimeInt64(underlying, time);
}

int orchd_sqlite_vfs_register(void) {
    // Called once, from Swift's lazy static initialiser of Database.libraryConfigured.
    if (registration != -1) return registration;
    underlying = sqlite3_vfs_find(NULL);
    if (underlying == NULL || underlying->iVersion < 2) return registration = SQLITE_ERROR;
    coalescingVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)(REAL_FILE_OFFSET + (size_t)underlying->szOsFile),
        .mxPathname = underlying->mxPathname,
        .zName = ORCHD_SQLITE_VFS_NAME,
        .xOpen = coalescingOpen,
        .xDelete = forwardDelete,
        .xAccess = forwardAccess,
        .xFullPathname = forwardFullPathname,
        .xDlOpen = forwardDlOpen,
        .xDlError = forwardDlError,
        .xDlSym = forwardDlSym,
        .xDlClose = forwardDlClose,
        .xRandomness = forwardRandomness,
        .xSleep = forwardSleep,
        .xCurrentTime = forwardCurrentTime,
        .xGetLastError = forwardGetLastError,
        .xCurrentTimeInt64 = forwardCurrentTimeInt64,
    };
    return registration = sqlite3_vfs_register(&coalescingVFS, 0);
}
