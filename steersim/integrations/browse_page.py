"""`steersim explore`: a local web page over `steersim.integrations.browse`, served on 127.0.0.1.

The page holds its first view inline, so it renders before any request; each click asks the server for
the view at the new path (`/api/view?path=3.0.1`) and puts the path in the address bar, so the
browser's back and forward walk the path and a copied URL opens the same state. The timing diagram of
the path so far is drawn by the server (`/diagram.svg?path=...`), the same drawing `steersim diagram`
makes.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from steersim.errors import UsageError
from steersim.integrations.browse import Browser, parse_path

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>steersim explore: {title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 1em 2em; color: #1a1a1a; }}
h1 {{ font-size: 1.2em; }} h2 {{ font-size: 1em; margin: 1em 0 0.3em; }}
.cols {{ display: flex; gap: 2em; align-items: flex-start; flex-wrap: wrap; }} .col {{ min-width: 22em; }}
pre {{ background: #f6f6f6; padding: 0.5em; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 40em; }}
button.action {{ display: block; margin: 0.2em 0; font: 13px monospace; text-align: left; }}
button.breaks {{ border-color: #d62728; color: #a11b1b; }}
table {{ border-collapse: collapse; }} td, th {{ border-bottom: 1px solid #e4e4e4; padding: 0.2em 0.5em;
  vertical-align: top; text-align: left; font-size: 13px; }}
tr.current {{ background: #eef4fb; }} tr.broken {{ background: #fdeeee; }} .muted {{ color: #666; }}
code {{ font-size: 12px; }} #error {{ color: #a11b1b; }} img {{ max-width: 100%; }}
</style></head>
<body data-path="">
<h1>{title}</h1>
<p><button id="back">← back</button> <button id="forward">forward →</button> <a id="restart" href="?path=">initial
state</a> · path <code id="path"></code> <span id="error"></span></p>
<div class="cols">
<div class="col"><h2>State</h2><pre id="state"></pre><h2>Changed by the last step</h2><pre id="changes"></pre></div>
<div class="col"><h2>Enabled actions</h2><div id="actions"></div>
<h2>Counterexamples and witnesses</h2><ul id="jumps"></ul></div>
<div class="col"><h2>Properties on this path</h2><table id="properties"></table></div>
</div>
<h2>Steps</h2><table id="steps"></table>
<h2>Timing diagram of the path</h2><div id="diagram"></div>
<script type="application/json" id="initial">{initial}</script>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const text = (tag, s, cls) => {{
  const e = document.createElement(tag); e.textContent = s; if (cls) e.className = cls; return e;
}};
const compact = (o) => Object.entries(o).map(([k, v]) => k + "=" + JSON.stringify(v)).join("\\n");
let view = JSON.parse($("initial").textContent);
function extend(k) {{ return view.path === "" ? String(k) : view.path + "." + k; }}
function render(v) {{
  view = v;
  document.body.dataset.path = v.path;
  $("path").textContent = v.path || "(initial state)";
  $("state").textContent = JSON.stringify(v.state, null, 1);
  $("changes").textContent = compact(v.changes) || "(nothing)";
  const actions = $("actions"); actions.replaceChildren();
  for (const a of v.actions) {{
    const b = text("button", a.label + (a.breaks.length ? "  ✗ " + a.breaks.join(", ") : ""),
                   "action" + (a.breaks.length ? " breaks" : ""));
    b.dataset.index = a.index; b.title = compact(a.changes);
    b.addEventListener("click", () => go(extend(a.index)));
    actions.append(b);
  }}
  if (!v.actions.length) actions.append(text("p", "nothing is enabled: the run ends here", "muted"));
  const jumps = $("jumps"); jumps.replaceChildren();
  for (const j of v.jumps) {{
    const li = document.createElement("li"); const a = text("a", j.kind + ": " + j.property);
    a.href = "?path=" + j.path; a.className = "jump"; a.dataset.path = j.path;
    a.addEventListener("click", (e) => {{ e.preventDefault(); go(j.path); }});
    li.append(a); jumps.append(li);
  }}
  const props = $("properties"); props.replaceChildren();
  for (const p of v.properties) {{
    const tr = document.createElement("tr");
    if (p.status.startsWith("violated")) tr.className = "broken";
    tr.append(text("td", p.name), text("td", p.kind, "muted"), text("td", p.status)); props.append(tr);
  }}
  const steps = $("steps"); steps.replaceChildren();
  for (const s of v.steps) {{
    const tr = document.createElement("tr");
    if (s.violations.length) tr.className = "broken";
    const label = text("td", s.label); label.style.cursor = "pointer";
    label.addEventListener("click", () => go(v.path.split(".").slice(0, s.i + 1).join(".")));
    tr.append(text("td", String(s.i)), label, text("td", s.facts.join("; ")), text("td", compact(s.changes)),
              text("td", s.violations.map((x) => "✗ " + x.property + ": " + x.message).join("; ")));
    steps.append(tr);
  }}
  const diagram = $("diagram"); diagram.replaceChildren();
  if (v.steps.length) {{
    const img = document.createElement("img"); img.src = "diagram.svg?path=" + v.path; diagram.append(img);
  }}
}}
async function go(path, push = true) {{
  const reply = await fetch("api/view?path=" + encodeURIComponent(path));
  const body = await reply.json();
  if (!reply.ok) {{ $("error").textContent = body.error; return; }}
  $("error").textContent = "";
  render(body);
  if (push) history.pushState({{path: path}}, "", "?path=" + path);
}}
const urlPath = () => new URLSearchParams(location.search).get("path") || "";
window.addEventListener("popstate", (e) => go(e.state ? e.state.path : urlPath(), false));
$("back").addEventListener("click", () => history.back());
$("forward").addEventListener("click", () => history.forward());
history.replaceState({{path: view.path}}, "", "?path=" + view.path);
render(view);
</script></body></html>
"""


