(() => {
  var page = window.toolbusPage,
    el = page.el;
  var API = "/v1/approvals",
    RECONNECT_MS = 2000;
  var FOLD_CHARS = 160,
    FOLD_LINES = 6,
    KEEP_RESOLVED_MS = 4000;
  var list = document.getElementById("list");
  var empty = document.getElementById("empty");
  var statusEl = document.getElementById("status");
  var cards = new Map();
  var DECISIONS = page.DECISIONS;

  function pretty(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  /** A value as text, folded into <details> when it is long. */
  function valueNode(value) {
    var text = pretty(value);
    var lines = text.split("\n").length;
    if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return el("pre", "", text);
    var details = el("details");
    var preview = text.replace(/\s+/g, " ").slice(0, 60);
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
      const keys = Object.keys(args);
      if (keys.length === 0) box.appendChild(el("pre", "", "{}"));
      keys.forEach((key) => {
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
    add("Requested by", page.requester(request));
    add("Call", request.callId);
    // The call the answer applies to (see "An approval is bound to its call" in the README).
    add("Call digest", request.callDigest);
    add("Thread", request.threadId);
    return dl;
  }

  function expiresText(expiresAt) {
    var ms = Date.parse(expiresAt) - Date.now();
    if (!(ms > 0)) return "expired";
    var s = Math.ceil(ms / 1000),
      m = Math.floor(s / 60);
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
    request.options.forEach((option, index) => {
      var cls = option.id === "cancel" ? "cancel" : index === 0 ? "primary" : "";
      var button = el("button", cls, option.label);
      button.type = "button";
      button.title = option.description;
      button.dataset.choice = option.id;
      button.addEventListener("click", () => {
        answer(request.requestId, option.id, card);
      });
      actions.appendChild(button);
    });
    // "Allow always" is the requester's alone unless the approver gives it to everyone.
    var offersAlways = request.options.some((option) => option.id === "allow_always");
    if (offersAlways && request.requestedBy) {
      const scope = el("label", "scope");
      const everyone = el("input");
      everyone.type = "checkbox";
      everyone.name = "for-everyone";
      scope.appendChild(everyone);
      scope.appendChild(
        document.createTextNode(` "don't ask me again" for everyone, not only ${page.requester(request)}`),
      );
      actions.appendChild(scope);
    }
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
    card.querySelectorAll("button").forEach((b) => {
      b.disabled = !enabled;
    });
  }

  function showOutcome(card, text, isError) {
    var outcome = card.querySelector(".outcome");
    outcome.textContent = text;
    outcome.className = "outcome" + (isError ? " error" : "");
  }

  function answer(requestId, choice, card) {
    var everyone = card.querySelector('input[name="for-everyone"]');
    var body = { choice: choice };
    if (choice === "allow_always" && everyone && everyone.checked) body.grantScope = "everyone";
    // Until this page's own answer is back, the stream's word of it waits (see `resolved` below).
    card.dataset.answering = "true";
    setButtons(card, false);
    api(API + "/" + encodeURIComponent(requestId), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    })
      .then((response) =>
        response.json().then((body) => {
          if (!response.ok)
            throw new Error(body && body.error ? body.error.message : "HTTP " + response.status);
          delete card.dataset.answering;
          resolved(requestId, body.decision, "you");
        }),
      )
      .catch((error) => {
        delete card.dataset.answering;
        // Someone else's answer came first: show theirs rather than the refusal of ours.
        if (card.dataset.heard) {
          const heard = JSON.parse(card.dataset.heard);
          resolved(requestId, heard.decision, heard.by);
          return;
        }
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
    setTimeout(() => {
      card.remove();
      cards.delete(requestId);
      refreshEmpty();
    }, KEEP_RESOLVED_MS);
  }

  function refreshEmpty() {
    var open = 0;
    cards.forEach((card) => {
      if (!card.classList.contains("resolved")) open += 1;
    });
    empty.hidden = open > 0;
    document.title = (open > 0 ? "(" + open + ") " : "") + "toolbus · approvals";
  }

  /** A 401 shows how to sign in or where to enter the token; the request fails with an error that says so. */
  function unauthorized() {
    document.getElementById("auth").hidden = false;
    page.signIn.then((session) => {
      document.getElementById("signin-offer").hidden = !session.offered;
      document.getElementById("token-only").hidden = session.offered;
      document.getElementById("signin-link").href = page.signInUrl();
    });
    statusEl.textContent = "token needed";
    statusEl.className = "down";
    return new Error("the gateway needs a bearer token (enter it in the console) or a sign-in");
  }

  /** A 403: whoever this page acts for may not answer approvals; it says so and stops asking. */
  function forbidden(message) {
    var box = document.getElementById("forbidden");
    box.textContent = message + ". Only approvers and admins answer approvals.";
    box.hidden = false;
    statusEl.textContent = "not an approver";
    statusEl.className = "down";
  }
  function api(path, init) {
    return page.api(path, init, unauthorized);
  }

  var handlers = {
    snapshot: (data) => {
      // The snapshot is the list's first page: the rest is read page by page before it is applied.
      page
        .allPages(data, unauthorized)
        .then((pending) => {
          var ids = new Set(pending.map((r) => r.requestId));
          cards.forEach((card, id) => {
            if (!ids.has(id)) resolved(id, "", "");
          });
          pending.forEach(render);
        })
        .catch((error) => {
          statusEl.textContent = "could not list: " + error.message;
          statusEl.className = "down";
        });
    },
    pending: render,
    resolved: (data) => {
      // This page's own answer says "you" when it is back; the stream's may arrive first.
      const card = cards.get(data.requestId);
      if (card?.dataset.answering) {
        card.dataset.heard = JSON.stringify({ decision: data.decision, by: data.by });
        return;
      }
      resolved(data.requestId, data.decision, data.by);
    },
  };

  /** The SSE stream read with fetch; reconnects after a pause unless a token is missing. */
  function connect() {
    api(API + "/events", { headers: { accept: "text/event-stream" } })
      .then((response) => {
        if (response.status === 403) {
          return response.json().then((body) => {
            forbidden(body?.error?.message ? body.error.message : "Forbidden");
          });
        }
        if (!response.ok) throw new Error("HTTP " + response.status);
        statusEl.textContent = "live";
        statusEl.className = "live";
        return page.readEvents(response, handlers);
      })
      .catch(() => {
        if (!document.getElementById("auth").hidden) return;
        statusEl.textContent = "reconnecting…";
        statusEl.className = "down";
        setTimeout(connect, RECONNECT_MS);
      });
  }

  setInterval(() => {
    document.querySelectorAll(".expires").forEach((node) => {
      node.textContent = expiresText(node.dataset.expiresAt);
    });
  }, 1000);
  refreshEmpty();
  page.showWho(document.getElementById("who"));
  connect();
})();
