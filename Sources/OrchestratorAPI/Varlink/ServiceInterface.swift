/// Parameter and reply types of `org.varlink.service`, the interface every Varlink service
/// provides (https://varlink.org/Service; `org.varlink.service.varlink`).
public enum ServiceInterface {
    /// The name.
    public static let name = "org.varlink.service"

    /// The qualified names of the interface's errors.
    public enum Errors {
        public static let interfaceNotFound = "org.varlink.service.InterfaceNotFound"
        public static let methodNotFound = "org.varlink.service.MethodNotFound"
        public static let methodNotImplemented = "org.varlink.service.MethodNotImplemented"
        public static let invalidParameter = "org.varlink.service.InvalidParameter"
        public static let permissionDenied = "org.varlink.service.PermissionDenied"
        public static let expectedMore = "org.varlink.service.ExpectedMore"
    }

    /// `GetInfo() -> (vendor, product, version, url, interfaces)`.
    public static let getInfo = VarlinkMethod<VarlinkNoParameters, InfoReply>("org.varlink.service.GetInfo")
    /// `GetInterfaceDescription(interface) -> (description)`.
    public static let getInterfaceDescription = VarlinkMethod<InterfaceDescriptionParameters, InterfaceDescriptionReply>(
        "org.varlink.service.GetInterfaceDescription", errors: [Errors.interfaceNotFound])
    /// Every method of the interface.
    public static let methods = [getInfo.erased, getInterfaceDescription.erased]

    /// What `GetInfo` says about the service.
    public struct InfoReply: Codable, Sendable {
        /// Who makes it.
        public var vendor: String
        /// What it is.
        public var product: String
        /// Its version.
        public var version: String
        /// Where to read about it.
        public var url: String
        /// The interfaces it implements.
        public var interfaces: [String]
        /// Creates a value with every field given.
        public init(vendor: String, product: String, version: String, url: String, interfaces: [String]) {
            self.vendor = vendor
            self.product = product
            self.version = version
            self.url = url
            self.interfaces = interfaces
        }
    }

    /// Which interface `GetInterfaceDescription` describes.
    public struct InterfaceDescriptionParameters: Codable, Sendable {
        /// The interface's name.
        public var interface: String
        /// Creates a value with every field given.
        public init(interface: String) { self.interface = interface }
    }

    /// An interface's description in the Varlink interface definition syntax.
    public struct InterfaceDescriptionReply: Codable, Sendable {
        /// The description.
        public var description: String
        /// Creates a value with every field given.
        public init(description: String) { self.description = description }
    }
}
