/**
 * What the console (`/`) and the approvals inbox (`/approvals`) share: elements made with their
 * text (never markup), requests carrying the bearer token this tab keeps, or the browser's
 * sign-in session (its cookie, and its CSRF token on every request that changes something),
 * who is signed in and the way to sign in or out, Server-Sent Events read with fetch
 * (EventSource cannot send headers), the approval list read page by page, and the words for a
 * decision. A classic script: it sets `window.toolbusPage` for the page's own.
 */
(() => {
  /** Where the console keeps the bearer token (sessionStorage: this tab only). */
  const TOKEN_KEY = "toolbus.token";

  const DECISIONS = {
    approved: "Approved",
    approved_for_session: "Approved for this session",
    approved_always: "Approved, and remembered",
    denied: "Declined",
    abort: "Cancelled",
    timed_out: "Timed out",
  };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  /**
   * The browser's sign-in, asked once: `{offered, signedIn, principal, csrfToken}`. Not offered
   * when the server has no sign-in (the inbox run alone, a gateway without [gateway.signin]).
   */
  const signIn = fetch("/auth/session", { headers: { accept: "application/json" } })
    .then((response) => (response.ok ? response.json() : { signedIn: false, offered: false }))
    .then((body) => Object.assign({ offered: body.signIn !== undefined || body.signedIn === true }, body))
    .catch(() => ({ offered: false, signedIn: false }));

  /** Where signing in starts, coming back to this page. */
  function signInUrl() {
    return `/auth/login?return_to=${encodeURIComponent(location.pathname + location.search)}`;
  }

  /**
   * fetch with the tab's token, else the sign-in cookie (sent by the browser) and, on anything
   * but a read, the session's CSRF token; a 401 throws what `unauthorized()` returns (after it
   * told the user).
   */
  function api(path, init, unauthorized) {
    return signIn.then((session) => {
      const options = Object.assign({}, init || {});
      const headers = Object.assign({}, options.headers || {});
      const method = (options.method || "GET").toUpperCase();
      if (token()) headers.authorization = `Bearer ${token()}`;
      else if (session.signedIn && method !== "GET" && method !== "HEAD")
        headers["x-csrf-token"] = session.csrfToken;
      options.headers = headers;
      return fetch(path, options).then((response) => {
        if (response.status === 401) throw unauthorized();
        return response;
      });
    });
  }

  /** Ends the sign-in session, then reloads the page. */
  function signOut() {
    return signIn.then((session) =>
      fetch("/auth/logout", { method: "POST", headers: { "x-csrf-token": session.csrfToken || "" } }).then(
        () => location.reload(),
      ),
    );
  }

  /**
   * Shows who this page acts for in `container`: the signed-in person (name and role) with a
   * sign-out button, or a sign-in link when sign-in is offered and no token is in use.
   */
  function showWho(container) {
    signIn.then((session) => {
      const parts = [];
      if (session.signedIn && !token()) {
        const who = session.principal;
        const label = el("span", "who", `${who.displayName || who.name} (${who.role})`);
        label.title = who.name;
        label.dataset.role = who.role;
        const out = el("button", "link", "sign out");
        out.type = "button";
        out.id = "sign-out";
        out.addEventListener("click", signOut);
        parts.push(label, out);
      } else if (session.offered && !token()) {
        const link = el("a", "", "sign in");
        link.id = "sign-in";
        link.href = signInUrl();
        parts.push(link);
      }
      container.replaceChildren.apply(container, parts);
    });
  }

  /** The JSON body of a 2xx answer; otherwise an Error with the answer's message and `status`. */
  function getJson(path, init, unauthorized) {
    return api(path, init, unauthorized).then((response) =>
      response.json().then((body) => {
        if (response.ok) return body;
        const error = new Error(body?.error?.message ? body.error.message : `HTTP ${response.status}`);
        error.status = response.status;
        throw error;
      }),
    );
  }

  /** Hands each event of an SSE response to `handlers[kind]`; rejects when the stream ends. */
  function readEvents(response, handlers) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    function dispatch(block) {
      let kind = "message";
      const data = [];
      block.split("\n").forEach((line) => {
        if (line === "" || line.charAt(0) === ":") return;
        const at = line.indexOf(":");
        const field = at < 0 ? line : line.slice(0, at);
        const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
        if (field === "event") kind = value;
        else if (field === "data") data.push(value);
      });
      if (data.length > 0 && handlers[kind]) handlers[kind](JSON.parse(data.join("\n")));
    }
    function pump() {
      return reader.read().then((chunk) => {
        if (chunk.done) throw new Error("the stream ended");
        buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n/g, "\n");
        const blocks = buffer.split("\n\n");
        buffer = blocks.pop();
        blocks.forEach(dispatch);
        return pump();
      });
    }
    return pump();
  }

  /** The approval list is paged: the pages after `first` are read one by one. */
  function allPages(first, unauthorized) {
    if (!first.nextCursor) return Promise.resolve(first.pending);
    return getJson(
      `/v1/approvals?cursor=${encodeURIComponent(first.nextCursor)}`,
      undefined,
      unauthorized,
    ).then((body) => allPages(body, unauthorized).then((rest) => first.pending.concat(rest)));
  }

  /** Who asked for a call, as a person reads it: `Alice (oauth:alice)`, or the principal alone. */
  function requester(item) {
    if (!item.requestedBy) return "";
    return item.requesterName ? item.requesterName + " (" + item.requestedBy + ")" : item.requestedBy;
  }

  window.toolbusPage = {
    TOKEN_KEY,
    DECISIONS,
    el,
    token,
    api,
    getJson,
    readEvents,
    allPages,
    signIn,
    signInUrl,
    showWho,
    requester,
  };
})();
