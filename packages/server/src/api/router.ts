/**
 * The route table of the node API and the path matcher.
 *
 * Route handlers parse and validate their input and call the orchestrator;
 * they never touch VMs. A handler returns a {@link Reply}; the HTTP server
 * writes it. `public` routes need no API key; `admin` routes need a key
 * whose role is admin.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Principal } from './api-keys.js';

/** What a handler gets. */
export interface RouteContext {
  readonly req: IncomingMessage;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Who sent it; absent only on public routes. */
  readonly principal?: Principal | undefined;
}

/** What a handler answers. */
export interface Reply {
  readonly status: number;
  /** A JSON body. */
  readonly body?: unknown;
  /** A text body (with its own content-type header), instead of JSON. */
  readonly text?: string;
  /**
   * A streamed body (with its own content-type header), written piece by
   * piece as it is produced: long operations' progress lines.
   */
  readonly stream?: AsyncIterable<string>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One route. */
export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Path pattern: literal segments and `:name` parameters. */
  readonly path: string;
  readonly handler: (ctx: RouteContext) => Promise<Reply> | Reply;
  /** Reachable without an API key. */
  readonly public?: boolean;
  /** Needs a key whose role is `admin` (`/admin/...`). */
  readonly admin?: boolean;
  /** Honours `Idempotency-Key` (creates and forks). */
  readonly idempotent?: boolean;
}

/** A matched route with its path parameters. */
export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, string>;
}

/** Finds the route for a method and path, or `undefined`. */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): RouteMatch | undefined {
  const segments = splitPath(path);
  for (const route of routes) {
    if (route.method !== method) continue;
    const params = matchSegments(splitPath(route.path), segments);
    if (params !== undefined) return { route, params };
  }
  return undefined;
}

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const a = actual[i] as string;
    if (p.startsWith(':')) {
      let value: string;
      try {
        value = decodeURIComponent(a);
      } catch {
        return undefined;
      }
      params[p.slice(1)] = value;
    } else if (p !== a) {
      return undefined;
    }
  }
  return params;
}
