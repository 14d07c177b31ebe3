/// The release both binaries report (`toursd --version`, `tours --version`): the server and
/// the client of one release speak the same API.
public enum Release {
    public static let version = "0.30.0"
}
