import NTAPIModel

extension NoughtyTours {
    /// Sets the order a tour's walk takes the floor's panoramas in (docs/api.md "Floors, plans
    /// and world maps"): `panoramaIds` first, as listed, the floor's others after them as they
    /// were captured; an empty list clears it. Asked of the server at once, not queued: the
    /// panoramas must have been uploaded (else the server's 400 names the one it lacks), and a
    /// device offline gets the transport's error. Returns the floor's panorama ids in walk order.
    public func setPanoramaOrder(_ panoramaIds: [String], on floor: Floor) async throws(NoughtyToursError) -> [String] {
        // The server's rules, the same code: nothing is sent that it would refuse as malformed.
        let input: PanoramaOrderInput
        do {
            input = try PanoramaOrderInput(validating: panoramaIds)
        } catch {
            throw .invalidInput(error.message)
        }
        var writer = JSONWriter()
        input.write(to: &writer)
        let ordered = try await properties.remote.submit("PUT", "/v1/floors/\(floor.id)/panorama-order", json: writer.bytes, PanoramaListDocument.init)
        return ordered.items.map(\.id)
    }
}
