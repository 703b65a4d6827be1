/**
 * The titles of the tests a vitest file declares, read from its text: the first argument of
 * `it`, `test` and `describe` (and of their `.each`, `.for`, `.skipIf(…)`, `.concurrent`, …
 * forms) when it is a string or template literal, and, for `.each`/`.for` titles that name a
 * row field (`"$name"`), the title each row's string field gives. Comments, strings and regular
 * expressions are skipped, so a title quoted in them does not count. A lexer, not a parser:
 * enough for the repository's test files, which are ordinary TypeScript.
 */

type Token =
  | { kind: "ident"; text: string }
  | { kind: "string"; text: string }
  | { kind: "punct"; text: string }
  | { kind: "other"; text: string };

const TEST_FUNCTIONS = new Set(["it", "test", "describe", "suite"]);
/** Chained members that take arguments before the title: `.each(table)`, `.skipIf(cond)`. */
const TABLE_MEMBERS = new Set(["each", "for"]);
const CONDITION_MEMBERS = new Set(["skipIf", "runIf"]);
/** After these, a `/` starts a regular expression rather than a division. */
const KEYWORDS_BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "case",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
]);

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", v: "\v", "0": "\0" };

class Lexer {
  readonly tokens: Token[] = [];
  private pos = 0;

  constructor(private readonly source: string) {}

  run(): Token[] {
    this.until(null);
    return this.tokens;
  }

  /** Lexes up to the `}` that closes the current `${…}` (or to the end, for `null`). */
  private until(closing: "}" | null): void {
    let depth = 0;
    const s = this.source;
    while (this.pos < s.length) {
      const c = s[this.pos]!;
      if (/\s/.test(c)) {
        this.pos++;
      } else if (s.startsWith("//", this.pos)) {
        const end = s.indexOf("\n", this.pos);
        this.pos = end === -1 ? s.length : end;
      } else if (s.startsWith("/*", this.pos)) {
        const end = s.indexOf("*/", this.pos + 2);
        this.pos = end === -1 ? s.length : end + 2;
      } else if (c === '"' || c === "'") {
        this.tokens.push({ kind: "string", text: this.quoted(c) });
      } else if (c === "`") {
        this.tokens.push({ kind: "string", text: this.template() });
      } else if (c === "/" && this.regexAllowed()) {
        this.regex();
      } else if (/[A-Za-z_$]/.test(c)) {
        const match = /^[\w$]+/.exec(s.slice(this.pos, this.pos + 200))!;
        this.pos += match[0].length;
        this.tokens.push({ kind: "ident", text: match[0] });
      } else if (/[0-9]/.test(c)) {
        const match = /^[\w.]+/.exec(s.slice(this.pos, this.pos + 100))!;
        this.pos += match[0].length;
        this.tokens.push({ kind: "other", text: match[0] });
      } else {
        this.pos++;
        if (closing !== null && c === "{") depth++;
        if (closing !== null && c === "}") {
          if (depth === 0) return;
          depth--;
        }
        this.tokens.push({ kind: "punct", text: c });
      }
    }
  }

  private quoted(quote: string): string {
    const s = this.source;
    let text = "";
    this.pos++;
    while (this.pos < s.length && s[this.pos] !== quote) {
      if (s[this.pos] === "\\") {
        const next = s[this.pos + 1] ?? "";
        text += ESCAPES[next] ?? next;
        this.pos += 2;
      } else {
        text += s[this.pos++];
      }
    }
    this.pos++;
    return text;
  }

  /** A template literal's text, with each `${…}` kept as written (its tokens are lexed too). */
  private template(): string {
    const s = this.source;
    let text = "";
    this.pos++;
    while (this.pos < s.length && s[this.pos] !== "`") {
      if (s[this.pos] === "\\") {
        const next = s[this.pos + 1] ?? "";
        text += ESCAPES[next] ?? next;
        this.pos += 2;
      } else if (s.startsWith("${", this.pos)) {
        const start = this.pos;
        this.pos += 2;
        // The expression's own tokens are lexed apart, so they never join the call being read.
        const outer = this.tokens.length;
        this.until("}");
        this.tokens.length = outer;
        text += s.slice(start, this.pos);
      } else {
        text += s[this.pos++];
      }
    }
    this.pos++;
    return text;
  }

  private regexAllowed(): boolean {
    const previous = this.tokens.at(-1);
    if (previous === undefined) return true;
    if (previous.kind === "ident") return KEYWORDS_BEFORE_EXPRESSION.has(previous.text);
    if (previous.kind === "string" || previous.kind === "other") return false;
    return !")]}".includes(previous.text);
  }

  private regex(): void {
    const s = this.source;
    let inClass = false;
    this.pos++;
    while (this.pos < s.length) {
      const c = s[this.pos]!;
      if (c === "\\") this.pos += 2;
      else {
        this.pos++;
        if (c === "[") inClass = true;
        else if (c === "]") inClass = false;
        else if (c === "/" && !inClass) break;
        else if (c === "\n") break;
      }
    }
    while (this.pos < s.length && /[a-z]/.test(s[this.pos]!)) this.pos++;
    this.tokens.push({ kind: "other", text: "/regex/" });
  }
}

