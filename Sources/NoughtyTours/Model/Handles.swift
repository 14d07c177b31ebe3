import NTAPIModel

/// A property, as the SDK's screens and events hand it out. Opaque: made only by the library
/// (a hand-built handle could only name a row that does not exist).
public struct Property: Equatable, Hashable, Sendable {
    public let id: String
    public let name: String

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// A floor of a property. `name` is the floor's own name, else how the screens title it:
/// "Ground floor" for number 0, "Floor N" otherwise.
public struct Floor: Equatable, Hashable, Sendable {
    public let id: String
    public let name: String?
    public let number: Int?
    public let propertyId: String

    init(id: String, name: String?, number: Int?, propertyId: String) {
        self.id = id
        self.name = name ?? number.map(FloorTitle.of(number:))
        self.number = number
        self.propertyId = propertyId
    }
}

/// A room of a floor's plan.
public struct Room: Equatable, Hashable, Sendable {
    public let id: String
    public let name: String?
    public let floorId: String

    init(id: String, name: String?, floorId: String) {
        self.id = id
        self.name = name
        self.floorId = floorId
    }
}
