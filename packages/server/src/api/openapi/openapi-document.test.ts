import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiContext } from '../api-context.js';
import { routeTable } from '../route-table.js';
import { openApiDocument } from './openapi-document.js';

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operations(doc: Json): { key: string; path: string; op: Json; pathItem: Json }[] {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const m of METHODS) {
      const op = item[m] as Json | undefined;
      if (op !== undefined)
        out.push({ key: `${m.toUpperCase()} ${path}`, path, op, pathItem: item });
    }
  }
  return out;
}

function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

// Route handlers are built but never called here.
const routes = routeTable({} as ApiContext);

describe('the OpenAPI document', () => {
  const doc = openApiDocument();

  it('documents every route of the route table and nothing else', () => {
    const fromRoutes = routes.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`).sort();
    const fromDoc = operations(doc)
      .map((o) => o.key)
      .sort();
    const missing = fromRoutes.filter((k) => !fromDoc.includes(k));
    const extra = fromDoc.filter((k) => !fromRoutes.includes(k));
    assert.deepEqual(
      missing,
      [],
      `routes without an entry in src/api/openapi/ (add one for each): ${missing.join(', ')}`,
    );
    assert.deepEqual(extra, [], `documented paths with no route: ${extra.join(', ')}`);
  });

  it('marks exactly the public routes as needing no API key', () => {
    const publicRoutes = routes
      .filter((r) => r.public === true)
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    const open = operations(doc)
      .filter((o) => Array.isArray(o.op.security) && o.op.security.length === 0)
      .map((o) => o.key)
      .sort();
    assert.deepEqual(open, publicRoutes);
  });

  it('documents the Idempotency-Key header on exactly the idempotent routes', () => {
    const idempotent = routes
      .filter((r) => r.idempotent === true)
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
      .sort();
    const withHeader = operations(doc)
      .filter((o) =>
        ((o.op.parameters as Json[] | undefined) ?? []).some((p) => p.name === 'Idempotency-Key'),
      )
      .map((o) => o.key)
      .sort();
    assert.deepEqual(withHeader, idempotent);
  });

  it('is well-formed: unique operation ids, declared path parameters, resolvable refs, a 2xx each', () => {
    assert.equal(doc.openapi, '3.1.0');
    const ids = operations(doc).map((o) => o.op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    for (const { key, path, op, pathItem } of operations(doc)) {
      assert.equal(typeof op.operationId, 'string', `${key} has an operationId`);
      const params = [
        ...((pathItem.parameters as Json[]) ?? []),
        ...((op.parameters as Json[]) ?? []),
      ];
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        assert.ok(
          params.some((p) => p.in === 'path' && p.name === name && p.required === true),
          `${key} declares its path parameter ${name}`,
        );
      }
      const statuses = Object.keys(op.responses as Json);
      assert.ok(
        statuses.some((s) => /^2\d\d$/.test(s)),
        `${key} has a success response`,
      );
    }
    for (const r of refs(doc)) {
      const target = r
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((node, part) => (node as Json | undefined)?.[part], doc);
      assert.ok(target !== undefined, `${r} resolves`);
    }
  });

  it('is plain JSON and a fresh copy each time', () => {
    const a = openApiDocument();
    assert.deepEqual(JSON.parse(JSON.stringify(a)), a);
    (a.paths as Json)['/x'] = {};
    assert.equal((openApiDocument().paths as Json)['/x'], undefined);
  });
});
