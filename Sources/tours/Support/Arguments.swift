/// A command line after its command words: positional arguments, `--name value` options
/// (repeatable) and `--flag` switches. Unknown or misused options are usage errors.
struct Arguments {
    private(set) var positional: [String] = []
    private var options: [String: [String]] = [:]
    private var switches: Set<String> = []

    /// `valued` names the options that take a value; `flags` the switches.
    init(_ words: ArraySlice<String>, valued: Set<String>, flags: Set<String>) throws(CLIError) {
        var rest = words
        while let word = rest.popFirst() {
            if word == "--" {
                positional += rest
                break
            } else if valued.contains(word) {
                guard let value = rest.popFirst() else { throw .usage("\(word) needs a value") }
                options[word, default: []].append(value)
            } else if flags.contains(word) {
                switches.insert(word)
            } else if word.hasPrefix("--") {
                throw .usage("unknown option \(word)")
            } else {
                positional.append(word)
            }
        }
    }

    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }
    func has(_ flag: String) -> Bool { switches.contains(flag) }

    /// The positional arguments, exactly `count` of them, named for the error message.
    func exactly(_ names: String...) throws(CLIError) -> [String] {
        guard positional.count == names.count else {
            throw .usage("expected \(names.joined(separator: " ")), got \(positional.isEmpty ? "nothing" : positional.joined(separator: " "))")
        }
        return positional
    }

    func integer(_ name: String, _ range: ClosedRange<Int>) throws(CLIError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else { throw .usage("\(name) must be a number from \(range.lowerBound) to \(range.upperBound)") }
        return number
    }
}