def page_html(browser: Browser, path: str) -> str:
    """The whole page, with the view at `path` inline (`</` escaped, so the JSON cannot end the script)."""
    initial = json.dumps(browser.view(parse_path(path))).replace("</", "<\\/")
    params = ", ".join(f"{k}={v}" for k, v in browser.params.items())
    title = f"{browser.model.name}({params})" + (f" bug {browser.bug}" if browser.bug else "")
    return PAGE.format(title=escape(title), initial=initial)


def make_server(browser: Browser, port: int = 0, start: str = "") -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 (`port` 0: any free port); `start` is the path `/` opens at."""
    lock = threading.Lock()  # the product's memo of admitted facts is not for concurrent use

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            """Routes: `/` the page, `/api/view` a view as JSON, `/diagram.svg` the path's diagram."""
            url = urlparse(self.path)
            path = parse_qs(url.query).get("path", [None])[0]
            try:
                with lock:
                    if url.path == "/":
                        self._send(HTTPStatus.OK, "text/html; charset=utf-8",
                                   page_html(browser, start if path is None else path))
                    elif url.path == "/api/view":
                        self._send(HTTPStatus.OK, "application/json",
                                   json.dumps(browser.view(parse_path(path or ""))))
                    elif url.path == "/diagram.svg":
                        self._send(HTTPStatus.OK, "image/svg+xml", diagram_of(browser, path or ""))
                    else:
                        self._send(HTTPStatus.NOT_FOUND, "application/json", json.dumps({"error": "no such page"}))
            except UsageError as bad:
                self._send(HTTPStatus.BAD_REQUEST, "application/json", json.dumps({"error": str(bad)}))

        def _send(self, status: HTTPStatus, kind: str, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the terminal shows the URL, not every request."""

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def diagram_of(browser: Browser, path: str) -> str:
    """The timing diagram of the path so far, as an SVG document."""
    from steersim.core.paths import Path
    from steersim.draw.diagram import diagram_svg

    walk = browser.walk(parse_path(path))
    explorer_path = Path(walk.states[0], tuple(walk.steps), 0, None, None, tuple(walk.states))
    return diagram_svg(explorer_path, "explore", browser.model, params=browser.params, bug=browser.bug)


@dataclass
class Served:
    """A page served from a background thread: a notebook cell that ends with it shows the page."""

    server: ThreadingHTTPServer
    thread: threading.Thread
    height: int = 900

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def _repr_html_(self) -> str:
        return f'<iframe src="{escape(self.url)}" width="100%" height="{self.height}" style="border: 0"></iframe>'

    def close(self) -> None:
        """Stop serving and free the port."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def serve_in_background(browser: Browser, port: int = 0, start: str = "", height: int = 900) -> Served:
    """Serve the page from a daemon thread (for a notebook, or a test); `close()` stops it."""
    server = make_server(browser, port, start)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return Served(server, thread, height)
