/**
 * MCP 2026-07-28 custom headers from tool parameters (SEP-2243), the rules both sides of toolbus
 * apply: a tool's `inputSchema` may mark a primitive property `"x-mcp-header": "<Name>"`, and a
 * `tools/call` over streamable HTTP then carries that argument in an `Mcp-Param-<Name>` header
 * too, so intermediaries can route on it without reading the body. A client mirrors the argument
 * (`mcpParamHeaders`); a server checks the header against the body (`mcpParamMismatch`), since an
 * intermediary may have acted on the header while the server is about to act on the body.
 *
 * Pure: no I/O, no SDK. The v2 SDK has the same rules, but exports them from neither its client
 * nor its server package (its server applies them only to tools registered on an `McpServer`,
 * its client only in `callTool` from a cached `listTools()`), and toolbus uses neither path.
 */

export const MCP_PARAM_HEADER_PREFIX = "Mcp-Param-";
/** JSON-RPC `HeaderMismatch`: headers and body disagree; answered with HTTP 400. */
export const HEADER_MISMATCH = -32020;

/** One annotated property: where it sits in `arguments`, and the header it goes in. */
export interface McpParamDeclaration {
  /** Property names from the root of `arguments` (annotations may sit at any depth). */
  path: readonly string[];
  /** The name after `Mcp-Param-`, as the schema spells it. */
  name: string;
  type: "string" | "integer" | "boolean";
}

/**
 * A schema's annotations. Invalid: one breaks a rule, which makes the whole tool definition
 * invalid (clients exclude it): nothing of it is mirrored or checked.
 */
export type McpParamScan =
  | { valid: true; declarations: McpParamDeclaration[] }
  | { valid: false; reason: string };

const ANNOTATION = "x-mcp-header";
/** RFC 9110 `token` (1*tchar): no space, colon, other delimiter, control or non-ASCII character. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** `number` is not permitted (2026-07-28): the header and the body could disagree on its text. */
const PRIMITIVES = new Set(["string", "integer", "boolean"]);
/**
 * Subschema keywords off the chain of `properties` an annotation must sit on: an annotation
 * under one of these (or in a `$ref` target, which lives under `$defs`) is not statically
 * reachable, and makes the tool invalid.
 */
const ELSEWHERE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
] as const;
/** Of those, the ones whose value maps names to subschemas. */
const NAMED_SUBSCHEMAS = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"]);

/** The `x-mcp-header` annotations of an `inputSchema`, or the first rule one breaks. */
export function scanMcpParams(inputSchema: unknown): McpParamScan {
  const declarations: McpParamDeclaration[] = [];
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isRecord(node)) return undefined;
    if (ANNOTATION in node) {
      const where = path.length === 0 ? "the schema's root" : `property ${path.join(".")}`;
      if (!reachable || path.length === 0)
        return `${where}: x-mcp-header is allowed only on a property reached through "properties" alone`;
      const name = node[ANNOTATION];
      if (typeof name !== "string" || name === "") return `${where}: x-mcp-header must be a non-empty string`;
      if (!TOKEN.test(name))
        return `${where}: x-mcp-header ${JSON.stringify(name)} is not an HTTP token (ASCII, no space, colon or control character)`;
      const type = node.type;
      if (typeof type !== "string" || !PRIMITIVES.has(type))
        return `${where}: x-mcp-header is allowed only on a string, integer or boolean property, not ${JSON.stringify(type ?? "untyped")}`;
      const other = seen.get(name.toLowerCase());
      if (other !== undefined)
        return `x-mcp-header ${JSON.stringify(name)} is declared twice (also as ${JSON.stringify(other)}; names are case-insensitive)`;
      seen.set(name.toLowerCase(), name);
      declarations.push({ path, name, type: type as McpParamDeclaration["type"] });
    }
    if (isRecord(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault !== undefined) return fault;
      }
    }
    for (const keyword of ELSEWHERE) {
      const sub = node[keyword];
      const branches = Array.isArray(sub)
        ? sub
        : NAMED_SUBSCHEMAS.has(keyword) && isRecord(sub)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };
  const fault = visit(inputSchema, [], true);
  return fault === undefined ? { valid: true, declarations } : { valid: false, reason: fault };
}

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
/** Canonical, padded Base64: `SGVsbG8` (no padding) or `SGVs!!!bG8=` are refused, not guessed at. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * An argument's header text: a string as is, an integer in decimal, a boolean as `true`/`false`.
 * Undefined (no header): null, absent, anything else, and numbers the header could not carry
 * exactly (not finite, or an integer past 2^53).
 */
