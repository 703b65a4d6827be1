/**
 * The console at `/`: one HTML page with inline script and no build step. It shows the servers
 * (status, errors, and what each said about itself: title, version, description, website, icon), the catalog with a search box (filtered in the page), live calls from
 * `/v1/events` (begin: in progress; end: status and duration) and the approvals inbox from
 * `/v1/approvals` and `/v1/approvals/events` when this gateway serves them. Streams are read
 * with fetch, so a bearer token (asked for on a 401, kept in sessionStorage) goes in the
 * Authorization header. Everything from the bus is put in the page as text, never as markup.
 */
import { pageHeaders, routeAccess } from "@toolbus/http-guard";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";

export function consolePage(): FastifyPluginAsync {
  const headers = pageHeaders(CONSOLE_PAGE);
  return async (app: FastifyInstance) => {
    app.get("/", routeAccess("page"), (_request, reply) => reply.headers(headers).send(CONSOLE_PAGE));
  };
}

// String.raw: the script's own escapes (\n in regexes and strings) reach the browser as written.
export const CONSOLE_PAGE = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolbus</title>
<style>
  :root { color-scheme: light dark; --bg:#f6f7f9; --card:#fff; --fg:#1d2330; --muted:#5d6678; --line:#dde1e8;
          --accent:#2458d6; --danger:#b3261e; --ok:#1e7b3a; --warn:#9a6700; }
  @media (prefers-color-scheme: dark) {
    :root { --bg:#14161b; --card:#1d2027; --fg:#e6e8ee; --muted:#9aa3b5; --line:#323743; --accent:#7aa2ff;
            --danger:#ff8a80; --ok:#7bd88f; --warn:#e3b341; }
  }
  * { box-sizing: border-box; }
  body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--fg); }
  header { display:flex; align-items:center; gap:16px; padding:12px 24px; border-bottom:1px solid var(--line); background:var(--card); }
  header h1 { font-size:17px; margin:0; }
  header nav { display:flex; gap:14px; font-size:13px; }
  a { color:var(--accent); }
  #live { margin-left:auto; font-size:13px; color:var(--muted); }
  #live.live::before { content:"● "; color:var(--ok); }
  #live.down::before { content:"● "; color:var(--danger); }
  main { display:grid; grid-template-columns: minmax(0,1fr) minmax(0,1fr); gap:16px; padding:16px 24px 48px; max-width:1400px; margin:0 auto; }
  @media (max-width: 980px) { main { grid-template-columns: minmax(0,1fr); } }
  section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:14px 16px; min-width:0; }
  section h2 { font-size:15px; margin:0 0 10px; display:flex; gap:8px; align-items:baseline; }
  section h2 small { font-weight:normal; color:var(--muted); font-size:12px; }
  table { width:100%; border-collapse:collapse; font-size:13px; }
  th { text-align:left; color:var(--muted); font-weight:600; font-size:12px; padding:4px 6px; border-bottom:1px solid var(--line); }
  td { padding:5px 6px; border-bottom:1px solid var(--line); vertical-align:top; overflow-wrap:anywhere; }
  td.name { white-space:nowrap; }
  td.name .about { white-space:normal; font-size:12px; margin-top:2px; }
  .server-icon { width:16px; height:16px; vertical-align:-3px; margin-right:6px; }
  .server-website { display:block; font-size:12px; }
  .mono, td.tool, .tool-name { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:12.5px; }
  .pill { display:inline-block; border-radius:999px; padding:0 8px; font-size:12px; border:1px solid var(--line); white-space:nowrap; }
  .ready, .completed { color:var(--ok); border-color:var(--ok); }
  .failed, .cancelled { color:var(--danger); border-color:var(--danger); }
  .starting, .running { color:var(--warn); border-color:var(--warn); }
  .disabled { color:var(--muted); }
  .error { color:var(--danger); font-size:12.5px; }
  .muted, .empty { color:var(--muted); }
  #catalog-search { width:100%; font:inherit; padding:7px 10px; border:1px solid var(--line); border-radius:7px; background:var(--bg); color:var(--fg); margin-bottom:8px; }
  #catalog-list { list-style:none; margin:0; padding:0; max-height:560px; overflow:auto; }
  #catalog-list li { border-bottom:1px solid var(--line); padding:6px 2px; }
  #catalog-list .desc { color:var(--muted); font-size:12.5px; margin:2px 0 0; }
  .badge { font-size:11px; border:1px solid var(--line); border-radius:999px; padding:0 7px; color:var(--muted); margin-left:6px; }
  details summary { cursor:pointer; font-size:12px; color:var(--accent); }
  pre { margin:4px 0 0; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space:pre-wrap; overflow-wrap:anywhere; max-height:300px; overflow:auto; }
  .card { border:1px solid var(--line); border-radius:8px; padding:10px 12px; margin-bottom:10px; }
  .card.resolved { opacity:.6; }
  .card h3 { font-size:14px; margin:0 0 4px; }
  .actions { display:flex; flex-wrap:wrap; gap:6px; margin-top:8px; align-items:center; }
  button { font:inherit; font-size:13px; border-radius:7px; padding:5px 12px; border:1px solid var(--line); background:var(--card); color:var(--fg); cursor:pointer; }
  button.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
  button:disabled { opacity:.5; cursor:default; }
  #auth { grid-column: 1 / -1; border-color:var(--warn); }
  #auth input { font:inherit; padding:6px 9px; border:1px solid var(--line); border-radius:7px; width:min(420px,100%); background:var(--bg); color:var(--fg); }
