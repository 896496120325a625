/**
 * What a template build does, validated: its base (an image or a
 * template), its steps, and the process it starts. Built from E2B's
 * `TemplateBuildStartV2` body (`fromImage`/`fromTemplate`, `steps[]` of
 * `{type, args, filesHash, force}`, `startCmd`, `readyCmd`) or from a
 * Dockerfile (`dockerfile.ts`).
 *
 * Step types: RUN `[command, user?]`, ENV `[k, v, k, v…]`, ARG (as ENV, or
 * `[name]` / `[name=value]`; build-time only), WORKDIR `[path]`, USER
 * `[user]`, COPY `[src, dest, user?, mode?]` with `filesHash` (files
 * uploaded through the files-hash flow) or from a build context; EXPOSE,
 * VOLUME, LABEL are recorded only. `force` and step caching are ignored:
 * every build runs every step.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Where a COPY step's files come from. */
export type CopySource =
  { readonly kind: 'hash'; readonly hash: string } | { readonly kind: 'context' };

/** One build step. */
export type BuildStep =
  | { readonly kind: 'RUN'; readonly command: string; readonly user?: string | undefined }
  | { readonly kind: 'ENV'; readonly vars: readonly (readonly [string, string])[] }
  | { readonly kind: 'ARG'; readonly vars: readonly (readonly [string, string | undefined])[] }
  | { readonly kind: 'WORKDIR'; readonly path: string }
  | { readonly kind: 'USER'; readonly user: string }
  | {
      readonly kind: 'COPY';
      readonly src: string;
      readonly dest: string;
      readonly user?: string | undefined;
      readonly mode?: number | undefined;
      readonly source: CopySource;
    }
  | { readonly kind: 'META'; readonly type: string; readonly args: readonly string[] };

/** A whole build. */
export interface BuildSpec {
  readonly from: { readonly image: string } | { readonly template: string };
  readonly steps: readonly BuildStep[];
  readonly startCmd?: string | undefined;
  readonly readyCmd?: string | undefined;
}

type Obj = Readonly<Record<string, unknown>>;

function invalid(index: number | undefined, why: string): AenvError {
  const where = index === undefined ? '' : `step ${index + 1}: `;
  return new AenvError('BUILD_STEP_INVALID', `${where}${why}`, {
    fields: index === undefined ? {} : { step: index + 1 },
  });
}

function strings(v: unknown, i: number): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((a) => typeof a === 'string'))
    throw invalid(i, 'args must be strings');
  return v;
}

function pairs(args: readonly string[], i: number): [string, string][] {
  if (args.length === 1 && args[0]?.includes('=') === true) {
    const a = args[0];
    return [[a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]];
  }
  if (args.length === 0 || args.length % 2 !== 0) throw invalid(i, 'expects name, value pairs');
  const out: [string, string][] = [];
  for (let k = 0; k < args.length; k += 2) out.push([args[k] as string, args[k + 1] as string]);
  for (const [name] of out)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw invalid(i, `'${name}' is not a variable name`);
  return out;
}

/** Parses one E2B `TemplateStep`. */
export function parseStep(raw: unknown, i: number): BuildStep {
  if (typeof raw !== 'object' || raw === null) throw invalid(i, 'not an object');
  const o = raw as Obj;
  const type = typeof o.type === 'string' ? o.type.toUpperCase() : '';
  const parse = STEP_PARSERS[type];
  if (parse === undefined) throw invalid(i, `step type '${String(o.type)}' is not supported`);
  return parse(o, strings(o.args, i), i, type);
}

/** The first argument, required. */
function first(args: readonly string[], i: number, what: string): string {
  const a = args[0];
  if (a === undefined || a.trim() === '') throw invalid(i, what);
  return a;
}

type StepParser = (o: Obj, args: readonly string[], i: number, type: string) => BuildStep;

