/**
 * Relaying a node's buffered answer to the client, optionally with its
 * JSON rewritten (the gateway's `domain` in sandbox answers).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { forwardable } from './http-io.js';
import type { NodeAnswer } from './node-client.js';

/** Writes a node's answer; `json` replaces its body when given. */
export function relayAnswer(res: ServerResponse, answer: NodeAnswer, json?: unknown): void {
  const headers = forwardable(answer.headers, ['content-length']);
  const body = json === undefined ? answer.body : Buffer.from(JSON.stringify(json));
  res.writeHead(answer.status, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

/**
 * A sandbox answer (or an array of `{sandbox}` entries) with `domain` set
 * to the gateway's, when it has one.
 */
export function withDomain(json: unknown, domain: string | null): unknown {
  if (domain === null) return json;
  if (Array.isArray(json)) {
    return json.map((e: unknown) => {
      const entry = e as { sandbox?: Record<string, unknown> };
      return entry.sandbox === undefined ? e : { ...entry, sandbox: { ...entry.sandbox, domain } };
    });
  }
  if (typeof json === 'object' && json !== null && 'sandboxID' in json) return { ...json, domain };
  return json;
}
