/**
 * What the test server lists for a script: the tools (scripted plus generated), resources and
 * templates, their pages, and whether a script change altered what a client would list.
 */
import type { ParsedTestServerScript, ScriptTool } from "./script.js";

/** A tool as it goes out in tools/list; fields are passed through unvalidated on purpose. */
export type ListedTool = Record<string, unknown> & { name: string };

/** The scripted tools followed by `toolCount` generated echo tools `t0000`, `t0001`, … */
export function scriptTools(script: ParsedTestServerScript): ScriptTool[] {
  const generated = Array.from({ length: script.toolCount ?? 0 }, (_, i) => ({
    name: `t${String(i).padStart(4, "0")}`,
    description: `Generated echo tool ${i}.`,
    inputSchema: { type: "object" },
    behavior: { kind: "echo" as const },
  }));
  return [...script.tools, ...generated];
}

export function listedTool(tool: ScriptTool, asWritten: boolean): ListedTool {
  const { behavior: _behavior, ...fields } = tool;
  // `null` is written too (a schema that is not an object is something to test with).
  const inputSchema =
    fields.inputSchema !== undefined ? fields.inputSchema : asWritten ? undefined : { type: "object" };
  return dropUndefined({ ...fields, inputSchema });
}

export function listedTools(script: ParsedTestServerScript): ListedTool[] {
  return scriptTools(script).map((tool) => listedTool(tool, script.invalidToolSchemas === true));
}

export function findTool(script: ParsedTestServerScript, name: string): ScriptTool | undefined {
  return scriptTools(script).find((tool) => tool.name === name);
}

export type Page<T> = { items: T[]; nextCursor?: string } | { invalidCursor: string };

/** One page of `items`; the cursor is the decimal offset of the page's first item. */
export function page<T>(items: T[], pageSize: number | undefined, cursor: string | undefined): Page<T> {
  const offset = cursor === undefined ? 0 : Number(cursor);
  if (
    !Number.isSafeInteger(offset) ||
    offset < 0 ||
    offset > items.length ||
    (cursor ?? "0") !== String(offset)
  )
    return { invalidCursor: cursor ?? "" };
  if (pageSize === undefined) return { items: items.slice(offset) };
  const end = offset + pageSize;
  return end < items.length
    ? { items: items.slice(offset, end), nextCursor: String(end) }
    : { items: items.slice(offset) };
}

/** The cursorLoop page: always the first page, always the same next cursor. */
export const LOOP_CURSOR = "loop";

export function toolsPage(script: ParsedTestServerScript, cursor: string | undefined): Page<ListedTool> {
  const tools = listedTools(script);
  if (script.cursorLoop) {
    const first = tools.slice(0, script.toolsPageSize ?? tools.length);
    return { items: first, nextCursor: LOOP_CURSOR };
  }
  return page(tools, script.toolsPageSize, cursor);
}

export function listedResources(script: ParsedTestServerScript): Record<string, unknown>[] {
  return (script.resources ?? [])
    .filter((resource) => resource.unlisted !== true)
    .map(({ text: _text, blob: _blob, unlisted: _unlisted, ...fields }) => dropUndefined(fields));
}

export function listedResourceTemplates(script: ParsedTestServerScript): Record<string, unknown>[] {
  return (script.resourceTemplates ?? []).map((template) => dropUndefined(template));
}

export function listedPrompts(script: ParsedTestServerScript): Record<string, unknown>[] {
  return (script.prompts ?? []).map(({ text: _text, ...fields }) => dropUndefined(fields));
}

export interface ScriptChanges {
  tools: boolean;
  resources: boolean;
  prompts: boolean;
}

/** Whether a client listing tools, resources or prompts would now see something different. */
export function scriptChanges(before: ParsedTestServerScript, after: ParsedTestServerScript): ScriptChanges {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return {
    tools: !same(listedTools(before), listedTools(after)),
    resources:
      !same(listedResources(before), listedResources(after)) ||
      !same(listedResourceTemplates(before), listedResourceTemplates(after)),
    prompts: !same(listedPrompts(before), listedPrompts(after)),
  };
}

function dropUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
