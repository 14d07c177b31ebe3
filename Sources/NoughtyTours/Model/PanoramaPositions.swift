import NTAPIModel

/// Where a panorama was taken on its floor's plan (docs/client.md "Positions"): the API's own
/// type, so the library and the server read a position by the same rules.
public typealias PanoramaPosition = NTAPIModel.PanoramaPosition

extension PanoramaPosition {
    /// A position checked as the server checks it: `invalidInput` for coordinates past
    /// ±10,000 m, a heading beyond ±360°, a camera height (metres above the floor, RoomPlan's)
    /// not in (0, 10], or a number that is not finite.
    public static func onPlan(x: Double, y: Double, heading: Double? = nil, height: Double? = nil) throws(NoughtyToursError) -> PanoramaPosition {
        do {
            return try PanoramaPosition(x: x, y: y, heading: heading, height: height)
        } catch {
            throw .invalidInput(error.message)
        }
    }
}
