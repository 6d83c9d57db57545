#ifndef ORCHD_CSQLITEVFS_H
#define ORCHD_CSQLITEVFS_H

// orchd's SQLite VFS: the default unix VFS, with each write transaction's WAL frames written
// to the file in two write(2)s instead of two per frame. See WALFrameCoalescing.c.

/// The VFS's name, for sqlite3_open_v2(3)'s last argument.
#define ORCHD_SQLITE_VFS_NAME "orchd-unix"

/// Registers the VFS (not as the default) over the default VFS found at the time, once per
/// process; later calls return the first call's result.
/// Returns SQLITE_OK, or SQLite's error code when there is no default VFS to wrap or the
/// registration failed (then open with the default VFS: slower, never wrong).
int orchd_sqlite_vfs_register(void);

/// The largest write the VFS makes at once, in bytes: below the 128 KiB that the unix VFS of
/// SQLite 3.40 takes modulo (os_unix.c, seekAndWriteFd: `nBuf &= 0x1ffff`).
#define ORCHD_SQLITE_VFS_BUFFER_BYTES (120 * 1024)

#endif
