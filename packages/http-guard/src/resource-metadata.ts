/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for each resource of the server: at
 * `/.well-known/oauth-protected-resource` for the root, and with the resource's path after it
 * (`…/mcp`) for each resource of its own. No token needed (a client reads it to learn where to
 * get one); the Host check applies, and the `resource` is the canonical URI of the resource
 * as the client addressed it (or as `public_url` names it).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from "fastify";
import { canonicalResource, METADATA_PATH, requestOrigin } from "./core/resource-uri.js";
import type { OAuthResourceServer } from "./oauth/resource-server.js";

export function installResourceMetadata<L extends FastifyBaseLogger>(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, L>,
  oauth: OAuthResourceServer,
  publicUrl: string | undefined,
): void {
  for (const resourcePath of ["", ...oauth.resourcePaths]) {
    app.get(
      `${METADATA_PATH}${resourcePath}`,
      { config: { access: "discovery" } },
      async (request, reply) => {
        const origin = requestOrigin(publicUrl, request.headers.host);
        if (origin === undefined) {
          return reply.code(400).send({
            error: {
              code: "bad_request",
              message:
                "Bad Request: the Host header is not a host name; send the host this server is reached at",
              retryable: false,
            },
          });
        }
        const { config } = oauth;
        return reply.header("cache-control", "max-age=300").send({
          resource: canonicalResource(origin, resourcePath),
          authorization_servers: [config.issuer],
          ...(config.scopesSupported.length > 0 ? { scopes_supported: config.scopesSupported } : {}),
          bearer_methods_supported: ["header"],
          resource_name: "toolbus",
        });
      },
    );
  }
}