/** The index just past the `)` matching the `(` at `open`. */
function pastClosingParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== "punct") continue;
    if (token.text === "(") depth++;
    else if (token.text === ")" && --depth === 0) return i + 1;
  }
  return tokens.length;
}

/** The index just past TypeScript type arguments `<…>` at `open` (an arrow's `=>` is no closer). */
function pastTypeArguments(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== "punct") continue;
    if (token.text === "<") depth++;
    else if (token.text === ">" && tokens[i - 1]?.text !== "=" && --depth === 0) return i + 1;
  }
  return tokens.length;
}

/**
 * A `.each` table given by name (`it.each(cases)`): the tokens of `const cases = …;`, so its
 * rows' titles can be read. Any other table is read where it stands.
 */
function resolveTable(tokens: Token[], table: Token[]): Token[] {
  const [open, name, close] = table;
  if (table.length !== 3 || name?.kind !== "ident" || open?.text !== "(" || close?.text !== ")") return table;
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (!["const", "let"].includes(tokens[i]!.text) || tokens[i + 1]!.text !== name.text) continue;
    let depth = 0;
    for (let j = i + 2; j < tokens.length; j++) {
      const token = tokens[j]!;
      if (token.kind === "punct" && "([{".includes(token.text)) depth++;
      else if (token.kind === "punct" && ")]}".includes(token.text)) depth--;
      else if (token.kind === "punct" && token.text === ";" && depth === 0) return tokens.slice(i + 2, j);
    }
    return tokens.slice(i + 2);
  }
  return table;
}

/**
 * Each row's title for a `.each` title naming fields (`$name`, `$mode`): every object literal of
 * the table that gives one of those fields as a string stands for a row, its fields substituted.
 */
function rowTitles(title: string, table: Token[]): string[] {
  const fields = new Set([...title.matchAll(/\$([A-Za-z_]\w*)/g)].map((match) => match[1]!));
  const titles: string[] = [];
  for (let open = 0; open < table.length; open++) {
    if (table[open]!.kind !== "punct" || table[open]!.text !== "{") continue;
    const values = new Map<string, string>();
    let depth = 0;
    for (let i = open; i < table.length; i++) {
      const token = table[i]!;
      if (token.kind === "punct" && "([{".includes(token.text)) depth++;
      else if (token.kind === "punct" && ")]}".includes(token.text) && --depth === 0) break;
      const [colon, value] = [table[i + 1], table[i + 2]];
      if (depth === 1 && (token.kind === "ident" || token.kind === "string") && fields.has(token.text)) {
        if (colon?.text === ":" && value?.kind === "string") values.set(token.text, value.text);
      }
    }
    if (values.size === 0) continue;
    titles.push(title.replace(/\$([A-Za-z_]\w*)/g, (whole, field: string) => values.get(field) ?? whole));
  }
  return titles;
}

export function testTitles(source: string): string[] {
  const tokens = new Lexer(source).run();
  const titles: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== "ident" || !TEST_FUNCTIONS.has(token.text)) continue;
    const before = tokens[i - 1];
    if (before?.kind === "punct" && before.text === ".") continue;
    let j = i + 1;
    let table: Token[] | null = null;
    while (tokens[j]?.text === "." && tokens[j + 1]?.kind === "ident") {
      const member = tokens[j + 1]!.text;
      j += 2;
      if (tokens[j]?.text === "<") j = pastTypeArguments(tokens, j);
      if ((TABLE_MEMBERS.has(member) || CONDITION_MEMBERS.has(member)) && tokens[j]?.text === "(") {
        const end = pastClosingParen(tokens, j);
        if (TABLE_MEMBERS.has(member)) table = resolveTable(tokens, tokens.slice(j, end));
        j = end;
      } else if (TABLE_MEMBERS.has(member) && tokens[j]?.kind === "string") {
        j++; // a tagged-template table
      }
    }
    const open = tokens[j];
    const title = tokens[j + 1];
    if (open?.kind !== "punct" || open.text !== "(" || title?.kind !== "string") continue;
    titles.push(title.text);
    if (table !== null) titles.push(...rowTitles(title.text, table));
  }
  return [...new Set(titles)];
}

/**
 * The checklist items a title is tagged with: `[29] …`, `[38][42] …` or `[38, 42] …` at its start.
 * `[24 differs] …` tags a test that asserts toolbus's rule where it departs from the item's text.
 */
export function checklistTags(title: string): Array<{ id: number; differs: boolean }> {
  const prefix = /^\s*((?:\[\d+(?:\s*,\s*\d+)*(?: differs)?\]\s*)+)/.exec(title);
  if (prefix === null) return [];
  return [...prefix[1]!.matchAll(/\[([\d,\s]+)( differs)?\]/g)].flatMap((tag) =>
    tag[1]!.split(",").map((id) => ({ id: Number(id.trim()), differs: tag[2] !== undefined })),
  );
}
