import type { FastifyInstance } from "fastify";

const CHANGES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A browser that holds the ops password sends it with any request a page
 * makes, from whatever site: a page elsewhere could run jobs, add or remove
 * them on the dashboard. Every request that changes something is refused when
 * the browser says it comes from another site (Sec-Fetch-Site) or another
 * origin (Origin). The dashboard's own requests are same-origin; scripts such
 * as curl send neither header and pass.
 */
export function registerCrossSiteGuard(app: FastifyInstance): void {
  app.addHook("onRequest", async (request, reply) => {
    if (!CHANGES.has(request.method)) return;
    const site = request.headers["sec-fetch-site"];
    let why: string | undefined;
    if (site !== undefined && site !== "same-origin" && site !== "none") why = `a ${site} request`;
    const origin = request.headers.origin;
    if (!why && origin !== undefined) {
      let host: string | undefined;
      try {
        host = new URL(origin).host;
      } catch {}
      if (host !== request.headers.host) why = "a request from another origin";
    }
    if (!why) return;
    return reply.code(403).send({
      error: "ops_cross_site",
      message: `${why}: the ops server takes requests that change something only from its own pages or from scripts`,
    });
  });
}