</style>
</head>
<body>
<header>
  <h1>toolbus</h1>
  <nav><a href="/openapi.json">OpenAPI</a><a href="/approvals" id="inbox-link">approvals inbox</a><a href="#" id="forget" hidden>forget token</a></nav>
  <span id="live">connecting…</span>
</header>
<main>
  <form id="auth" hidden>
    <h2>This gateway needs a bearer token</h2>
    <p class="muted">It is kept in this tab only (sessionStorage) and sent as <span class="mono">Authorization: Bearer …</span>.</p>
    <input id="token" type="password" autocomplete="off" placeholder="token from [gateway] tokens_env">
    <button class="primary" type="submit">Use token</button>
    <p id="auth-error" class="error"></p>
  </form>
  <section id="servers">
    <h2>Servers <small id="revision"></small></h2>
    <table><thead><tr><th>Name</th><th>Status</th><th>Revision</th><th>Error</th></tr></thead><tbody></tbody></table>
    <p class="empty" id="servers-empty" hidden>No servers are configured.</p>
  </section>
  <section id="calls">
    <h2>Live calls <small>from /v1/events</small></h2>
    <table><thead><tr><th>Started</th><th>Tool</th><th>Status</th><th>Duration</th></tr></thead><tbody></tbody></table>
    <p class="empty" id="calls-empty">No calls since this page opened.</p>
  </section>
  <section id="catalog">
    <h2>Catalog <small id="catalog-count"></small></h2>
    <input id="catalog-search" type="search" placeholder="Search tools by name, server or description" autocomplete="off">
    <ul id="catalog-list"></ul>
  </section>
  <section id="approvals">
    <h2>Approvals <small id="approvals-state"></small></h2>
    <p class="empty" id="approvals-absent" hidden>approvals inbox not served by this gateway</p>
    <p class="empty" id="approvals-empty" hidden>No tool calls are waiting for approval.</p>
    <div id="approvals-list"></div>
  </section>
