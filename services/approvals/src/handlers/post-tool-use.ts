/**
 * `toolbus.approvals.post_tool_use`: runs the PostToolUse hooks that match the call's hook name
 * on the finished call. The first block (in file order) wins; a hook that fails blocks.
 */
import type { Logger } from "@toolbus/bus";
import { matchingHooks, postToolUsePayload } from "@toolbus/policy";
import type { PostToolUseRequest, PostToolUseResult } from "@toolbus/protocol";
import { combinePostToolUseOutcomes, interpretPostToolUseOutcome } from "../core/index.js";
import type { ApprovalPorts } from "../ports.js";

export async function handlePostToolUse(
  request: PostToolUseRequest,
  ports: Pick<ApprovalPorts, "hooks" | "hookRunner" | "closing">,
  ctx: { logger: Logger },
): Promise<PostToolUseResult> {
  const hooks = matchingHooks(ports.hooks, "PostToolUse", request.hookName);
  if (hooks.length === 0) return { block: false };
  const payload = postToolUsePayload({
    hookName: request.hookName,
    toolInput: request.toolInput,
    callId: request.callId,
    ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
    toolResponse: request.toolResponse,
  });
  const runs = await ports.hookRunner.run(hooks, payload, ports.closing);
  const outcome = combinePostToolUseOutcomes(runs.map(interpretPostToolUseOutcome));
  if (outcome.block) ctx.logger.info({ reason: outcome.reason }, "a PostToolUse hook blocked the result");
  return outcome;
}