export function mcpParamText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

/**
 * The header value for a text: as is when it is a safe plain-ASCII field value, else
 * `=?base64?<UTF-8 in Base64>?=`: non-ASCII, control characters (tab too), leading or trailing
 * whitespace (HTTP strips it), the empty string (some stacks drop empty headers), and text that
 * looks like the wrapper itself (it would be read as one).
 */
export function encodeMcpParamValue(text: string): string {
  const plain = text !== "" && /^[\x20-\x7e]*$/.test(text) && text.trim() === text && !isWrapped(text);
  return plain ? text : `${SENTINEL_PREFIX}${Buffer.from(text, "utf8").toString("base64")}${SENTINEL_SUFFIX}`;
}

/**
 * A received header value's text: unwrapped when it has the whole `=?base64?…?=` wrapper (else
 * literal, even `=?base64?SGVsbG8=` without its `?=`); undefined when the wrapped payload is not
 * canonical Base64 of UTF-8, which a server must refuse.
 */
export function decodeMcpParamValue(value: string): string | undefined {
  if (!isWrapped(value)) return value;
  const payload = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(payload, "base64"));
  } catch {
    return undefined;
  }
}

/** The `Mcp-Param-*` headers a `tools/call` with these arguments carries (none for null or absent ones). */
export function mcpParamHeaders(
  declarations: readonly McpParamDeclaration[],
  args: unknown,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const declaration of declarations) {
    const text = mcpParamText(valueAt(args, declaration.path));
    if (text !== undefined)
      headers[`${MCP_PARAM_HEADER_PREFIX}${declaration.name}`] = encodeMcpParamValue(text);
  }
  return headers;
}

export interface McpParamMismatch {
  kind: "missing" | "invalid-encoding" | "mismatch";
  /** `Mcp-Param-<Name>`. */
  header: string;
  message: string;
}

/**
 * The first `Mcp-Param-*` header that disagrees with the body, or undefined. A body value that
 * is null or absent expects no header (one sent anyway is ignored); a present one expects its
 * header, decoding to the same text (integers compare as numbers: `42.0` is `42`).
 * `header(name)`: the received value of a header, by its lower-case name.
 */
export function mcpParamMismatch(
  declarations: readonly McpParamDeclaration[],
  args: unknown,
  header: (lowerCaseName: string) => string | undefined,
): McpParamMismatch | undefined {
  for (const declaration of declarations) {
    const name = `${MCP_PARAM_HEADER_PREFIX}${declaration.name}`;
    const body = valueAt(args, declaration.path);
    const text = mcpParamText(body);
    if (text === undefined) continue;
    const where = `arguments.${declaration.path.join(".")}`;
    const received = header(name.toLowerCase());
    if (received === undefined) {
      return {
        kind: "missing",
        header: name,
        message: `${where} is in the body but the ${name} header is missing`,
      };
    }
    const decoded = decodeMcpParamValue(received);
    if (decoded === undefined) {
      return {
        kind: "invalid-encoding",
        header: name,
        message: `the ${name} header is not valid Base64 inside =?base64?…?=`,
      };
    }
    const same =
      declaration.type === "integer" && typeof body === "number" && DECIMAL.test(decoded)
        ? Number(decoded) === body
        : decoded === text;
    if (!same) {
      return {
        kind: "mismatch",
        header: name,
        message: `the ${name} header says ${JSON.stringify(decoded)} but ${where} is ${JSON.stringify(body)}`,
      };
    }
  }
  return undefined;
}

function isWrapped(value: string): boolean {
  return (
    value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length &&
    value.startsWith(SENTINEL_PREFIX) &&
    value.endsWith(SENTINEL_SUFFIX)
  );
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isRecord(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
