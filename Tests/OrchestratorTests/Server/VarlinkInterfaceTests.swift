import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Varlink interfaces")
struct VarlinkInterfaceTests {
    private func makeService() throws -> (VarlinkService, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchd-iface-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try JobStore(database: try Database(path: directory + "/orchd.db"))
        let scheduler = Scheduler(store: store, configuration: .init(concurrency: 1, stateDirectory: directory, logDirectory: directory, teardownGrace: .seconds(1)))
        var configuration = DaemonConfiguration()
        configuration.stateDirectory = directory
        configuration.socketPath = directory + "/s"
        configuration.concurrency = 1
        let service = Daemon.makeService(
            scheduler: scheduler, configuration: configuration, startTime: .now,
            reload: { ManagerInterface.ReloadReply(concurrency: 1) }, requestStop: { _ in })
        return (service, directory)
    }

    @Test("every method in the committed .varlink files has a handler, and every handler a method")
    func interfacesMatchDispatchTable() throws {
        let (service, directory) = try makeService()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var declared: Set<String> = []
        for (interface, description) in VarlinkService.interfaceDescriptions {
            #expect(description.contains("interface \(interface)\n"), "\(interface) declares its own name")
            for line in description.split(separator: "\n") where line.hasPrefix("method ") {
                let name = line.dropFirst("method ".count).prefix { $0 != "(" }
                declared.insert("\(interface).\(name)")
            }
        }
        #expect(Set(service.handlers.keys) == declared)
        #expect(Set(OrchdInterfaces.methods.map(\.name)) == declared, "every declared method has a descriptor, and the reverse")
    }

    /// The qualified names of the errors the committed files declare.
    private var declaredErrors: Set<String> {
        var names: Set<String> = []
        for (interface, description) in VarlinkService.interfaceDescriptions {
            for line in description.split(separator: "\n") where line.hasPrefix("error ") {
                names.insert("\(interface).\(line.dropFirst("error ".count).prefix { $0 != " " && $0 != "(" })")
            }
        }
        return names
    }

    @Test("each handler is registered under its descriptor, and descriptors name only declared errors")
    func descriptorsMatchInterfaces() throws {
        let (service, directory) = try makeService()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for method in OrchdInterfaces.methods {
            let registration = try #require(service.handlers[method.name], "\(method.name) has a handler")
            #expect(type(of: registration.handler).descriptor == method, "\(method.name) is registered under its own descriptor")
            #expect(registration.requiresMore == method.requiresMore)
            #expect(VarlinkService.interfaceDescriptions[method.interface] != nil, "\(method.name) belongs to a served interface")
            for error in method.errors {
                #expect(error.hasPrefix(method.interface + ".") || error.hasPrefix("io.orchd."), "\(method.name): \(error) is an orchd error")
                #expect(declaredErrors.contains(error), "\(method.name): \(error) is declared in a .varlink file")
            }
        }
        #expect(OrchdInterfaces.methods.filter(\.requiresMore).map(\.name).sorted() == ["io.orchd.Jobs.Logs", "io.orchd.Jobs.Subscribe"])
    }

    @Test("every error orchd declares is one a method or a connection can reply with, and every error sent is declared")
    func errorsMatchInterfaces() {
        let listed = Set(OrchdInterfaces.methods.flatMap(\.errors)).union(ManagerInterface.Errors.all).filter { $0.hasPrefix("io.orchd.") }
        let declaredByOrchd = declaredErrors.filter { $0.hasPrefix("io.orchd.") }
        #expect(listed == declaredByOrchd)
        let id = JobID(rawValue: 1)
        let sent: [VarlinkError] = [
            JobsInterface.noSuchJob(id), JobsInterface.invalidJobSpec("x"), JobsInterface.alreadyFinished(id), JobsInterface.permissionDenied(id),
            JobsInterface.storageFailure("x"), JobsInterface.logMissing(path: "/x"), JobsInterface.storageFull(stateDirectory: "/", freeBytes: 0, message: "x"),
            JobsInterface.databaseLocked(path: "/x", message: "x"), JobsInterface.duplicateJob(id, uniqueKey: "k"), JobsInterface.notFinished(id),
            JobsInterface.dependencyNotSucceeded(id, dependency: id, result: nil), JobsInterface.subscriberTooSlow(lastSeen: nil), JobsInterface.stopping(message: "x"),
            QueuesInterface.noSuchQueue(.default), QueuesInterface.invalidSetting("x"),
            .interfaceNotFound("x"), .methodNotFound("x"), .invalidParameter("x"), .permissionDenied(), .expectedMore(),
        ]
        for error in sent {
            #expect(declaredErrors.contains(error.name), "\(error.name) is declared")
        }
    }

    @Test("the served descriptions are the committed files, byte for byte")
    func servedEqualsCommitted() throws {
        let folder = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Orchestrator/Server/Interfaces")
        for (interface, description) in VarlinkService.interfaceDescriptions {
            let committed = try String(contentsOf: folder.appendingPathComponent("\(interface).varlink"), encoding: .utf8)
            #expect(committed == description)
        }
    }

    @Test("interface files use lowerCamel fields and document every member with a comment")
    func interfaceStyle() {
        for (interface, description) in VarlinkService.interfaceDescriptions where interface.hasPrefix("io.orchd") {
            let lines = description.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (index, line) in lines.enumerated() where line.hasPrefix("method ") || line.hasPrefix("error ") || line.hasPrefix("type ") {
                #expect(index > 0 && lines[index - 1].hasPrefix("#"), "\(interface): '\(line)' has a # comment")
            }
            for line in lines where line.hasPrefix("  ") && line.contains(":") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
                let field = line.trimmingCharacters(in: .whitespaces).prefix { $0 != ":" }
                #expect(field.first?.isLowercase == true && !field.contains("_"), "\(interface): field '\(field)' is lowerCamel")
            }
        }
    }
}
