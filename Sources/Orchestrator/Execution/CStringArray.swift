import Foundation

/// A NULL-terminated array of C strings for execve(2)'s argv and envp.
struct CStringArray {
    var pointers: [UnsafeMutablePointer<CChar>?]

    init(_ strings: [String]) {
        pointers = strings.map { strdup($0) } + [nil]
    }

    func free() {
        for pointer in pointers { Foundation.free(pointer) }
    }
}
