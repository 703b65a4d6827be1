/**
 * The approvals inbox: one HTML page with a little inline script and no build step. It lists the
 * tool calls waiting for a human (tool, server, arguments with long values folded, annotations),
 * offers the request's own options as buttons, and stays current over the SSE stream. All request
 * data is put in the page as text (textContent), never as markup. Behind a gateway with bearer
 * tokens, the page holds no data and loads without one; its requests (the stream too, read with
 * fetch because EventSource cannot send headers) carry the token the console keeps in this tab.
 */

export const INBOX_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolbus · approvals</title>
<style>
  :root { color-scheme: light dark; --bg:#f6f7f9; --card:#fff; --fg:#1d2330; --muted:#5d6678; --line:#dde1e8;
          --accent:#2458d6; --danger:#b3261e; --ok:#1e7b3a; }
  @media (prefers-color-scheme: dark) {
    :root { --bg:#14161b; --card:#1d2027; --fg:#e6e8ee; --muted:#9aa3b5; --line:#323743; --accent:#7aa2ff;
            --danger:#ff8a80; --ok:#7bd88f; }
  }
  * { box-sizing: border-box; }
  body { margin:0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--fg); }
  header { display:flex; align-items:center; gap:12px; padding:14px 24px; border-bottom:1px solid var(--line); background:var(--card); }
  header h1 { font-size:17px; margin:0; }
  #status { margin-left:auto; font-size:13px; color:var(--muted); }
  #status.live::before { content:"● "; color:var(--ok); }
  #status.down::before { content:"● "; color:var(--danger); }
  #auth { max-width:880px; margin:20px auto 0; padding:12px 16px; border:1px solid var(--danger); border-radius:10px; }
  main { max-width:880px; margin:0 auto; padding:20px 16px 48px; }
  #empty { color:var(--muted); text-align:center; padding:48px 0; }
  .card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px; margin-bottom:16px; }
  .card.resolved { opacity:.6; }
  .kicker { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:0 0 4px; }
  .question { font-size:17px; margin:0 0 10px; }
  .meta { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; margin:0 0 10px; font-size:13px; }
  .meta dt { color:var(--muted); }
  .meta dd { margin:0; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap:anywhere; }
  .badges { display:flex; flex-wrap:wrap; gap:6px; margin:0 0 10px; }
  .badge { font-size:12px; border:1px solid var(--line); border-radius:999px; padding:1px 9px; color:var(--muted); }
  .badge.warn { border-color:var(--danger); color:var(--danger); }
  .args { margin:0 0 12px; }
  .args h3 { font-size:13px; color:var(--muted); font-weight:600; margin:0 0 4px; }
  .arg { display:grid; grid-template-columns:minmax(80px,max-content) 1fr; gap:8px; border-top:1px solid var(--line); padding:6px 0; }
  .arg .name { font-family: ui-monospace, monospace; font-size:13px; color:var(--muted); }
  pre { margin:0; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space:pre-wrap; overflow-wrap:anywhere; }
  details summary { cursor:pointer; font: 13px ui-monospace, monospace; color:var(--accent); }
  details pre { margin-top:6px; max-height:420px; overflow:auto; }
  .actions { display:flex; flex-wrap:wrap; gap:8px; }
  button { font:inherit; font-size:14px; border-radius:7px; padding:7px 14px; border:1px solid var(--line); background:var(--card); color:var(--fg); cursor:pointer; }
  button.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
  button.cancel { color:var(--danger); }
  button:disabled { opacity:.5; cursor:default; }
  .outcome { margin:10px 0 0; font-size:14px; }
  .outcome.error { color:var(--danger); }
  .expires { font-size:12px; color:var(--muted); align-self:center; margin-left:auto; }
</style>
</head>
<body>
<header><h1>toolbus · approvals</h1><span id="status">connecting…</span></header>
<p id="auth" hidden>This inbox needs the gateway's bearer token: enter it in the <a href="/">console</a> (it is kept in this tab), then come back.</p>
<main>
  <div id="list"></div>
  <p id="empty">No tool calls are waiting for approval.</p>
