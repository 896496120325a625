/**
 * What a node under test offers, read from its own OpenAPI document, so
 * suites check a feature when the node has its route and check the clear
 * "not supported yet" answer when it does not.
 *
 * @module
 */

/** Whether the node documents a route (`POST /sandboxes/{id}/fork`) in its OpenAPI document. */
export async function nodeHasRoute(url: string, route: string): Promise<boolean> {
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as {
    paths: Record<string, object>;
  };
  const [method = '', path = ''] = route.split(' ');
  return Object.hasOwn(doc.paths[path] ?? {}, method.toLowerCase());
}
