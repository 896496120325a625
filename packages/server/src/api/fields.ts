/**
 * Field readers for request bodies and query strings. Each one names the
 * field in its error, so a malformed request gets a 400 that says exactly
 * what was wrong (`API_BODY_INVALID`).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

type Obj = Readonly<Record<string, unknown>>;

function bad(field: string, expected: string, got: unknown): AenvError {
  const shown = got === undefined ? 'nothing' : JSON.stringify(got);
  return new AenvError('API_BODY_INVALID', `field '${field}': expected ${expected}, got ${shown}`, {
    fields: { field },
  });
}

/** A required non-empty string. */
export function requiredString(body: Obj, field: string): string {
  const v = body[field];
  if (typeof v !== 'string' || v === '') throw bad(field, 'a non-empty string', v);
  return v;
}

/** An optional string (`undefined` when absent or null). */
export function optionalString(body: Obj, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw bad(field, 'a string', v);
  return v;
}

/** An optional boolean. */
export function optionalBoolean(body: Obj, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(field, 'a boolean', v);
  return v;
}

/** An optional integer within `[min, max]`. */
export function optionalInteger(
  body: Obj,
  field: string,
  min: number,
  max: number,
): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw bad(field, `an integer in [${min}, ${max}]`, v);
  }
  return v;
}

/** A required integer within `[min, max]`. */
export function requiredInteger(body: Obj, field: string, min: number, max: number): number {
  const v = optionalInteger(body, field, min, max);
  if (v === undefined) throw bad(field, `an integer in [${min}, ${max}]`, body[field]);
  return v;
}

/** An optional `{string: string}` map. */
export function optionalStringMap(body: Obj, field: string): Record<string, string> | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(field, 'an object of strings', v);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Obj)) {
    if (typeof val !== 'string') throw bad(`${field}.${k}`, 'a string', val);
    out[k] = val;
  }
  return out;
}

/** An optional nested object (passed on to a more specific parser). */
export function optionalObject(body: Obj, field: string): Obj | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(field, 'an object', v);
  return v as Obj;
}

/** An integer query parameter within `[min, max]`, or the default. */
export function queryInteger(
  query: URLSearchParams,
  name: string,
  def: number,
  range: { min: number; max: number },
): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < range.min || n > range.max) {
    throw new AenvError(
      'API_BODY_INVALID',
      `query parameter '${name}': expected an integer in [${range.min}, ${range.max}], got ${JSON.stringify(raw)}`,
      { fields: { field: name } },
    );
  }
  return n;
}
