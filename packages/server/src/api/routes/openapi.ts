/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of this API. Public, like
 * `/health`: it describes routes, not data.
 *
 * @module
 */
import { openApiDocument } from '../openapi/openapi-document.js';
import type { Reply } from '../router.js';

/** The document handler (the document is built once). */
export function openApi(): () => Reply {
  const body = openApiDocument();
  return () => ({ status: 200, body });
}
