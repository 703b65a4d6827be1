(() => {
  var page = window.toolbusPage,
    el = page.el,
    token = page.token;
  var MAX_CALLS = 200,
    MAX_TOOLS = 300;
  var $ = (id) => document.getElementById(id);
  var servers = new Map(),
    tools = [],
    calls = new Map(),
    cards = new Map();

  function AuthNeeded() {}

  // --- HTTP with the bearer token -------------------------------------------------------------
  /** A 401 asks for a token, and the request fails with AuthNeeded (which shows no error). */
  function unauthorized() {
    askToken();
    return new AuthNeeded();
  }
  function api(path, init) {
    return page.api(path, init, unauthorized);
  }
  function getJson(path, init) {
    return page.getJson(path, init, unauthorized);
  }
  function askToken() {
    var form = $("auth");
    if (!form.hidden) return;
    form.hidden = false;
    page.signIn.then((session) => {
      $("signin-offer").hidden = !session.offered;
      $("signin-link").href = page.signInUrl();
    });
    $("auth-error").textContent = token() ? "The gateway refused the stored token; enter another." : "";
    $("live").textContent = "token needed";
    $("live").className = "down";
    $("token").focus();
  }
  $("auth").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(page.TOKEN_KEY, $("token").value.trim());
    location.reload();
  });
  $("forget").hidden = !token();
  page.showWho($("who"));
  $("forget").addEventListener("click", (event) => {
    event.preventDefault();
    sessionStorage.removeItem(page.TOKEN_KEY);
    location.reload();
  });

  /** Server-Sent Events over fetch (EventSource cannot send headers); reconnects after 2 s. */
  function stream(path, handlers, onState) {
    function open() {
      api(path, { headers: { accept: "text/event-stream" } })
        .then((response) => {
          if (!response.ok) {
            const error = new Error("HTTP " + response.status);
            error.status = response.status;
            throw error;
          }
          onState("live");
          return page.readEvents(response, handlers);
        })
        .catch((error) => {
          if (error instanceof AuthNeeded) return;
          if (error.status === 404) {
            onState("absent");
            return;
          }
          onState("down");
          setTimeout(open, 2000);
        });
    }
    open();
  }

  // --- Servers --------------------------------------------------------------------------------
  function loadServers() {
    return getJson("/v1/servers")
      .then((body) => {
        servers.clear();
        body.servers.forEach((server) => {
          servers.set(server.name, server);
        });
        $("revision").textContent = "catalog revision " + body.revision;
        clearFailure("servers");
        renderServers();
      })
      .catch(showFailure("servers"));
  }
  function renderServers() {
    var rows = [];
    Array.from(servers.values())
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .forEach((server) => {
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
    document
      .querySelector("#servers tbody")
      .replaceChildren.apply(document.querySelector("#servers tbody"), rows);
    $("servers-empty").hidden = rows.length > 0;
  }
  // What the server said about itself: title and version, description, website (http(s) only).
  function serverAbout(info) {
    var about = el("div", "about");
    about.appendChild(
      el("span", "server-title", (info.title || info.name) + (info.version ? " " + info.version : "")),
    );
    if (info.description) about.appendChild(el("div", "muted server-description", info.description));
    if (info.websiteUrl && /^https?:\/\//i.test(info.websiteUrl)) {
      const link = el("a", "server-website", info.websiteUrl);
      link.href = info.websiteUrl;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      about.appendChild(link);
    }
    return about;
  }
  // An icon only from a data: image URL (the page loads nothing from elsewhere).
  function serverIcon(info) {
    var icons = info && Array.isArray(info.icons) ? info.icons : [];
    for (let i = 0; i < icons.length; i++) {
      const src = icons[i] && icons[i].src;
      if (typeof src === "string" && /^data:image\//i.test(src)) {
        const img = el("img", "server-icon");
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
    return getJson("/v1/catalog?exposure=all")
      .then((snapshot) => {
        tools = snapshot.tools;
        clearFailure("catalog");
        renderCatalog();
      })
      .catch(showFailure("catalog"));
  }
  function matches(tool, words) {
    var text = [toolName(tool), tool.flatName, tool.server, tool.rawName, tool.title || "", tool.description]
      .join(" ")
      .toLowerCase();
    return words.every((word) => text.indexOf(word) >= 0);
  }
  // The name MCP clients see (the gateway adds it); a tool hidden from the model has only its flat name.
  function toolName(tool) {
    return tool.exposedName || tool.flatName;
  }
  function renderCatalog() {
    var words = $("catalog-search").value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = tools.filter((tool) => matches(tool, words));
    $("catalog-count").textContent = (words.length ? shown.length + " of " : "") + tools.length + " tools";
    var items = shown.slice(0, MAX_TOOLS).map((tool) => {
      var item = el("li");
      item.dataset.tool = tool.flatName;
      item.appendChild(el("span", "tool-name", toolName(tool)));
      item.appendChild(el("span", "badge", tool.server));
      if (tool.exposure !== "direct") item.appendChild(el("span", "badge", tool.exposure));
      if (tool.readOnlyHint) item.appendChild(el("span", "badge", "read-only"));
      item.appendChild(
        el("p", "desc", (tool.title ? tool.title + ": " : "") + tool.description.split("\n")[0]),
      );
      var details = el("details");
      details.appendChild(el("summary", "", "input schema"));
      details.appendChild(el("pre", "", JSON.stringify(tool.inputSchema, null, 2)));
      item.appendChild(details);
      return item;
    });
    if (shown.length > MAX_TOOLS)
      items.push(el("li", "muted", shown.length - MAX_TOOLS + " more; refine the search"));
    if (items.length === 0)
      items.push(el("li", "muted", tools.length ? "No tool matches." : "The catalog has no tools."));
    $("catalog-list").replaceChildren.apply($("catalog-list"), items);
  }
  $("catalog-search").addEventListener("input", renderCatalog);
  $("catalog-search").value = new URLSearchParams(location.search).get("q") || "";

  // --- Live calls -----------------------------------------------------------------------------
  function duration(ms) {
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }
  function callRow(event) {
    var row = calls.get(event.callId);
    if (row) return row;
    row = el("tr");
    row.dataset.callId = event.callId;
    row.appendChild(el("td", "mono", new Date(event.at).toLocaleTimeString()));
    var tool = el("td", "tool", event.invocation.server + " / " + event.invocation.tool);
    tool.title = "callId " + event.callId;
    row.appendChild(tool);
    // Who asked (the principal at the edge); the end adds who answered its approval.
    row.appendChild(el("td", "who", page.requester(event) || "—"));
    var status = el("td");
    status.appendChild(el("span", "pill status running", "in progress"));
    row.appendChild(status);
    row.appendChild(el("td", "duration mono", ""));
    row.dataset.started = String(Date.now());
    calls.set(event.callId, row);
    document.querySelector("#calls tbody").prepend(row);
    $("calls-empty").hidden = true;
    while (calls.size > MAX_CALLS) {
      const oldest = calls.keys().next().value;
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
    if (event.decidedBy)
      row.querySelector(".who").appendChild(el("div", "answered", "answered by " + event.decidedBy));
    var message =
      event.result && "err" in event.result ? event.result.err : failed ? firstText(event.result.ok) : "";
    if (message) row.querySelector(".tool").appendChild(el("div", "error", message));
  }
  function firstText(result) {
    var block = (result.content || []).find((item) => item.type === "text");
    return block ? block.text.slice(0, 300) : "";
  }
  setInterval(() => {
    calls.forEach((row) => {
      if (!row.dataset.done)
        row.querySelector(".duration").textContent = duration(Date.now() - Number(row.dataset.started)) + "…";
    });
  }, 1000);

  // --- Approvals ------------------------------------------------------------------------------
  var DECISIONS = page.DECISIONS;
  function renderApproval(request) {
    if (cards.has(request.requestId)) return;
    var card = el("article", "card");
    card.dataset.requestId = request.requestId;
    card.appendChild(el("h3", "", request.question));
    card.appendChild(el("div", "mono muted", request.server + " / " + request.tool));
    var args = JSON.stringify(request.arguments, null, 2);
    if (args.length > 200 || args.split("\n").length > 8) {
      const details = el("details");
      details.appendChild(el("summary", "", "arguments (" + args.length + " characters)"));
      details.appendChild(el("pre", "", args));
      card.appendChild(details);
    } else {
      card.appendChild(el("pre", "", args));
    }
    var actions = el("div", "actions");
    request.options.forEach((option, index) => {
      var button = el("button", index === 0 ? "primary" : "", option.label);
      button.type = "button";
      button.title = option.description;
      button.dataset.choice = option.id;
      button.addEventListener("click", () => {
        answer(request.requestId, option.id, card);
      });
      actions.appendChild(button);
    });
    card.appendChild(actions);
    card.appendChild(el("p", "outcome"));
    cards.set(request.requestId, card);
    $("approvals-list").appendChild(card);
    refreshApprovals();
  }
  function answer(requestId, choice, card) {
    card.querySelectorAll("button").forEach((b) => {
      b.disabled = true;
    });
    getJson("/v1/approvals/" + encodeURIComponent(requestId), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: choice }),
    })
      .then((body) => {
        approvalResolved({ requestId: requestId, decision: body.decision, by: "you" });
      })
      .catch((error) => {
        if (error instanceof AuthNeeded) return;
        card.querySelector(".outcome").textContent = error.message;
        card.querySelector(".outcome").className = "outcome error";
        card.querySelectorAll("button").forEach((b) => {
          b.disabled = false;
        });
      });
  }
  function approvalResolved(event) {
    var card = cards.get(event.requestId);
    if (!card || card.classList.contains("resolved")) return;
    card.classList.add("resolved");
    card.querySelectorAll("button").forEach((b) => {
      b.disabled = true;
    });
    card.querySelector(".outcome").textContent =
      (DECISIONS[event.decision] || event.decision) + (event.by ? " (" + event.by + ")" : "");
    setTimeout(() => {
      card.remove();
      cards.delete(event.requestId);
      refreshApprovals();
    }, 4000);
  }
  function refreshApprovals() {
    var open = 0;
    cards.forEach((card) => {
      if (!card.classList.contains("resolved")) open += 1;
    });
    $("approvals-empty").hidden = open > 0;
    $("approvals-state").textContent = open ? open + " waiting" : "";
  }
  function approvalsAbsent() {
    $("approvals-absent").hidden = false;
    $("inbox-link").hidden = true;
    $("approvals-empty").hidden = true;
    $("approvals-state").textContent = "";
  }
  function snapshot(body) {
    return page.allPages(body, unauthorized).then((pending) => {
      var ids = new Set(pending.map((request) => request.requestId));
      cards.forEach((card, id) => {
        if (!ids.has(id)) approvalResolved({ requestId: id, decision: "", by: "" });
      });
      pending.forEach(renderApproval);
      refreshApprovals();
    });
  }
  function loadApprovals() {
    return getJson("/v1/approvals")
      .then((body) => {
        snapshot(body).catch(showFailure("approvals"));
        stream(
          "/v1/approvals/events",
          { snapshot: snapshot, pending: renderApproval, resolved: approvalResolved },
          (state) => {
            if (state === "absent") approvalsAbsent();
          },
        );
      })
      .catch((error) => {
        if (error.status === 404) approvalsAbsent();
        else showFailure("approvals")(error);
      });
  }

  function clearFailure(section) {
    var note = document.querySelector("#" + section + " .failure");
    if (note) note.remove();
  }
  function showFailure(section) {
    return (error) => {
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
  stream(
    "/v1/events?kinds=call.begin,call.end,server.status,startup_complete,catalog",
    {
      "call.begin": callRow,
      "call.end": callEnd,
      "server.status": serverStatus,
      startup_complete: loadServers,
      catalog: () => {
        loadServers();
        loadCatalog();
      },
    },
    (state) => {
      $("live").textContent = state === "live" ? "live" : "reconnecting…";
      $("live").className = state === "live" ? "live" : "down";
      // After a gap, what was missed is read again.
      if (state === "live" && servers.size) {
        loadServers();
        loadCatalog();
      }
    },
  );
})();
