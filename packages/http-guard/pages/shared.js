/**
 * What the console (`/`) and the approvals inbox (`/approvals`) share: elements made with their
 * text (never markup), requests carrying the bearer token this tab keeps, Server-Sent Events
 * read with fetch (EventSource cannot send headers), the approval list read page by page, and
 * the words for a decision. A classic script: it sets `window.toolbusPage` for the page's own.
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

  /** fetch with the token; a 401 throws what `unauthorized()` returns (after it told the user). */
  function api(path, init, unauthorized) {
    const options = init || {};
    const headers = Object.assign({}, options.headers || {});
    if (token()) headers.authorization = `Bearer ${token()}`;
    options.headers = headers;
    return fetch(path, options).then((response) => {
      if (response.status === 401) throw unauthorized();
      return response;
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

  window.toolbusPage = { TOKEN_KEY, DECISIONS, el, token, api, getJson, readEvents, allPages };
})();
