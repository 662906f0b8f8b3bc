import type { FastifyRequest } from "fastify";
import { OpsHttpError } from "../ops-http-error.ts";
import { CONSOLE_HEADER } from "./api-contract.ts";

export { CONSOLE_HEADER };

/**
 * Refuses a state-changing request another site could make a browser send:
 * a browser holding the basic-auth password sends it to this server whatever
 * page asks. A page elsewhere cannot set a custom header on a cross-origin
 * request without this server's consent (CORS preflight, never granted), and
 * a form cannot set one at all; an Origin or Sec-Fetch-Site saying another
 * site is refused too. Scripts (curl) add the header.
 */
export function requireSameOrigin(request: FastifyRequest): void {
  const refuse = (why: string) =>
    new OpsHttpError(
      403,
      "ops_cross_site",
      `${why}: the console's API takes requests with the header ${CONSOLE_HEADER.name}: ${CONSOLE_HEADER.value} from its own origin only`,
    );
  if (request.headers[CONSOLE_HEADER.name] !== CONSOLE_HEADER.value)
    throw refuse(`no ${CONSOLE_HEADER.name} header`);
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") throw refuse(`a ${site} request`);
  const origin = request.headers.origin;
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {}
    if (host !== request.headers.host) throw refuse("a request from another origin");
  }
}
