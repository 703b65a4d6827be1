/**
 * The tool fingerprint of docs/contract.md "Catalog": hex SHA-256 of the canonical JSON of the
 * fields a model is shown, so a caller can tell whether the tool it prepared against changed.
 */
import { hash } from "node:crypto";
import { acquireWriter, isSkippedMember, releaseWriter } from "./canonical-json.js";
import type { RawTool } from "./types.js";

/** The fields a model is shown, in canonical (sorted) order. */
const SHOWN_KEYS = ["annotations", "description", "inputSchema", "name", "outputSchema", "title"] as const;

/** `sha256(canonicalJson({ name, title, description, inputSchema, outputSchema, annotations }))`. */
export function toolFingerprint(tool: RawTool): string {
  const writer = acquireWriter();
  try {
    let first = true;
    for (const key of SHOWN_KEYS) {
      const member = tool[key];
      if (isSkippedMember(member)) continue;
      writer.key(key, first);
      first = false;
      writer.value(member);
    }
    writer.endObject(first);
    return hash("sha256", writer.bytes(), "hex");
  } finally {
    releaseWriter(writer);
  }
}