</main>
<script>
(function () {
  "use strict";
  var TOKEN_KEY = "toolbus.token", MAX_CALLS = 200, MAX_TOOLS = 300;
  var $ = function (id) { return document.getElementById(id); };
  var servers = new Map(), tools = [], calls = new Map(), cards = new Map();

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function AuthNeeded() {}

  // --- HTTP with the bearer token -------------------------------------------------------------
  function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
  function api(path, init) {
    init = init || {};
    var headers = Object.assign({}, init.headers || {});
    if (token()) headers.authorization = "Bearer " + token();
    init.headers = headers;
    return fetch(path, init).then(function (response) {
      if (response.status === 401) { askToken(); throw new AuthNeeded(); }
      return response;
    });
  }
  function getJson(path, init) {
    return api(path, init).then(function (response) {
      return response.json().then(function (body) {
        if (response.ok) return body;
        var error = new Error(body && body.error && body.error.message ? body.error.message : "HTTP " + response.status);
        error.status = response.status;
        throw error;
      });
    });
  }
  function askToken() {
    var form = $("auth");
    if (!form.hidden) return;
    form.hidden = false;
    $("auth-error").textContent = token() ? "The gateway refused the stored token; enter another." : "";
    $("live").textContent = "token needed"; $("live").className = "down";
    $("token").focus();
  }
  $("auth").addEventListener("submit", function (event) {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    location.reload();
  });
  $("forget").hidden = !token();
  $("forget").addEventListener("click", function (event) {
    event.preventDefault(); sessionStorage.removeItem(TOKEN_KEY); location.reload();
  });

  /** Server-Sent Events over fetch (EventSource cannot send headers); reconnects after 2 s. */
  function stream(path, handlers, onState) {
    function dispatch(block) {
      var kind = "message", data = [];
      block.split("\n").forEach(function (line) {
        if (line === "" || line.charAt(0) === ":") return;
        var at = line.indexOf(":");
        var field = at < 0 ? line : line.slice(0, at), value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
        if (field === "event") kind = value; else if (field === "data") data.push(value);
      });
      if (data.length > 0 && handlers[kind]) handlers[kind](JSON.parse(data.join("\n")));
    }
    function open() {
      api(path, { headers: { accept: "text/event-stream" } }).then(function (response) {
        if (!response.ok) { var error = new Error("HTTP " + response.status); error.status = response.status; throw error; }
        onState("live");
        var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) throw new Error("the stream ended");
            buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n/g, "\n");
            var blocks = buffer.split("\n\n");
            buffer = blocks.pop();
            blocks.forEach(dispatch);
            return pump();
          });
        }
        return pump();
      }).catch(function (error) {
        if (error instanceof AuthNeeded) return;
        if (error.status === 404) { onState("absent"); return; }
        onState("down");
        setTimeout(open, 2000);
      });
    }
    open();
  }

  // --- Servers --------------------------------------------------------------------------------
  function loadServers() {
    return getJson("/v1/servers").then(function (body) {
      servers.clear();
      body.servers.forEach(function (server) { servers.set(server.name, server); });
      $("revision").textContent = "catalog revision " + body.revision;
      clearFailure("servers");
      renderServers();
    }).catch(showFailure("servers"));
  }
  function renderServers() {
    var rows = [];
    Array.from(servers.values()).sort(function (a, b) { return a.name < b.name ? -1 : 1; }).forEach(function (server) {
      var row = el("tr");
      row.dataset.server = server.name;
      var name = el("td", "name");
      var icon = serverIcon(server.serverInfo);
      if (icon) name.appendChild(icon);
      name.appendChild(el("span", "mono", server.name));
      if (server.required) name.appendChild(el("span", "badge", "required"));
      if (server.serverInfo) name.appendChild(serverAbout(server.serverInfo));
      row.appendChild(name);
      var status = el("td");
      status.appendChild(el("span", "pill status " + server.status, server.status));
      row.appendChild(status);
      row.appendChild(el("td", "mono", server.revision === undefined ? "" : server.revision));
      row.appendChild(el("td", "error", server.error || ""));
      rows.push(row);
    });
    document.querySelector("#servers tbody").replaceChildren.apply(document.querySelector("#servers tbody"), rows);
    $("servers-empty").hidden = rows.length > 0;
  }
  // What the server said about itself: title and version, description, website (http(s) only).
  function serverAbout(info) {
    var about = el("div", "about");
    about.appendChild(el("span", "server-title", (info.title || info.name) + (info.version ? " " + info.version : "")));
    if (info.description) about.appendChild(el("div", "muted server-description", info.description));
    if (info.websiteUrl && /^https?:\/\//i.test(info.websiteUrl)) {
      var link = el("a", "server-website", info.websiteUrl);
      link.href = info.websiteUrl;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      about.appendChild(link);
    }
    return about;
  }
  // An icon only from a data: image URL (the page loads nothing from elsewhere).
  function serverIcon(info) {
    var icons = (info && Array.isArray(info.icons)) ? info.icons : [];
    for (var i = 0; i < icons.length; i++) {
      var src = icons[i] && icons[i].src;
      if (typeof src === "string" && /^data:image\//i.test(src)) {
        var img = el("img", "server-icon");
        img.src = src;
        img.alt = "";
        return img;
      }
    }
    return null;
  }
  function serverStatus(event) {
    var server = servers.get(event.server) || { name: event.server, required: false };
    server.status = event.status.state;
    server.error = event.status.state === "failed" ? event.status.error : undefined;
    servers.set(event.server, server);
    renderServers();
  }

  // --- Catalog --------------------------------------------------------------------------------
  function loadCatalog() {
    return getJson("/v1/catalog?exposure=all").then(function (snapshot) {
      tools = snapshot.tools;
      clearFailure("catalog");
      renderCatalog();
    }).catch(showFailure("catalog"));
  }
  function matches(tool, words) {
    var text = [tool.flatName, tool.server, tool.rawName, tool.title || "", tool.description].join(" ").toLowerCase();
    return words.every(function (word) { return text.indexOf(word) >= 0; });
  }
  function renderCatalog() {
    var words = $("catalog-search").value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = tools.filter(function (tool) { return matches(tool, words); });
    $("catalog-count").textContent = (words.length ? shown.length + " of " : "") + tools.length + " tools";
    var items = shown.slice(0, MAX_TOOLS).map(function (tool) {
      var item = el("li");
      item.dataset.tool = tool.flatName;
      item.appendChild(el("span", "tool-name", tool.flatName));
      item.appendChild(el("span", "badge", tool.server));
      if (tool.exposure !== "direct") item.appendChild(el("span", "badge", tool.exposure));
      if (tool.readOnlyHint) item.appendChild(el("span", "badge", "read-only"));
      item.appendChild(el("p", "desc", (tool.title ? tool.title + ": " : "") + tool.description.split("\n")[0]));
      var details = el("details");
      details.appendChild(el("summary", "", "input schema"));
      details.appendChild(el("pre", "", JSON.stringify(tool.inputSchema, null, 2)));
      item.appendChild(details);
      return item;
    });
    if (shown.length > MAX_TOOLS) items.push(el("li", "muted", (shown.length - MAX_TOOLS) + " more; refine the search"));
    if (items.length === 0) items.push(el("li", "muted", tools.length ? "No tool matches." : "The catalog has no tools."));
    $("catalog-list").replaceChildren.apply($("catalog-list"), items);
  }
  $("catalog-search").addEventListener("input", renderCatalog);
  $("catalog-search").value = new URLSearchParams(location.search).get("q") || "";

  // --- Live calls -----------------------------------------------------------------------------
  function duration(ms) { return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s"; }
  function callRow(event) {
    var row = calls.get(event.callId);
    if (row) return row;
    row = el("tr");
    row.dataset.callId = event.callId;
    row.appendChild(el("td", "mono", new Date(event.at).toLocaleTimeString()));
    var tool = el("td", "tool", event.invocation.server + " / " + event.invocation.tool);
    tool.title = "callId " + event.callId;
    row.appendChild(tool);
    var status = el("td");
    status.appendChild(el("span", "pill status running", "in progress"));
    row.appendChild(status);
    row.appendChild(el("td", "duration mono", ""));
    row.dataset.started = String(Date.now());
    calls.set(event.callId, row);
    document.querySelector("#calls tbody").prepend(row);
    $("calls-empty").hidden = true;
    while (calls.size > MAX_CALLS) {
      var oldest = calls.keys().next().value;
      calls.get(oldest).remove();
      calls.delete(oldest);
    }
    return row;
  }
  function callEnd(event) {
    var row = callRow(event);
    var failed = event.status === "failed" || (event.result && event.result.ok && event.result.ok.isError);
    var pill = row.querySelector(".status");
    pill.className = "pill status " + (failed ? "failed" : "completed");
    pill.textContent = failed ? "failed" : "completed";
    row.querySelector(".duration").textContent = duration(event.durationMs);
    row.dataset.done = "true";
    var message = event.result && "err" in event.result ? event.result.err : failed ? firstText(event.result.ok) : "";
    if (message) row.querySelector(".tool").appendChild(el("div", "error", message));
  }
  function firstText(result) {
    var block = (result.content || []).find(function (item) { return item.type === "text"; });
    return block ? block.text.slice(0, 300) : "";
  }
  setInterval(function () {
    calls.forEach(function (row) {
      if (!row.dataset.done) row.querySelector(".duration").textContent = duration(Date.now() - Number(row.dataset.started)) + "…";
    });
  }, 1000);

  // --- Approvals ------------------------------------------------------------------------------
  var DECISIONS = { approved: "Approved", approved_for_session: "Approved for this session",
    approved_always: "Approved, and remembered", denied: "Declined", abort: "Cancelled", timed_out: "Timed out" };
  function renderApproval(request) {
    if (cards.has(request.requestId)) return;
    var card = el("article", "card");
    card.dataset.requestId = request.requestId;
    card.appendChild(el("h3", "", request.question));
    card.appendChild(el("div", "mono muted", request.server + " / " + request.tool));
    var args = JSON.stringify(request.arguments, null, 2);
    if (args.length > 200 || args.split("\n").length > 8) {
      var details = el("details");
      details.appendChild(el("summary", "", "arguments (" + args.length + " characters)"));
      details.appendChild(el("pre", "", args));
      card.appendChild(details);
    } else {
      card.appendChild(el("pre", "", args));
    }
    var actions = el("div", "actions");
    request.options.forEach(function (option, index) {
      var button = el("button", index === 0 ? "primary" : "", option.label);
      button.type = "button";
      button.title = option.description;
      button.dataset.choice = option.id;
      button.addEventListener("click", function () { answer(request.requestId, option.id, card); });
      actions.appendChild(button);
    });
    card.appendChild(actions);
    card.appendChild(el("p", "outcome"));
    cards.set(request.requestId, card);
    $("approvals-list").appendChild(card);
    refreshApprovals();
  }
  function answer(requestId, choice, card) {
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    getJson("/v1/approvals/" + encodeURIComponent(requestId), {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ choice: choice }),
    }).then(function (body) { approvalResolved({ requestId: requestId, decision: body.decision, by: "you" }); })
      .catch(function (error) {
        if (error instanceof AuthNeeded) return;
        card.querySelector(".outcome").textContent = error.message;
        card.querySelector(".outcome").className = "outcome error";
        card.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      });
  }
  function approvalResolved(event) {
    var card = cards.get(event.requestId);
    if (!card || card.classList.contains("resolved")) return;
    card.classList.add("resolved");
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    card.querySelector(".outcome").textContent = (DECISIONS[event.decision] || event.decision) + (event.by ? " (" + event.by + ")" : "");
    setTimeout(function () { card.remove(); cards.delete(event.requestId); refreshApprovals(); }, 4000);
  }
  function refreshApprovals() {
    var open = 0;
    cards.forEach(function (card) { if (!card.classList.contains("resolved")) open += 1; });
    $("approvals-empty").hidden = open > 0;
    $("approvals-state").textContent = open ? open + " waiting" : "";
  }
  function approvalsAbsent() {
    $("approvals-absent").hidden = false;
    $("inbox-link").hidden = true;
    $("approvals-empty").hidden = true;
    $("approvals-state").textContent = "";
  }
  /** The list is paged: the pages after first are read one by one. */
  function allPages(first) {
    if (!first.nextCursor) return Promise.resolve(first.pending);
    return getJson("/v1/approvals?cursor=" + encodeURIComponent(first.nextCursor)).then(function (body) {
      return allPages(body).then(function (rest) { return first.pending.concat(rest); });
    });
  }
  function snapshot(body) {
    return allPages(body).then(function (pending) {
      var ids = new Set(pending.map(function (request) { return request.requestId; }));
      cards.forEach(function (card, id) { if (!ids.has(id)) approvalResolved({ requestId: id, decision: "", by: "" }); });
      pending.forEach(renderApproval);
      refreshApprovals();
    });
  }
  function loadApprovals() {
    return getJson("/v1/approvals").then(function (body) {
      snapshot(body).catch(showFailure("approvals"));
      stream("/v1/approvals/events", { snapshot: snapshot, pending: renderApproval, resolved: approvalResolved },
        function (state) { if (state === "absent") approvalsAbsent(); });
    }).catch(function (error) {
      if (error.status === 404) approvalsAbsent();
      else showFailure("approvals")(error);
    });
  }

  function clearFailure(section) {
    var note = document.querySelector("#" + section + " .failure");
    if (note) note.remove();
  }
  function showFailure(section) {
    return function (error) {
      if (error instanceof AuthNeeded) return;
      var note = document.querySelector("#" + section + " .failure") || el("p", "error failure");
      note.textContent = "Could not load: " + error.message;
      $(section).appendChild(note);
    };
  }

  // --- Start ----------------------------------------------------------------------------------
  loadServers();
  loadCatalog();
  loadApprovals();
  stream("/v1/events?kinds=call.begin,call.end,server.status,startup_complete,catalog", {
    "call.begin": callRow,
    "call.end": callEnd,
    "server.status": serverStatus,
    startup_complete: loadServers,
    catalog: function () { loadServers(); loadCatalog(); },
  }, function (state) {
    $("live").textContent = state === "live" ? "live" : "reconnecting…";
    $("live").className = state === "live" ? "live" : "down";
    // After a gap, what was missed is read again.
    if (state === "live" && servers.size) { loadServers(); loadCatalog(); }
  });
})();
</script>
</body>
</html>
`;
