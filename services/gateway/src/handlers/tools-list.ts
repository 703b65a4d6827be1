/** `tools/list`: the model view of the catalog under the gateway's exposed names, in one page. */
import type { ListedTool } from "../core/tool-listing.js";
import type { CatalogPort, SessionStatePort } from "../ports.js";

export async function listTools(
  session: Pick<SessionStatePort, "noteListed">,
  ports: { catalog: CatalogPort },
): Promise<{ tools: ListedTool[] }> {
  const state = await ports.catalog.current();
  // Calls made after this are checked against this revision (a tool changed since is refused).
  session.noteListed(state.revision);
  return { tools: [...state.tools] };
}