const STEP_PARSERS: Readonly<Record<string, StepParser>> = {
  RUN: (_o, args, i) => ({
    kind: 'RUN',
    command: first(args, i, 'RUN needs a command'),
    user: args[1] === undefined || args[1] === '' ? undefined : args[1],
  }),
  ENV: (_o, args, i) => ({ kind: 'ENV', vars: pairs(args, i) }),
  ARG: (_o, args, i) =>
    args.length === 1 && !first(args, i, 'ARG needs a name').includes('=')
      ? { kind: 'ARG', vars: [[first(args, i, ''), undefined]] }
      : { kind: 'ARG', vars: pairs(args, i) },
  WORKDIR: (_o, args, i) => ({ kind: 'WORKDIR', path: first(args, i, 'WORKDIR needs a path') }),
  USER: (_o, args, i) => ({ kind: 'USER', user: first(args, i, 'USER needs a user') }),
  COPY: (o, args, i) => parseCopy(o, args, i),
  ADD: (o, args, i) => parseCopy(o, args, i),
  EXPOSE: (_o, args, _i, type) => ({ kind: 'META', type, args }),
  VOLUME: (_o, args, _i, type) => ({ kind: 'META', type, args }),
  LABEL: (_o, args, _i, type) => ({ kind: 'META', type, args }),
};

function parseCopy(o: Obj, args: readonly string[], i: number): BuildStep {
  const [src, dest, user, mode] = args;
  if (src === undefined || src === '' || dest === undefined || dest === '')
    throw invalid(i, 'COPY needs a source and a destination');
  if (/^[a-z]+:\/\//i.test(src)) throw invalid(i, 'COPY/ADD from URLs is not supported');
  if (typeof o.filesHash !== 'string' || !/^[A-Za-z0-9]{16,128}$/.test(o.filesHash)) {
    throw invalid(i, 'COPY needs the filesHash of its uploaded files');
  }
  let parsedMode: number | undefined;
  if (mode !== undefined && mode !== '') {
    if (!/^[0-7]{3,4}$/.test(mode)) throw invalid(i, `mode '${mode}' is not octal`);
    parsedMode = parseInt(mode, 8);
  }
  return {
    kind: 'COPY',
    src,
    dest,
    user: user === undefined || user === '' ? undefined : user,
    mode: parsedMode,
    source: { kind: 'hash', hash: o.filesHash },
  };
}

/**
 * Parses an E2B `TemplateBuildStartV2` body.
 * @throws {AenvError} `BUILD_STEP_INVALID`.
 */
export function parseBuildSpec(body: Obj): BuildSpec {
  const image =
    typeof body.fromImage === 'string' && body.fromImage !== '' ? body.fromImage : undefined;
  const template =
    typeof body.fromTemplate === 'string' && body.fromTemplate !== ''
      ? body.fromTemplate
      : undefined;
  if ((image === undefined) === (template === undefined))
    throw invalid(undefined, 'give exactly one of fromImage and fromTemplate');
  if (body.fromImageRegistry !== undefined && body.fromImageRegistry !== null) {
    const reg = body.fromImageRegistry as Obj;
    if (reg.type !== 'registry') {
      throw new AenvError(
        'NOT_SUPPORTED',
        `fromImageRegistry of type '${String(reg.type)}' is not supported; use the node's Docker config`,
      );
    }
  }
  const rawSteps = body.steps ?? [];
  if (!Array.isArray(rawSteps)) throw invalid(undefined, 'steps must be an array');
  const opt = (k: string): string | undefined =>
    typeof body[k] === 'string' && body[k] !== '' ? body[k] : undefined;
  return {
    from: image !== undefined ? { image } : { template: template as string },
    steps: rawSteps.map((s: unknown, i: number) => parseStep(s, i)),
    startCmd: opt('startCmd'),
    readyCmd: opt('readyCmd'),
  };
}

/**
 * Expands `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:+alternative}`
 * as Dockerfiles do; `\$` is a literal dollar; unknown names are empty.
 */
export function expandVars(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(
    /\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (m, braced, op, word, bare) => {
      if (m === '\\$') return '$';
      const name = (braced ?? bare) as string;
      const value = vars[name];
      if (op === ':-') return value === undefined || value === '' ? (word as string) : value;
      if (op === ':+') return value === undefined || value === '' ? '' : (word as string);
      return value ?? '';
    },
  );
}

/** A step as one log line (`RUN apt-get install -y curl`). */
export function describeStep(step: BuildStep): string {
  switch (step.kind) {
    case 'RUN':
      return `RUN ${step.command}${step.user === undefined ? '' : ` (as ${step.user})`}`;
    case 'ENV':
    case 'ARG':
      return `${step.kind} ${step.vars.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join(' ')}`;
    case 'WORKDIR':
      return `WORKDIR ${step.path}`;
    case 'USER':
      return `USER ${step.user}`;
    case 'COPY':
      return `COPY ${step.src} ${step.dest}`;
    case 'META':
      return `${step.type} ${step.args.join(' ')}`;
  }
}
