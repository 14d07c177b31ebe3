/// A reason toursd cannot start or a command cannot run, in words an operator can act on.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
