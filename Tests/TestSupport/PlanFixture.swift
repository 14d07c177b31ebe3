/// Plans for tests, as their rooms' outlines.
public enum PlanFixture {
    /// `count` rooms of 4 × 3 m in a row along x, room n from x = 4n, each outline `points`
    /// points spread evenly along its four walls; with `jitter`, each point up to a centimetre
    /// off its wall, as a scan traces one.
    public static func roomsInARow(_ count: Int, points: Int, jitter: Bool = false) -> [[(x: Double, y: Double)]] {
        (0..<count).map { n in
            let (x0, x1) = (Double(4 * n), Double(4 * n + 4))
            let corners = [(x0, 0.0), (x1, 0.0), (x1, 3.0), (x0, 3.0)]
            let perSide = points / 4
            return (0..<4).flatMap { side -> [(x: Double, y: Double)] in
                let (from, to) = (corners[side], corners[(side + 1) % 4])
                return (0..<perSide).map { step in
                    let t = Double(step) / Double(perSide)
                    let off = jitter ? Double((step * 7919) % 11) / 1000 : 0
                    return (from.0 + (to.0 - from.0) * t + (side % 2 == 1 ? off : 0), from.1 + (to.1 - from.1) * t + (side % 2 == 0 ? off : 0))
                }
            }
        }
    }

    /// An outline as the API's JSON: `[[x,y],…]`.
    public static func json(_ outline: [(x: Double, y: Double)]) -> String {
        "[" + outline.map { "[\($0.x),\($0.y)]" }.joined(separator: ",") + "]"
    }
}
