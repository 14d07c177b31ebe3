import NTAPIModel

// libFuzzer target: our JSON reader, and what is built on it. Any refusal is fine; a crash or
// a hang is not. What it accepts must round-trip: its canonical text reads back as the same
// canonical text, and the request parsers given the same bytes either refuse them or give
// a value that writes and reads back equal.
public func fuzzJSONReader(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let value = try? JSONReader.parse(bytes) {
        let canonical = value.canonicalBytes
        guard let again = try? JSONReader.parse(canonical) else { preconditionFailure("canonical text that does not read back") }
        precondition(again.canonicalBytes == canonical, "canonical text that is not stable")
    }
    if let property = try? PropertyInput.parse(bytes) {
        precondition((try? PropertyInput.parse(property.jsonBytes)) == property, "a property that does not round-trip")
    }
    if let (plan, _) = try? PlanInput.parse(bytes) {
        precondition((try? PlanInput.parse(plan.jsonBytes))?.plan == plan, "a plan that does not round-trip")
    }
    _ = try? TourDocument(try JSONReader.parse(bytes))
    return 0
}
