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
.brand img.logo { height: 2rem; width: auto; max-width: 10rem; object-fit: contain; vertical-align: middle; margin-right: 0.6rem; padding: 2px; border-radius: 4px; background: #fff; }
.contact address { font-style: normal; }
.shared { font-size: 0.85rem; color: var(--muted); }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
h1 { margin: 0.25rem 0 1rem; font-size: 1.75rem; }
h2 { font-size: 1.2rem; margin: 0 0 0.5rem; }
.crumbs { font-size: 0.9rem; color: var(--muted); }
.crumbs .sep { margin: 0 0.4rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 0 0 1rem; }
.narrow { max-width: 26rem; margin: 3rem auto; }
details.ids { margin-top: 1rem; color: var(--muted); font-size: 0.9rem; }
details.ids summary { cursor: pointer; }
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
ul.share-list li { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 0.4rem 0.6rem; padding: 0.5rem 0; border-top: 1px solid var(--line); }
ul.share-list li > span { flex: 1 1 100%; }
ul.share-list input.share-url { flex: 1 1 12rem; min-width: 0; }
.share-url { width: 100%; font-family: ui-monospace, monospace; font-size: 0.85rem; }
.copyable { display: flex; gap: 0.5rem; align-items: flex-start; margin-bottom: 0.5rem; }
.copyable .share-url { flex: 1; }
textarea.share-url { resize: vertical; }
form.share-form { display: grid; grid-template-columns: max-content 1fr; gap: 0.4rem 0.75rem; align-items: center; margin: 0.75rem 0; }
form.share-form label { margin: 0; }
form.share-form label.check, form.share-form button { grid-column: 1 / -1; justify-self: start; }
form.share-form label.check { color: var(--ink); }
form.share-form input:not([type=checkbox]), form.share-form select { min-width: 0; width: 100%; }
input[type=checkbox] { width: 1.5rem; height: 1.5rem; margin: 0 0.4rem 0 0; vertical-align: middle; }
@media (max-width: 40rem) { form.share-form { grid-template-columns: minmax(0, 1fr); } }
.pages { display: flex; gap: 1rem; justify-content: center; margin-top: 1rem; color: var(--muted); }
.plan-figure { margin: 0 0 1rem; overflow-x: auto; }
svg.plan { max-width: 100%; height: auto; display: block; }
svg.plan polygon { fill: #e7eff6; stroke: var(--accent); stroke-width: 2; }
svg.plan a:hover polygon, svg.plan a:focus polygon { fill: #cfe0ee; }
svg.plan text { fill: var(--ink); }
svg.plan text .area { font-size: 0.85em; fill: var(--muted); }
ul.rooms .measure, ul.sizes .measure { color: var(--muted); margin-left: 0.4rem; font-size: 0.9rem; }
ul.sizes { list-style: none; margin: 0.4rem 0 0; padding: 0; font-size: 0.9rem; }
p.total { margin: 0.3rem 0 0; color: var(--muted); font-size: 0.9rem; }
p.units { display: flex; align-items: center; gap: 0.4rem; margin: 0.5rem 0 0; color: var(--muted); font-size: 0.9rem; }
p.units a { display: inline-block; min-height: 1.75rem; padding: 0.15rem 0.7rem; border: 1px solid var(--line); border-radius: 999px; background: #fff; text-decoration: none; }
p.units a[aria-current] { background: var(--accent); border-color: var(--accent); color: #fff; }
svg.plan .scale path { fill: none; stroke: var(--ink); stroke-width: 2; }
ul.panoramas { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 1rem; }
ul.panoramas a { display: block; text-decoration: none; color: var(--muted); font-size: 0.85rem; }
ul.panoramas img { width: 100%; height: auto; border-radius: 8px; display: block; background: #dde3e9; }
ul.panoramas .name { display: block; color: var(--ink); font-weight: 600; margin-top: 0.3rem; }
.viewer { position: relative; width: 100%; aspect-ratio: 16 / 9; background: #111; border-radius: 10px; overflow: hidden; }
.viewer canvas { width: 100%; height: 100%; display: block; cursor: grab; touch-action: none; }
.viewer img.fallback { width: 100%; height: 100%; object-fit: contain; display: block; }
.viewer .hotspots { position: absolute; inset: 0; pointer-events: none; }
.viewer canvas.leaving { position: absolute; inset: 0; pointer-events: none; transition: opacity 0.35s ease-out, transform 0.35s ease-out; }
.viewer canvas.leaving.gone { opacity: 0; transform: scale(1.2); }
.viewer canvas.travel { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
@media (prefers-reduced-motion: reduce) { .viewer canvas.leaving { transition: none; } }
main h1:focus { outline: none; }
.viewer a.hotspot { position: absolute; transform: translate(calc(-50% + var(--nudge, 0px)), calc(-100% - 0.5rem - var(--mark, 14px) * var(--flat, 1) / 2 - var(--lift, 0px))); pointer-events: auto; padding: 0.3rem 0.8rem; border-radius: 999px; background: rgba(255, 255, 255, 0.94); color: var(--ink); font-size: 0.9rem; font-weight: 600; text-decoration: none; white-space: nowrap; box-shadow: 0 1px 5px rgba(0, 0, 0, 0.45); }
.viewer a.hotspot::before { content: "\2191\00a0"; color: var(--accent); }
.viewer a.hotspot::after { content: ""; position: absolute; left: calc(50% - 1px - var(--nudge, 0px)); top: 100%; width: 2px; height: calc(0.5rem + var(--lift, 0px)); background: rgba(255, 255, 255, 0.9); pointer-events: none; }
.viewer a.hotspot .mark { position: absolute; left: calc(50% - var(--nudge, 0px)); top: calc(100% + 0.5rem + var(--mark, 14px) * var(--flat, 1) / 2 + var(--lift, 0px)); width: var(--mark, 14px); height: calc(var(--mark, 14px) * var(--flat, 1)); transform: translate(-50%, -50%); border-radius: 50%; border: 3px solid rgba(255, 255, 255, 0.95); background: rgba(255, 255, 255, 0.3); box-shadow: 0 0 6px rgba(0, 0, 0, 0.5); box-sizing: border-box; }
.viewer a.hotspot:hover, .viewer a.hotspot.focused { outline: 3px solid #ffbf47; }
.controls .hint { margin: 0; padding: 0.4rem 0.9rem; border-radius: 1rem; background: rgba(0, 0, 0, 0.75); color: #fff; font-size: 0.9rem; text-align: center; }
.controls .hint .coarse { display: none; }
@media (pointer: coarse) { .controls .hint .fine { display: none; } .controls .hint .coarse { display: inline; } }
.viewer:fullscreen { width: 100vw; height: 100vh; aspect-ratio: auto; border-radius: 0; }
nav.walk { display: flex; justify-content: space-between; gap: 1rem; margin: 0.75rem 0 1rem; }
nav.walk a { padding: 0.45rem 0.9rem; border: 1px solid var(--line); border-radius: 8px; background: #fff; text-decoration: none; }
nav.walk a[rel=next] { margin-left: auto; text-align: right; }
.around .panel-body { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: 0 1rem; }
.around .panel-body > .about, .around .panel-body > p.meta, .around .panel-body > p.download { grid-column: 1 / -1; }
.ways ul.links { list-style: none; padding: 0; margin: 0; }
.ways ul.links li { padding: 0.3rem 0; border-top: 1px solid var(--line); }
.ways ul.links li:first-child { border-top: 0; }
.ways .direction { margin-left: 0.5rem; color: var(--muted); font-size: 0.85rem; }
svg.plan .spot circle { fill: var(--accent); stroke: #fff; stroke-width: 4; }
svg.plan a.spot:hover circle, svg.plan a.spot:focus circle { fill: #0f3d5c; }
svg.plan .spot.current circle { fill: #c2410c; }
svg.plan .cone { fill: rgba(194, 65, 12, 0.22); stroke: #c2410c; stroke-width: 2; }
nav.floors ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.75rem 0 0; padding: 0; }
nav.floors a { display: inline-block; padding: 0.25rem 0.8rem; border: 1px solid var(--line); border-radius: 999px; text-decoration: none; }
nav.floors a[aria-current] { background: var(--accent); border-color: var(--accent); color: #fff; }
section.floor-plans ul.downloads { list-style: none; padding: 0; margin: 0.4rem 0; }
section.floor-plans ul.downloads li { padding: 0.2rem 0; }
section.floor-plans a[download], p.download a { display: inline-block; min-height: 1.5rem; padding: 0.15rem 0.35rem; line-height: 1.5rem; }
a.cover { position: relative; display: block; margin: 0 0 1rem; border-radius: 10px; overflow: hidden; background: #dde3e9; }
a.cover img { display: block; width: 100%; height: auto; aspect-ratio: 5 / 2; object-fit: cover; }
a.cover span { position: absolute; left: 1rem; bottom: 1rem; padding: 0.5rem 1.1rem; border-radius: 999px; background: var(--accent); color: #fff; font-weight: 600; box-shadow: 0 1px 5px rgba(0, 0, 0, 0.4); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
body.embed { background: #14181d; color: #f2f4f7; }
body.embed a { color: #9fd0ff; }
main.embed { max-width: none; padding: 0.5rem; }
main.embed h1 { margin: 0 0 0.4rem; font-size: 1.05rem; }
main.embed .viewer { aspect-ratio: auto; height: calc(100vh - 6.5rem); min-height: 12rem; border-radius: 6px; }
main.embed nav.walk { margin: 0.4rem 0; }
main.embed nav.walk a { padding: 0.25rem 0.6rem; background: #232a32; border-color: #3a444f; font-size: 0.9rem; }
main.embed .ways { background: #1c2228; border-color: #3a444f; padding: 0.5rem 0.75rem; }
main.embed .ways h2 { font-size: 0.95rem; }
main.embed .ways .direction { color: #c5ccd4; }
main.embed .meta { margin: 0; color: #c5ccd4; }
@media (max-width: 40rem) {
  main { padding: 0.75rem; }
  h1 { font-size: 1.4rem; margin-bottom: 0.5rem; }
  .viewer { aspect-ratio: auto; height: 72vh; border-radius: 6px; }
  nav.walk { flex-direction: column; }
  nav.walk a[rel=next] { margin-left: 0; }
  /* The floor plan at twice the screen's width, panned by a finger (pinch zooms the page):
     its labels stay about 12 px instead of shrinking with the plan to 5. */
  .plan-figure { padding: 0.5rem; touch-action: pan-x pan-y pinch-zoom; }
  .plan-figure svg.plan { width: 200%; max-width: none; }
  .plan-figure::after { content: "Swipe to see the whole plan"; display: block; margin-top: 0.4rem; color: var(--muted); font-size: 0.85rem; }
}
/* A panorama's page where scripts run: the view fills the window, and the page is a grid over
   it: the bar, then the title beside the panel (or its button), the view's controls, the steps.
   Each piece has a cell of its own, so none lies over another however long its text or small
   the screen (the page as a page stays for a browser without scripts). */
@media (scripting: enabled) {
  body.tour { display: grid; grid-template-columns: minmax(0, 1fr) auto; grid-template-rows: auto auto minmax(0, 1fr) auto auto;
              height: 100vh; height: 100dvh; background: #111; overflow: hidden; }
  body.tour main { display: contents; }
  body.tour .bar { grid-column: 1 / -1; grid-row: 1; position: relative; z-index: 3; padding: 0.5rem 1rem; background: linear-gradient(rgba(0, 0, 0, 0.6), rgba(0, 0, 0, 0)); border: 0; }
  body.tour .bar, body.tour .brand, body.tour .brand a, body.tour .subtitle, body.tour .shared { color: #fff; text-shadow: 0 1px 3px rgba(0, 0, 0, 0.7); }
  body.tour .viewer { position: fixed; inset: 0; height: auto; min-height: 0; aspect-ratio: auto; border-radius: 0; }
  body.tour .viewer img.fallback { object-fit: cover; }
  body.tour .heading { grid-column: 1; grid-row: 2; align-self: start; position: relative; z-index: 2; max-width: 34rem; margin: 0 1rem; color: #fff; text-shadow: 0 1px 4px rgba(0, 0, 0, 0.85); pointer-events: none; }
  body.tour .heading a { color: #fff; pointer-events: auto; }
  body.tour .heading .crumbs { color: #e8ecf0; }
  body.tour .heading h1 { margin: 0; font-size: 1.6rem; line-height: 1.25; overflow-wrap: anywhere; }
  body.tour .heading .place { margin: 0.1rem 0 0; font-size: 1.05rem; }
  body.tour .controls { grid-column: 1 / -1; grid-row: 4; position: relative; z-index: 2; display: grid; grid-template-columns: 1fr auto 1fr; align-items: end; gap: 0.5rem; margin: 0 1rem 0.5rem; pointer-events: none; }
  body.tour .controls button { pointer-events: auto; min-height: 2.75rem; background: rgba(0, 0, 0, 0.7); border-color: transparent; font-size: 0.85rem; line-height: 1.2; }
  body.tour .controls .hint { grid-column: 1 / -1; justify-self: center; max-width: 100%; }
  body.tour .controls .motion { grid-column: 1; justify-self: start; }
  body.tour .controls .play { grid-column: 2; }
  body.tour .controls .fullscreen { grid-column: 3; justify-self: end; }
  body.tour nav.walk { grid-column: 1 / -1; grid-row: 5; position: relative; z-index: 2; margin: 0 1rem 1rem; pointer-events: none; }
  body.tour nav.walk a { pointer-events: auto; background: rgba(0, 0, 0, 0.68); color: #fff; border-color: transparent; }
  body.tour nav.walk a:hover, body.tour nav.walk a:focus { background: rgba(0, 0, 0, 0.85); }
  body.tour .around { grid-column: 2; grid-row: 2 / 4; align-self: start; position: relative; z-index: 2; display: block; width: 22rem; max-height: 100%; margin: 0 1rem 0.5rem 0; overflow: auto; border-radius: 10px; background: rgba(255, 255, 255, 0.95); box-shadow: 0 2px 12px rgba(0, 0, 0, 0.45); }
  body.tour .around button.panel { position: sticky; top: 0; z-index: 1; display: block; width: 100%; min-height: 2.75rem; text-align: left; border-radius: 10px 10px 0 0; font-weight: 600; }
  body.tour .around button.panel::after { content: "\25B4"; float: right; margin-left: 0.5em; }
  body.tour .around button.panel[aria-expanded=false] { border-radius: 10px; }
  body.tour .around button.panel[aria-expanded=false]::after { content: "\25BE"; }
  body.tour .around:has(button.panel[aria-expanded=false]) { width: auto; overflow: visible; }
  body.tour .around .panel-body { display: block; }
  body.tour .around .card { margin: 0; padding: 0.6rem 0.9rem; border: 0; border-bottom: 1px solid var(--line); border-radius: 0; background: transparent; }
  body.tour .around .minimap svg.plan { width: 100%; }
  body.tour .around p.meta, body.tour .around p.download { margin: 0; padding: 0.5rem 0.9rem; }
  body.tour .around h3 { margin: 0.4rem 0 0.1rem; font-size: 0.95rem; }
  /* Another site's frame: no bar above the title and the panel; the panel as on any page. */
  body.embed.tour .heading, body.embed.tour .around { margin-top: 0.5rem; }
  body.embed.tour .heading h1 { font-size: 1.1rem; }
  body.embed.tour .around { color: var(--ink); }
  body.embed.tour .around a { color: var(--accent); }
  body.embed.tour .around .direction, body.embed.tour .around .meta { color: var(--muted); }
  /* A phone: the agency's name on one line (its logo and the panel's contact say it whole), the
     open panel below the title across the screen. */
  @media (max-width: 40rem) {
    body.tour .bar { padding: 0.4rem 0.75rem; }
    body.tour .bar .brand { display: flex; align-items: center; min-width: 0; }
    body.tour .bar .brand .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    body.tour .brand img.logo { height: 1.75rem; max-width: 6rem; margin-right: 0.5rem; }
    body.tour .bar .shared { display: none; }
    body.tour .heading { margin: 0 0.5rem 0 0.75rem; }
    body.tour .heading h1 { font-size: 1.2rem; }
    body.tour .heading .place { font-size: 0.95rem; }
    body.tour .heading .crumbs { display: none; }
    body.tour .around { width: auto; margin: 0 0.5rem 0.5rem 0; }
    body.tour .around:has(button.panel[aria-expanded=true]) { grid-column: 1 / -1; grid-row: 3; margin: 0.5rem; }
    body.tour .controls { margin: 0 0.5rem 0.5rem; }
    body.tour .controls button { padding: 0.4rem 0.6rem; }
    body.tour nav.walk { margin: 0 0.5rem 0.5rem; flex-direction: row; }
    body.tour nav.walk a { max-width: 48%; font-size: 0.85rem; padding: 0.4rem 0.6rem; }
  }
}
.dollhouse-view { position: fixed; inset: 0; z-index: 5; background: radial-gradient(circle at 50% 40%, #3b4754, #161b21); color: #fff; }
.dollhouse-view canvas { display: block; width: 100%; height: 100%; cursor: grab; touch-action: none; }
.dollhouse-view h2 { position: absolute; top: 0.75rem; left: 1rem; margin: 0; font-size: 1.2rem; text-shadow: 0 1px 3px #000; }
.dollhouse-view button.close { position: absolute; top: 0.6rem; right: 1rem; }
.dollhouse-view nav { position: absolute; left: 1rem; bottom: 1rem; display: flex; gap: 0.5rem; flex-wrap: wrap; }
.dollhouse-view nav button { background: rgba(0, 0, 0, 0.6); border-color: #aab4bf; }
.dollhouse-view nav button[aria-pressed=true] { background: var(--accent); border-color: var(--accent); }
.dollhouse-view .label { position: absolute; transform: translate(-50%, 0.8rem); padding: 0.1rem 0.5rem; border-radius: 6px; background: rgba(0, 0, 0, 0.62); font-size: 0.8rem; line-height: 1.3; text-align: center; white-space: nowrap; pointer-events: none; }
.dollhouse-view .label span { display: block; color: #d5dde5; }
.dollhouse-view a.spot { position: absolute; width: 1.5rem; height: 1.5rem; transform: translate(-50%, -50%); border-radius: 50%; border: 3px solid #fff; background: var(--accent); box-shadow: 0 0 6px rgba(0, 0, 0, 0.7); }
.dollhouse-view a.spot.current { background: #c2410c; }
.dollhouse-view a.spot:hover, .dollhouse-view a.spot:focus { outline: 3px solid #ffbf47; }
.minimap button.dollhouse { margin-top: 0.6rem; }
.hidden, [hidden] { display: none !important; }
"""#
}