</main>
<script>
(function () {
  "use strict";
  var API = "/v1/approvals";
  /** Where the console keeps the bearer token (sessionStorage: this tab only). */
  var TOKEN_KEY = "toolbus.token", RECONNECT_MS = 2000;
  var FOLD_CHARS = 160, FOLD_LINES = 6, KEEP_RESOLVED_MS = 4000;
  var list = document.getElementById("list");
  var empty = document.getElementById("empty");
  var statusEl = document.getElementById("status");
  var cards = new Map();
  var DECISIONS = { approved: "Approved", approved_for_session: "Approved for this session",
    approved_always: "Approved, and remembered", denied: "Declined", abort: "Cancelled", timed_out: "Timed out" };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function pretty(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  /** A value as text, folded into <details> when it is long. */
  function valueNode(value) {
    var text = pretty(value);
    var lines = text.split("\\n").length;
    if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return el("pre", "", text);
    var details = el("details");
    var preview = text.replace(/\\s+/g, " ").slice(0, 60);
    details.appendChild(el("summary", "", preview + "… (" + text.length + " characters)"));
    details.appendChild(el("pre", "", text));
    return details;
  }

  function argumentsNode(args) {
    var box = el("section", "args");
    box.appendChild(el("h3", "", "Arguments"));
    if (args === null || args === undefined) {
      box.appendChild(el("pre", "", "(none)"));
    } else if (typeof args === "object" && !Array.isArray(args)) {
      var keys = Object.keys(args);
      if (keys.length === 0) box.appendChild(el("pre", "", "{}"));
      keys.forEach(function (key) {
        var row = el("div", "arg");
        row.appendChild(el("div", "name", key));
        var cell = el("div");
        cell.appendChild(valueNode(args[key]));
        row.appendChild(cell);
        box.appendChild(row);
      });
    } else {
      box.appendChild(valueNode(args));
    }
    return box;
  }

  function badges(annotations) {
    var row = el("div", "badges");
    var a = annotations || {};
    if (!annotations) row.appendChild(el("span", "badge warn", "no annotations"));
    if (a.readOnlyHint === true) row.appendChild(el("span", "badge", "read-only"));
    if (a.readOnlyHint === false) row.appendChild(el("span", "badge", "writes"));
    if (a.destructiveHint === true) row.appendChild(el("span", "badge warn", "destructive"));
    if (a.destructiveHint === false) row.appendChild(el("span", "badge", "not destructive"));
    if (a.idempotentHint === true) row.appendChild(el("span", "badge", "idempotent"));
    if (a.openWorldHint === true) row.appendChild(el("span", "badge", "open world"));
    if (a.openWorldHint === false) row.appendChild(el("span", "badge", "closed world"));
    return row;
  }

  function meta(request) {
    var dl = el("dl", "meta");
    function add(label, value) {
      if (value === undefined || value === null || value === "") return;
      dl.appendChild(el("dt", "", label));
      dl.appendChild(el("dd", "", value));
    }
    add("Server", request.server);
    add("Tool", request.tool);
    add("Title", request.title);
    add("Description", request.description);
    add("Hook name", request.hookName);
    add("Call", request.callId);
    // The call the answer applies to (see "An approval is bound to its call" in the README).
    add("Call digest", request.callDigest);
    add("Thread", request.threadId);
    return dl;
  }

  function expiresText(expiresAt) {
    var ms = Date.parse(expiresAt) - Date.now();
    if (!(ms > 0)) return "expired";
    var s = Math.ceil(ms / 1000), m = Math.floor(s / 60);
    return "expires in " + m + ":" + String(s % 60).padStart(2, "0");
  }

  function render(request) {
    if (cards.has(request.requestId)) return;
    var card = el("article", "card");
    card.dataset.requestId = request.requestId;
    card.appendChild(el("p", "kicker", request.header));
    card.appendChild(el("h2", "question", request.question));
    card.appendChild(meta(request));
    card.appendChild(badges(request.annotations));
    card.appendChild(argumentsNode(request.arguments));
    var actions = el("div", "actions");
    var outcome = el("p", "outcome");
    request.options.forEach(function (option, index) {
      var cls = option.id === "cancel" ? "cancel" : index === 0 ? "primary" : "";
      var button = el("button", cls, option.label);
      button.type = "button";
      button.title = option.description;
      button.dataset.choice = option.id;
      button.addEventListener("click", function () { answer(request.requestId, option.id, card); });
      actions.appendChild(button);
    });
    var expires = el("span", "expires", expiresText(request.expiresAt));
    expires.dataset.expiresAt = request.expiresAt;
    actions.appendChild(expires);
    card.appendChild(actions);
    card.appendChild(outcome);
    cards.set(request.requestId, card);
    list.appendChild(card);
    refreshEmpty();
  }

  function setButtons(card, enabled) {
    card.querySelectorAll("button").forEach(function (b) { b.disabled = !enabled; });
  }

  function showOutcome(card, text, isError) {
    var outcome = card.querySelector(".outcome");
    outcome.textContent = text;
    outcome.className = "outcome" + (isError ? " error" : "");
  }

  function answer(requestId, choice, card) {
    setButtons(card, false);
    api(API + "/" + encodeURIComponent(requestId), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: choice }),
    }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(body && body.error ? body.error.message : "HTTP " + response.status);
        resolved(requestId, body.decision, "you");
      });
    }).catch(function (error) {
      showOutcome(card, error.message, true);
      setButtons(card, true);
    });
  }

  function resolved(requestId, decision, by) {
    var card = cards.get(requestId);
    if (!card || card.classList.contains("resolved")) return;
    card.classList.add("resolved");
    setButtons(card, false);
    showOutcome(card, (DECISIONS[decision] || decision) + (by ? " (" + by + ")" : ""), false);
    setTimeout(function () {
      card.remove();
      cards.delete(requestId);
      refreshEmpty();
    }, KEEP_RESOLVED_MS);
  }

  function refreshEmpty() {
    var open = 0;
    cards.forEach(function (card) { if (!card.classList.contains("resolved")) open += 1; });
    empty.hidden = open > 0;
    document.title = (open > 0 ? "(" + open + ") " : "") + "toolbus · approvals";
  }

  function api(path, init) {
    init = init || {};
    var headers = Object.assign({}, init.headers || {});
    var token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.authorization = "Bearer " + token;
    init.headers = headers;
    return fetch(path, init).then(function (response) {
      if (response.status === 401) {
        document.getElementById("auth").hidden = false;
        statusEl.textContent = "token needed"; statusEl.className = "down";
        throw new Error("the gateway needs a bearer token (enter it in the console)");
      }
      return response;
    });
  }

  /** The snapshot is the list's first page: the rest is read page by page before it is applied. */
  function allPages(first) {
    if (!first.nextCursor) return Promise.resolve(first.pending);
    return api(API + "?cursor=" + encodeURIComponent(first.nextCursor)).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(body && body.error ? body.error.message : "HTTP " + response.status);
        return allPages(body).then(function (rest) { return first.pending.concat(rest); });
      });
    });
  }

  var handlers = {
    snapshot: function (data) {
      allPages(data).then(function (pending) {
        var ids = new Set(pending.map(function (r) { return r.requestId; }));
        cards.forEach(function (card, id) { if (!ids.has(id)) resolved(id, "", ""); });
        pending.forEach(render);
      }).catch(function (error) { statusEl.textContent = "could not list: " + error.message; statusEl.className = "down"; });
    },
    pending: render,
    resolved: function (data) { resolved(data.requestId, data.decision, data.by); },
  };

  function dispatch(block) {
    var kind = "message", data = [];
    block.split("\\n").forEach(function (line) {
      if (line === "" || line.charAt(0) === ":") return;
      var at = line.indexOf(":");
      var field = at < 0 ? line : line.slice(0, at), value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
      if (field === "event") kind = value; else if (field === "data") data.push(value);
    });
    if (data.length > 0 && handlers[kind]) handlers[kind](JSON.parse(data.join("\\n")));
  }

  /** The SSE stream read with fetch; reconnects after a pause unless a token is missing. */
  function connect() {
    api(API + "/events", { headers: { accept: "text/event-stream" } }).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      statusEl.textContent = "live"; statusEl.className = "live";
      var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) throw new Error("the stream ended");
          buffer += decoder.decode(chunk.value, { stream: true }).replace(/\\r\\n/g, "\\n");
          var blocks = buffer.split("\\n\\n");
          buffer = blocks.pop();
          blocks.forEach(dispatch);
          return pump();
        });
      }
      return pump();
    }).catch(function () {
      if (!document.getElementById("auth").hidden) return;
      statusEl.textContent = "reconnecting…"; statusEl.className = "down";
      setTimeout(connect, RECONNECT_MS);
    });
  }

  setInterval(function () {
    document.querySelectorAll(".expires").forEach(function (node) {
      node.textContent = expiresText(node.dataset.expiresAt);
    });
  }, 1000);
  refreshEmpty();
  connect();
})();
</script>
</body>
</html>
`;
