// swift-tools-version:6.0
import PackageDescription

// For the modules orchctl is built from: their generic types' metadata (`[String: String]`,
// the parser's tables) is got through its accessor functions instead of by mangled name. By
// name, the runtime demangled the type and looked up each conformance it needs (`String:
// Hashable`) by scanning every conformance record of the static binary, once per lookup:
// 640,000 of a CLI submit's 1.68 million instructions (Benchmarks/README.md). Only the
// binary's size grows a little.
let metadataByAccessor: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"],
                 .when(configuration: .release)),
]

// For the same modules: each function in a section of its own, so that the linker can place
// the functions orchctl runs side by side (`startupOrder` below).
let functionSections: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
]

// orchctl's functions in the order its everyday commands first run them (Linking/orchctl.order,
// written by scripts/order-orchctl-symbols), laid out in that order by lld: the code of a start
// then spans a few pages instead of its whole 10 MiB of text, and each run takes fewer page
// faults (Benchmarks/README.md, the twentieth pass). Names the file lacks or no longer match
// are placed after it, silently.
let startupOrder = [
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Linking/orchctl.order",
    "-Xlinker", "--no-warn-symbol-ordering",
]

let package = Package(
    name: "orchd",
    products: [
        .executable(name: "orchd", targets: ["orchd"]),
        .executable(name: "orchctl", targets: ["orchctl"]),
        .library(name: "Orchestrator", targets: ["Orchestrator"]),
    ],
    targets: [
        // C libraries from Debian, found through pkg-config and linked by name.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // The POSIX calls Glibc's Swift overlay hides behind _GNU_SOURCE.
        .target(name: "CPosix"),
        // SQLite's unix VFS, writing each transaction's WAL frames at once. Its debug
        // information in DWARF 4: with a second C unit in DWARF 5, Debian 12's valgrind (3.19)
        // gave up reading orchd's ("possibly corrupted debuginfo file"), and Benchmarks/run
        // counts instructions with it.
        .target(name: "CSQLiteVFS", dependencies: ["CSQLite"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),

        // Model and wire protocol shared by daemon and CLI; FoundationEssentials only.
        .target(name: "OrchestratorAPI", swiftSettings: metadataByAccessor + functionSections),

        // Command lines as data: the parser and help renderer of orchctl and orchd, and the
        // value checks orchd's configuration file shares; FoundationEssentials only.
        .target(name: "CommandLineParsing", dependencies: ["OrchestratorAPI"], swiftSettings: metadataByAccessor + functionSections),

        // The engine: everything the daemon does, testable as a library.
        .target(
            name: "Orchestrator",
            dependencies: ["OrchestratorAPI", "CommandLineParsing", "CSQLite", "CSQLiteVFS", "CSystemd", "CPosix"],
            // Served by org.varlink.service.GetInterfaceDescription; embedded so the static
            // binary needs no resource bundle beside it.
            resources: [
                .embedInCode("Server/Interfaces/io.orchd.Jobs.varlink"),
                .embedInCode("Server/Interfaces/io.orchd.Manager.varlink"),
                .embedInCode("Server/Interfaces/io.orchd.Queues.varlink"),
                .embedInCode("Server/Interfaces/org.varlink.service.varlink"),
            ]
        ),

        .executableTarget(
            name: "orchd", dependencies: ["Orchestrator", "OrchestratorAPI"],
            // lld, as for orchctl below: gold turned a note on code in the toolchain's static
            // FoundationEssentials (its temporary-file fallback calls mktemp) into a warning.
            linkerSettings: [.unsafeFlags(["-use-ld=lld"], .when(configuration: .release))]),
        .executableTarget(
            name: "orchctl",
            dependencies: ["OrchestratorAPI", "CommandLineParsing", "CPosix"],
            swiftSettings: metadataByAccessor + functionSections,
            // A static executable in release builds: no dynamic loader runs at all, which took
            // about 0.4 ms of every start (Benchmarks/README.md). orchctl must therefore
            // never call NSS (getpwuid and kin): a static glibc that loads an NSS module, as it
            // does for a uid /etc/passwd lacks, crashes. It asks orchd for login names instead
            // (io.orchd.Manager.GetUserNames). lld, because it does not turn the GNU linkers'
            // "statically linked applications requires at runtime" notes for the NSS and
            // dlopen code left unreached in libc.a and the Swift runtime into warnings.
            linkerSettings: [
                .unsafeFlags(["-static-executable", "-use-ld=lld"] + startupOrder, .when(configuration: .release)),
            ]
        ),

        // Limits on the tests' waits, shared by the test targets that wait on processes and pipes.
        .target(name: "TestWaitLimits", path: "Tests/TestWaitLimits"),
        .testTarget(name: "OrchestratorAPITests", dependencies: ["OrchestratorAPI"]),
        .testTarget(
            name: "OrchestratorTests", dependencies: ["Orchestrator", "CommandLineParsing", "CPosix", "TestWaitLimits"], exclude: ["Golden"]),
        .testTarget(name: "orchctlTests", dependencies: ["orchctl", "CommandLineParsing"], exclude: ["Golden"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["OrchestratorAPI", "Orchestrator", "CPosix", "TestWaitLimits"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
