/// The version orchd and orchctl report.
public enum OrchdVersion {
    public static let string = "0.1.0"
}
