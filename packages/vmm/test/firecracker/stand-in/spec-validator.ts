/**
 * Firecracker's published API spec (swagger 2.0 YAML) as a request
 * validator, for the stand-in API server (test code, not a product).
 *
 * It matches a method and path to an operation (path templates such as
 * `/drives/{drive_id}`), and validates the JSON body against the
 * operation's body schema: `$ref`s, types (`integer` means a whole number),
 * `required`, `enum`, `minimum`/`maximum`, array `items`, nested objects.
 * Unknown fields are rejected unless the schema says
 * `additionalProperties: true`: Firecracker's request types use serde's
 * `deny_unknown_fields`, so a misspelt field fails there too. Responses
 * the stand-in produces are validated the same way (a stand-in that
 * drifted from the spec is a test bug).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The spec fixture in this repository. */
export const SPEC_PATH = fileURLToPath(
  new URL('../../../../test/firecracker/fixtures/firecracker-api.yaml', import.meta.url),
);

/** A (subset of a) swagger 2.0 schema. */
export interface Schema {
  readonly $ref?: string;
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: boolean | Schema;
  readonly items?: Schema;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
}

interface Parameter {
  readonly name: string;
  readonly in: 'body' | 'path' | 'query';
  readonly required?: boolean;
  readonly schema?: Schema;
}

interface OperationSpec {
  readonly operationId: string;
  readonly parameters?: readonly Parameter[];
  readonly responses: Readonly<Record<string, { readonly schema?: Schema }>>;
}

/** A request matched to its operation. */
export interface MatchedOperation {
  readonly operationId: string;
  readonly method: string;
  readonly template: string;
  readonly pathParams: Readonly<Record<string, string>>;
  readonly bodySchema: Schema | undefined;
  readonly bodyRequired: boolean;
  readonly responses: OperationSpec['responses'];
}

interface SpecDocument {
  readonly info: { readonly version: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, OperationSpec>>>>;
  readonly definitions: Readonly<Record<string, Schema>>;
}

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;

/** See the module comment. */
export class SpecValidator {
  readonly version: string;
  readonly #doc: SpecDocument;
  readonly #routes: { re: RegExp; names: string[]; template: string }[];

  constructor(path = SPEC_PATH) {
    this.#doc = parse(readFileSync(path, 'utf8')) as SpecDocument;
    this.version = this.#doc.info.version;
    this.#routes = Object.keys(this.#doc.paths).map((template) => {
      const names: string[] = [];
      const source = template.replace(/\{(\w+)\}/g, (_, n: string) => {
        names.push(n);
        return '([^/]+)';
      });
      return { re: new RegExp(`^${source}$`), names, template };
    });
  }

  /** Every operation of the spec: `[operationId, method, path template]`. */
  operations(): [string, string, string][] {
    const out: [string, string, string][] = [];
    for (const [template, ops] of Object.entries(this.#doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        out.push([op.operationId, method.toUpperCase(), template]);
      }
    }
    return out;
  }

  /** The operation a request names, or undefined (Firecracker answers 400). */
  match(method: string, path: string): MatchedOperation | undefined {
    for (const route of this.#routes) {
      const m = route.re.exec(path);
      if (m === null) continue;
      const op = this.#doc.paths[route.template]?.[method.toLowerCase()];
      if (op === undefined) return undefined;
      const pathParams: Record<string, string> = {};
      route.names.forEach((n, i) => (pathParams[n] = decodeURIComponent(m[i + 1] as string)));
      const body = op.parameters?.find((p) => p.in === 'body');
      return {
        operationId: op.operationId,
        method: method.toUpperCase(),
        template: route.template,
        pathParams,
        bodySchema: body?.schema,
        bodyRequired: body?.required === true,
        responses: op.responses,
      };
    }
    return undefined;
  }

  /** Errors of `value` against `schema` (empty when valid). */
  validate(schema: Schema, value: unknown, where = 'body'): string[] {
    const s = this.#resolve(schema);
    if (s.enum !== undefined && !s.enum.includes(value)) {
      return [
        `${where}: ${JSON.stringify(value)} is not one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      ];
    }
    switch (s.type) {
      case 'object':
        return this.#object(s, value, where);
      case 'array':
        if (!Array.isArray(value)) return [`${where}: expected array, got ${typeOf(value)}`];
        return value.flatMap((v, i) =>
          s.items === undefined ? [] : this.validate(s.items, v, `${where}[${i}]`),
        );
      case 'integer':
      case 'number':
        return this.#number(s, value, where);
      case 'string':
      case 'boolean':
        return typeOf(value) === s.type
          ? []
          : [`${where}: expected ${s.type}, got ${typeOf(value)}`];
      case undefined:
        return s.properties === undefined ? [] : this.#object(s, value, where);
    }
  }

  /** The schema a response with `status` must follow, if the spec gives one. */
  responseSchema(op: MatchedOperation, status: number): Schema | undefined {
    return (op.responses[String(status)] ?? op.responses.default)?.schema;
  }

  #resolve(schema: Schema): Schema {
    let s = schema;
    for (let depth = 0; s.$ref !== undefined; depth++) {
      const name = s.$ref.replace('#/definitions/', '');
      const next = this.#doc.definitions[name];
      if (next === undefined || depth > 16) throw new Error(`spec: unresolvable $ref ${s.$ref}`);
      s = next;
    }
    return s;
  }

  #object(s: Schema, value: unknown, where: string): string[] {
    if (typeOf(value) !== 'object') return [`${where}: expected object, got ${typeOf(value)}`];
    const obj = value as Record<string, unknown>;
    const errors: string[] = [];
    for (const name of s.required ?? []) {
      if (!(name in obj)) errors.push(`${where}: missing required field ${name}`);
    }
    for (const [key, v] of Object.entries(obj)) {
      const prop = s.properties?.[key];
      if (prop !== undefined) errors.push(...this.validate(prop, v, `${where}.${key}`));
      else if (s.additionalProperties === true) continue;
      else if (typeof s.additionalProperties === 'object')
        errors.push(...this.validate(s.additionalProperties, v, `${where}.${key}`));
      else errors.push(`${where}: unknown field ${key}`);
    }
    return errors;
  }

  #number(s: Schema, value: unknown, where: string): string[] {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return [`${where}: expected ${s.type ?? 'number'}, got ${typeOf(value)}`];
    }
    if (s.type === 'integer' && !Number.isInteger(value))
      return [`${where}: ${value} is not an integer`];
    if (s.minimum !== undefined && value < s.minimum)
      return [`${where}: ${value} is below ${s.minimum}`];
    if (s.maximum !== undefined && value > s.maximum)
      return [`${where}: ${value} is above ${s.maximum}`];
    return [];
  }
}
