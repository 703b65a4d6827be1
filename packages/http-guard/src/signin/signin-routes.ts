/**
 * The routes of browser sign-in, served by the guard's app when `[gateway.signin]` is on; each
 * is a `page` access (no token; the Host check applies):
 * - `GET /auth/login?return_to=/approvals` → 302 to the issuer, with the attempt cookie
 * - `GET /auth/callback?code&state` → 302 back to `return_to`, with the session cookie
 * - `GET /auth/session` → `{signedIn: true, principal, csrfToken, expiresAt}` for the cookie's
 *   session, else `{signedIn: false, signIn: "/auth/login"}` (what the pages ask first)
 * - `POST /auth/logout` → 204: the session is spent and its cookie cleared (the CSRF check of
 *   every cookie request that changes something applies)
 * Refusals are the REST error shape `{error:{code,message,retryable}}`; none is cached.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HTTP_STATUS_BY_CODE, HttpRefusal, RETRYABLE_BY_DEFAULT } from "@toolbus/protocol";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, RawServerDefault } from "fastify";
import { requestOrigin } from "../core/resource-uri.js";
import { CSRF_HEADER, checkCookieRequest, SIGNIN_PATHS } from "../core/signin.js";
import type { BrowserSignIn, SignInAnswer } from "./browser-signin.js";

const PAGE = { config: { access: "page" } } as const;

export function installSignInRoutes<L extends FastifyBaseLogger>(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, L>,
  signin: BrowserSignIn,
  publicUrl: string | undefined,
): void {
  const originOf = (host: string | undefined) => requestOrigin(publicUrl, host);
  const noOrigin = (reply: FastifyReply) =>
    refuse(
      reply,
      400,
      "Bad Request: the Host header is not a host name; send the host this server is reached at",
    );

  app.get(SIGNIN_PATHS.login, PAGE, async (request, reply) => {
    const origin = originOf(request.headers.host);
    if (origin === undefined) return noOrigin(reply);
    const returnTo = (request.query as { return_to?: unknown } | undefined)?.return_to;
    return send(reply, await signin.login(origin, returnTo));
  });

  app.get(SIGNIN_PATHS.callback, PAGE, async (request, reply) => {
    const origin = originOf(request.headers.host);
    if (origin === undefined) return noOrigin(reply);
    return send(reply, await signin.callback(origin, request.url, request.headers.cookie));
  });

  app.get(SIGNIN_PATHS.session, PAGE, async (request, reply) => {
    reply.header("cache-control", "no-store");
    const found = await signin.sessionOf(request.headers.cookie);
    if (found.state !== "ok") {
      if (found.state === "refused") reply.header("set-cookie", signin.clearSession());
      return { signedIn: false, signIn: SIGNIN_PATHS.login };
    }
    const { principal, csrfToken, expiresAt } = found.session;
    return {
      signedIn: true,
      principal: {
        name: principal.name,
        role: principal.role,
        ...(principal.displayName === undefined ? {} : { displayName: principal.displayName }),
        groups: principal.groups ?? [],
      },
      csrfToken,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  });

  app.post(SIGNIN_PATHS.logout, PAGE, async (request, reply) => {
    reply.header("cache-control", "no-store");
    const found = await signin.sessionOf(request.headers.cookie);
    if (found.state === "ok") {
      const origin = originOf(request.headers.host);
      if (origin === undefined) return noOrigin(reply);
      const checked = checkCookieRequest(
        {
          method: request.method,
          origin: request.headers.origin,
          csrfToken: headerOf(request.headers[CSRF_HEADER]),
        },
        { origin, csrfToken: found.session.csrfToken },
      );
      if (!checked.ok) return refuse(reply, HttpRefusal.forbidden.status, checked.message);
      signin.signOut(found.session);
    }
    return reply.code(204).header("set-cookie", signin.clearSession()).send();
  });
}

function send(reply: FastifyReply, answer: SignInAnswer): FastifyReply {
  reply.header("cache-control", "no-store");
  if (answer.cookies.length > 0) reply.header("set-cookie", answer.cookies);
  if (answer.kind === "redirect") return reply.redirect(answer.location, 302);
  return refuse(reply, answer.status, answer.message);
}

function refuse(reply: FastifyReply, status: number, message: string): FastifyReply {
  const code =
    status === HTTP_STATUS_BY_CODE.server_unavailable
      ? "server_unavailable"
      : status === HttpRefusal.forbidden.status
        ? HttpRefusal.forbidden.code
        : "bad_request";
  if (code === "server_unavailable") reply.header("retry-after", "5");
  return reply.code(status).send({ error: { code, message, retryable: RETRYABLE_BY_DEFAULT[code] } });
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
