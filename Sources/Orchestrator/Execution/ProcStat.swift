import Foundation

/// Reads `/proc/PID/stat` (proc_pid_stat(5)) and other small files of procfs.
enum ProcStat {
    /// The fields of `/proc/PID/stat` that follow the command name, split on spaces:
    /// element 0 is field 3 (`state`), so field N is element N - 3. The command name
    /// (field 2) is skipped by parsing after the last `)`, since it may hold spaces and `)`.
    /// - Returns: `nil` when the file cannot be read (no such process).
    static func fields(pid: Int32) -> [Substring]? {
        guard let bytes = readFile("/proc/\(pid)/stat"),
              let close = bytes.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        let rest = String(decoding: bytes[(close + 1)...], as: UTF8.self)
        return rest.split(separator: " ", omittingEmptySubsequences: true)
    }

    /// The clock ticks since boot now, as ``startTicks(pid:)`` counts them (`CLOCK_BOOTTIME`
    /// in units of `sysconf(_SC_CLK_TCK)`, proc_pid_stat(5)).
    static func ticksNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        let perTick = 1_000_000_000 / UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return (UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)) / perTick
    }

    /// Field 22 (`starttime`) of `/proc/PID/stat`: when the process started, in clock ticks
    /// since boot.
    /// - Returns: `nil` when the process does not exist or the field cannot be parsed.
    static func startTicks(pid: Int32) -> UInt64? {
        // Read once per start: the digits of the 20th field after the command name, parsed
        // from the bytes (no strings, no split).
        guard let bytes = readFile("/proc/\(pid)/stat"), let close = bytes.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        var field = 0
        var index = close + 1
        while index < bytes.count {
            // Skip the separating spaces, then read one field.
            while index < bytes.count && bytes[index] == UInt8(ascii: " ") { index += 1 }
            guard index < bytes.count else { return nil }
            if field == 19 {
                var value: UInt64 = 0
                var digits = 0
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                    let (times, o1) = value.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                    guard !o1 && !o2 else { return nil }
                    value = sum
                    digits += 1
                    index += 1
                }
                let ends = index == bytes.count || bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\n")
                return digits > 0 && ends ? value : nil
            }
            while index < bytes.count && bytes[index] != UInt8(ascii: " ") { index += 1 }
            field += 1
        }
        return nil
    }

    /// The kernel's boot ID (random(4)), read once: it cannot change while we run.
    static let bootID: String = {
        guard let bytes = readFile("/proc/sys/kernel/random/boot_id") else { return "" }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    /// Whether a read that failed with `code` (an errno) says nothing of what it would have
    /// read: orchd is out of descriptors or memory right now, the file may well be there.
    static func isResourceShortage(_ code: Int32) -> Bool {
        code == EMFILE || code == ENFILE || code == ENOMEM
    }

    /// The names in a `/proc` directory (`.` and `..` left out), with readdir(3); none when it
    /// cannot be opened (the process is gone).
    static func entryNames(of directory: String) -> [String] {
        listedEntryNames(of: directory) ?? []
    }

    /// The names in a directory as ``entryNames(of:)`` reads them, or `nil` when it cannot be
    /// listed for want of descriptors or memory (``isResourceShortage(_:)``).
    static func listedEntryNames(of directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return isResourceShortage(errno) ? nil : [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads a small file to its end with read(2). procfs files report size 0, so the size
    /// cannot come from stat(2).
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        // A stack buffer: no heap allocation and no zeroing per read.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> [UInt8]? in
            while true {
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count < 0 {
                    if errno == EINTR { continue }
                    return nil
                }
                if count == 0 { return result }
                result.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<count]))
            }
        }
    }
}
