/**
 * The one rule for printing a URL (or a text holding URLs, such as an error message) where a
 * person or a log may read it: credentials become `***` (`user:***@`, or `***@` when the user
 * name alone is the secret, as in `https://<token>@host`), and so do the values of query
 * parameters whose name says they are secret (`token`, `key`, `secret`, `password`, `sig`, …).
 * Every URL in the text is masked, so a comma-separated NATS server list or an error chain that
 * quotes a URL is covered too; a libpq `password=…` keyword is masked as well.
 */

const MASK = "***";
/** A query parameter whose name contains one of these (any case) carries a secret. */
const SECRET_PARAM_PARTS = [
  "token",
  "key",
  "secret",
  "password",
  "passwd",
  "pwd",
  "sig",
  "auth",
  "credential",
  "session",
  "jwt",
] as const;

/** `scheme://…` up to whitespace, a quote, an angle bracket or a comma (NATS server lists). */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>,`]+/gi;
/** A libpq keyword/value connection string's password. */
const KEYWORD_PASSWORD = /\b(password|passwd)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s]+)/gi;

export function maskUrl(text: string): string {
  return text
    .replace(URL_IN_TEXT, maskOne)
    .replace(KEYWORD_PASSWORD, (_m, name: string) => `${name}=${MASK}`);
}

export function isSecretParam(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_PARAM_PARTS.some((part) => lower.includes(part));
}

function maskOne(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not a URL the WHATWG parser takes: mask what looks like userinfo and secret parameters by hand.
    return maskQuery(
      raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i, (_m, scheme: string, info: string) =>
        info.includes(":") ? `${scheme}${info.slice(0, info.indexOf(":"))}:${MASK}@` : `${scheme}${MASK}@`,
      ),
    );
  }
  let changed = false;
  if (url.password !== "") {
    url.password = MASK;
    changed = true;
  } else if (url.username !== "") {
    url.username = MASK;
    changed = true;
  }
  const masked = url.search === "" ? url.search : maskQuery(url.search);
  if (masked !== url.search) {
    url.search = masked;
    changed = true;
  }
  // An unchanged URL is printed as it was written, not as the parser would normalise it.
  return changed ? url.toString() : raw;
}

/** Masks secret parameters' values, keeping every other byte as written. */
function maskQuery(search: string): string {
  return search.replace(/([?&;])([^=&;#]+)=([^&;#]*)/g, (match, sep: string, name: string) =>
    isSecretParam(decodeSafe(name)) ? `${sep}${name}=${MASK}` : match,
  );
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}
