extension ViewerAssets {
    /// The 360° viewer: a WebGL full-screen triangle whose fragment shader turns each pixel's
    /// view direction into longitude and latitude and samples the equirectangular image there.
    /// Drag or arrow keys look around, the wheel, a pinch or +/- zoom. Without WebGL the plain
    /// image the page shows stays. `data-frames` on the canvas counts drawn frames (tests await it).
    /// Yaw is degrees clockwise from the image's centre, as the page's `data-longitude` of the
    /// ways on: each is placed in the view as a marker on the floor where it stands (its
    /// `data-distance` puts it below the horizon), with its label. The fragment holds
    /// the panorama and its view (`#panorama=…&yaw=…&pitch=…&fov=…`, the field of view across
    /// the view's shorter side): opening it restores the view, on any page of the tour that has
    /// this script (`data-panoramas` on the body says where panorama pages are). The minimap's cone turns with the view (the panorama's
    /// `data-heading` plus the yaw). A tiled panorama (`data-tiles`, `data-face-size`,
    /// `data-levels`, `data-tile-size`) is drawn from its small preview at once, then from
    /// the cube tiles in view at the level the view needs, each level over the one below it;
    /// `data-first-frame` and `data-sharp` on the canvas say when (ms after navigation), and
    /// `data-level` and `data-tiles-drawn` what the last frame drew. Any other panorama is
    /// drawn from its small preview at once and from its largest (`data-full`) once that has
    /// come (`data-sharp` then too). A link to another panorama of the tour moves in place:
    /// its page fetched ahead, its main content put in this one's, the view's compass direction
    /// kept, the panorama left behind fading out over the new one, history following.
    /// Its parts (`script/*.js`, compiled in), one function's body in this order: split by
    /// concern, each checked alone by `node --check` in `make test` (Tests/repository/scripts.sh).
    static let scriptParts: [(name: String, bytes: [UInt8])] = [
        ("shared.js", PackageResources.shared_js), ("view.js", PackageResources.view_js), ("dollhouse.js", PackageResources.dollhouse_js),
        ("travel.js", PackageResources.travel_js), ("panel.js", PackageResources.panel_js), ("walk.js", PackageResources.walk_js),
    ]

    static let viewerScript = "\"use strict\";\n(function () {\n" + scriptParts.map { String(decoding: $0.bytes, as: UTF8.self) }.joined() + "})();\n"
}
