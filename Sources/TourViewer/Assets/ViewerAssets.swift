/// The pages' static files, compiled in (no files to install beside the binary, and no
/// request leaves the origin): style sheet, viewer script, icon.
public enum ViewerAssets {
    public struct Asset: Sendable {
        public let path: String
        public let contentType: String
        public let bytes: [UInt8]
    }

    public static let all: [Asset] = [
        Asset(path: ViewerPaths.style, contentType: "text/css; charset=utf-8", bytes: Array(style.utf8)),
        Asset(path: ViewerPaths.script, contentType: "text/javascript; charset=utf-8", bytes: Array(viewerScript.utf8)),
        Asset(path: ViewerPaths.icon, contentType: "image/svg+xml", bytes: Array(icon.utf8)),
    ]

    static let icon = #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5f8b"/><circle cx="16" cy="16" r="9" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M7 16h18" stroke="#fff" stroke-width="2"/></svg>
"""#

    static let style = #"""
:root { --ink: #1d232a; --muted: #5b6672; --line: #d9dee4; --accent: #1f5f8b; --paper: #f6f7f9; --danger: #a23b2a; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--paper); }
a { color: var(--accent); }
code { font-size: 0.85em; background: #eef1f4; padding: 0.1em 0.3em; border-radius: 4px; }
.bar { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: 0.75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
.brand a, .brand { font-weight: 700; color: var(--ink); text-decoration: none; }
.subtitle { display: block; font-weight: 400; font-size: 0.85rem; color: var(--muted); }
.shared { font-size: 0.85rem; color: var(--muted); }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
h1 { margin: 0.25rem 0 1rem; font-size: 1.75rem; }
h2 { font-size: 1.2rem; margin: 0 0 0.5rem; }
.crumbs { font-size: 0.9rem; color: var(--muted); }
.crumbs .sep { margin: 0 0.4rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 0 0 1rem; }
.narrow { max-width: 26rem; margin: 3rem auto; }
.meta, .counts, .status, .empty { color: var(--muted); font-size: 0.9rem; }
.error { color: var(--danger); }
.badge { display: inline-block; font-size: 0.85rem; padding: 0.2rem 0.6rem; border-radius: 999px; background: #e3f1e8; color: #24663b; }
form.search { display: flex; gap: 0.5rem; margin-bottom: 1rem; }
input, select, button { font: inherit; padding: 0.45rem 0.7rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
input[type=search] { flex: 1; }
button { background: var(--accent); border-color: var(--accent); color: #fff; cursor: pointer; }
button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
.signout button { background: #fff; color: var(--ink); border-color: var(--line); }
label { display: block; font-size: 0.9rem; color: var(--muted); margin: 0.5rem 0 0.25rem; }
form.inline { display: inline-flex; align-items: center; gap: 0.5rem; flex-wrap: wrap; }
form.inline label { display: inline; margin: 0; }
.narrow input { width: 100%; margin-bottom: 0.75rem; }
ul.properties, ul.rooms, ul.share-list, ul.panoramas { list-style: none; padding: 0; margin: 0; }
ul.properties li { margin-bottom: 0.5rem; }
a.property { display: grid; grid-template-columns: 1fr auto; gap: 0.1rem 1rem; padding: 0.8rem 1rem; background: #fff; border: 1px solid var(--line); border-radius: 10px; text-decoration: none; color: var(--ink); }
a.property:hover { border-color: var(--accent); }
a.property .name { font-weight: 600; }
a.property .meta { grid-column: 1 / -1; }
ul.rooms li { display: inline-block; margin: 0 1rem 0.3rem 0; }
ul.rooms .meta { margin-left: 0.4rem; }
ul.share-list li { display: flex; justify-content: space-between; align-items: center; padding: 0.4rem 0; border-top: 1px solid var(--line); }
.share-url { width: 100%; font-family: ui-monospace, monospace; font-size: 0.85rem; }
.pages { display: flex; gap: 1rem; justify-content: center; margin-top: 1rem; color: var(--muted); }
.plan-figure { margin: 0 0 1rem; overflow-x: auto; }
svg.plan { max-width: 100%; height: auto; display: block; }
svg.plan polygon { fill: #e7eff6; stroke: var(--accent); stroke-width: 2; }
svg.plan a:hover polygon, svg.plan a:focus polygon { fill: #cfe0ee; }
svg.plan text { font-size: 13px; fill: var(--ink); }
svg.plan .scale path { fill: none; stroke: var(--ink); stroke-width: 2; }
ul.panoramas { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 1rem; }
ul.panoramas a { display: block; text-decoration: none; color: var(--muted); font-size: 0.85rem; }
ul.panoramas img { width: 100%; height: auto; border-radius: 8px; display: block; background: #dde3e9; }
.viewer { position: relative; width: 100%; aspect-ratio: 16 / 9; background: #111; border-radius: 10px; overflow: hidden; }
.viewer canvas { width: 100%; height: 100%; display: block; cursor: grab; touch-action: none; }
.viewer img.fallback { width: 100%; height: 100%; object-fit: contain; display: block; }
.hidden { display: none !important; }
"""#
}
