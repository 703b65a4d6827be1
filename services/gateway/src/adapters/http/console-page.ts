/**
 * The console at `/`: one HTML page with inline script and no build step (its files are in
 * packages/http-guard/pages/, beside the approvals inbox's, with which it shares its script and style). It shows the servers
 * (status, errors, and what each said about itself: title, version, description, website, icon), the catalog with a search box (filtered in the page), live calls from
 * `/v1/events` (begin: in progress; end: status and duration) and the approvals inbox from
 * `/v1/approvals` and `/v1/approvals/events` when this gateway serves them. Streams are read
 * with fetch, so a bearer token (asked for on a 401, kept in sessionStorage) goes in the
 * Authorization header. Everything from the bus is put in the page as text, never as markup.
 */
import { CONSOLE_PAGE, pageHeaders, routeAccess } from "@toolbus/http-guard";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";

export function consolePage(): FastifyPluginAsync {
  const headers = pageHeaders(CONSOLE_PAGE);
  return async (app: FastifyInstance) => {
    app.get("/", routeAccess("page"), (_request, reply) => reply.headers(headers).send(CONSOLE_PAGE));
  };
}
