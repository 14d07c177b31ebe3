import NTAPIModel
import Testing

/// Where a panorama stands (docs/api.md "Panorama"): one set of rules, read by the server from
/// a query or tus metadata and by the client from its capture call.
@Suite struct PanoramaPositionTests {
    @Test(arguments: [(-90.0, 270.0), (360, 0), (-360, 0), (-0.0, 0), (-1e-20, 0), (359.5, 359.5), (0, 0), (90, 90)])
    func aHeadingIsKeptInOneTurn(given: Double, kept: Double) throws {
        let heading = try #require(try PanoramaPosition(x: 0, y: 0, heading: given).heading)
        #expect(heading == kept && heading.sign == .plus && (0..<360).contains(heading))
    }

    @Test func parametersReadBackAsTheSamePosition() throws {
        for position in [try PanoramaPosition(x: 2.5, y: -1, heading: 270), try PanoramaPosition(x: -10_000, y: 10_000), try PanoramaPosition(x: 0.1, y: 1e-3),
                         try PanoramaPosition(x: 1, y: 2, heading: 90, height: 1.35)] {
            let text = Dictionary(uniqueKeysWithValues: position.parameters.map { ($0.name, $0.value) })
            #expect(try PanoramaPosition.parse(x: text["x"], y: text["y"], heading: text["heading"], height: text["height"]) == position)
            var writer = JSONWriter()
            position.write(to: &writer)
            #expect(try PanoramaPosition(try JSONReader.parse(writer.bytes)) == position)
        }
        #expect(try PanoramaPosition.parse(x: nil, y: nil, heading: nil) == nil)
        #expect(try PanoramaPosition(JSONValue.null) == nil && (try PanoramaPosition(nil)) == nil)
    }

    /// A camera's height above its floor (RoomPlan's): above the floor, at most 10 m, with a position.
    @Test func aHeightIsAboveTheFloorAndComesWithAPosition() throws {
        #expect(try PanoramaPosition.parse(x: "1", y: "2", heading: nil, height: "1.2")?.height == 1.2)
        for (height, says) in [("0", "above the floor"), ("-1", "above the floor"), ("10.5", "at most 10"), ("1e0", "decimal")] {
            #expect { _ = try PanoramaPosition.parse(x: "1", y: "2", heading: nil, height: height) } throws: { error in
                (error as? InvalidDocument)?.message.contains(says) == true
            }
        }
        #expect { _ = try PanoramaPosition.parse(x: nil, y: nil, heading: nil, height: "1.5") } throws: { error in
            (error as? InvalidDocument)?.message.contains("height needs a position") == true
        }
    }

    @Test(arguments: [("1", nil, nil, "x and y come together"), (nil, "1", nil, "x and y come together"), (nil, nil, "5", "heading needs a position"),
                      ("1", "nan", nil, "decimal"), ("1e3", "1", nil, "decimal"), ("+1", "1", nil, "decimal"), (" 1", "1", nil, "decimal"),
                      ("1", "1", "-720", "degrees"), ("10000.01", "0", nil, "metres")] as [(String?, String?, String?, String)])
    func whatDoesNotReadSaysWhy(x: String?, y: String?, heading: String?, says: String) {
        #expect { _ = try PanoramaPosition.parse(x: x, y: y, heading: heading) } throws: { error in
            (error as? InvalidDocument)?.message.contains(says) == true
        }
    }

    @Test func aDocumentPositionNeedsBothCoordinates() throws {
        #expect(throws: InvalidDocument.self) { _ = try PanoramaPosition(try JSONReader.parse(#"{"x": 1}"#)) }
        #expect(throws: InvalidDocument.self) { _ = try PanoramaPosition(try JSONReader.parse(#"{"x": 1, "y": "2"}"#)) }
        #expect(throws: InvalidDocument.self) { _ = try PanoramaPosition(try JSONReader.parse("[1, 2]")) }
    }
}
