/** `toolbus.memory.strip`: the visible text of a message and the citation it carried (docs/reference-behavior.md §9). */
import { type MemoryStripRequest, type MemoryStripResult, stripCitations } from "@toolbus/protocol";

export function strip(request: MemoryStripRequest): MemoryStripResult {
  return stripCitations(request.text, request.planMode === undefined ? {} : { planMode: request.planMode });
}
