/**
 * A Dockerfile as a template build (`aenv build`, `POST /templates/build`):
 * one stage; `FROM` is the image; RUN, ENV, ARG, WORKDIR, USER become
 * steps; COPY and ADD of local paths copy from the build context sent with
 * the request (`--chown` and `--chmod` kept; URLs, archives' extraction and
 * `--from` are refused); EXPOSE, VOLUME, LABEL are recorded; ENTRYPOINT
 * (followed by CMD) or CMD becomes the start command, so every sandbox of
 * the template starts with it running. SHELL, HEALTHCHECK, STOPSIGNAL and
 * ONBUILD are ignored. Line continuations (`\`), comments and the JSON
 * (exec) form are understood; heredocs are not.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { BuildSpec, BuildStep } from './build-spec.js';

function invalid(line: number, why: string): AenvError {
  return new AenvError('BUILD_STEP_INVALID', `Dockerfile line ${line}: ${why}`, {
    fields: { line },
  });
}

interface Instruction {
  readonly line: number;
  readonly keyword: string;
  readonly rest: string;
}

/** Splits a Dockerfile into instructions (continuations joined, comments dropped). */
export function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i] ?? '';
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      i++;
      const next = lines[i] ?? '';
      if (/^\s*#/.test(next)) continue;
      line = `${line.replace(/\s*\\\s*$/, '')} ${next.trim()}`;
    }
    const m = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(line);
    if (m === null) throw invalid(start, `cannot read '${line.trim()}'`);
    out.push({
      line: start,
      keyword: (m[1] as string).toUpperCase(),
      rest: (m[2] as string).trim(),
    });
  }
  return out;
}

/** The JSON (exec) form's array, or undefined for the shell form. */
function execForm(rest: string): string[] | undefined {
  if (!rest.startsWith('[')) return undefined;
  try {
    const v: unknown = JSON.parse(rest);
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  } catch {
    // Not JSON: the shell form, as Docker treats it.
  }
  return undefined;
}

/** Quotes a word for `sh -c`. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function commandOf(rest: string): string {
  const exec = execForm(rest);
  return exec === undefined ? rest : exec.map(shellQuote).join(' ');
}

/** Splits `k=v k2="v 2"` (or the legacy `k v`) into pairs. */
function keyValues(rest: string, line: number): [string, string][] {
  const words = [...rest.matchAll(/(?:[^\s"']+|"(?:[^"\\]|\\.)*"|'[^']*')+/g)].map((m) => m[0]);
  const unquote = (s: string): string =>
    s.replace(
      /"((?:[^"\\]|\\.)*)"|'([^']*)'/g,
      (_, d: string | undefined, q: string | undefined) =>
        d !== undefined ? d.replace(/\\(.)/g, '$1') : (q ?? ''),
    );
  if (words.length > 0 && !(words[0] as string).includes('=')) {
    const name = words[0] as string;
    return [[name, unquote(rest.slice(name.length).trim())]];
  }
  return words.map((w) => {
    const eq = w.indexOf('=');
    if (eq <= 0) throw invalid(line, `'${w}' is not name=value`);
    return [w.slice(0, eq), unquote(w.slice(eq + 1))];
  });
}

function copyStep(rest: string, line: number, keyword: string): BuildStep[] {
  const words = execForm(rest) ?? rest.split(/\s+/).filter((w) => w !== '');
  let user: string | undefined;
  let mode: number | undefined;
  const paths: string[] = [];
  for (const w of words) {
    if (w.startsWith('--chown=')) user = w.slice(8);
    else if (w.startsWith('--chmod=')) {
      if (!/^[0-7]{3,4}$/.test(w.slice(8))) throw invalid(line, `--chmod must be octal`);
      mode = parseInt(w.slice(8), 8);
    } else if (w.startsWith('--'))
      throw invalid(line, `${keyword} ${w.split('=')[0] ?? w} is not supported`);
    else paths.push(w);
  }
  if (paths.length < 2) throw invalid(line, `${keyword} needs a source and a destination`);
  const dest = paths.pop() as string;
  if (paths.length > 1 && !dest.endsWith('/'))
    throw invalid(line, `${keyword} with several sources needs a destination ending in /`);
  return paths.map((src) => {
    if (/^[a-z]+:\/\//i.test(src)) throw invalid(line, `${keyword} from URLs is not supported`);
    return { kind: 'COPY', src, dest, user, mode, source: { kind: 'context' } } satisfies BuildStep;
  });
}

/** What a Dockerfile has said so far. */
interface Parsed {
  from: string | undefined;
  readonly steps: BuildStep[];
  entrypoint: string | undefined;
  cmd: string | undefined;
}

type Handler = (p: Parsed, rest: string, line: number, keyword: string) => void;

const ignore: Handler = () => undefined;
const meta: Handler = (p, rest, _line, keyword) =>
  p.steps.push({ kind: 'META', type: keyword, args: [rest] });
const copy: Handler = (p, rest, line, keyword) => p.steps.push(...copyStep(rest, line, keyword));

const HANDLERS: Readonly<Record<string, Handler>> = {
  RUN: (p, rest) => p.steps.push({ kind: 'RUN', command: commandOf(rest) }),
  ENV: (p, rest, line) => p.steps.push({ kind: 'ENV', vars: keyValues(rest, line) }),
  ARG: (p, rest) => {
    const eq = rest.indexOf('=');
    p.steps.push({
      kind: 'ARG',
      vars: [eq < 0 ? [rest, undefined] : [rest.slice(0, eq), rest.slice(eq + 1)]],
    });
  },
  WORKDIR: (p, rest) => p.steps.push({ kind: 'WORKDIR', path: rest }),
  USER: (p, rest) => p.steps.push({ kind: 'USER', user: rest }),
  COPY: copy,
  ADD: copy,
  EXPOSE: meta,
  VOLUME: meta,
  LABEL: meta,
  ENTRYPOINT: (p, rest) => void (p.entrypoint = commandOf(rest)),
  CMD: (p, rest) => void (p.cmd = commandOf(rest)),
  SHELL: ignore,
  HEALTHCHECK: ignore,
  STOPSIGNAL: ignore,
  ONBUILD: ignore,
  MAINTAINER: ignore,
};

/**
 * Parses a Dockerfile into a build.
 * @throws {AenvError} `BUILD_STEP_INVALID` naming the line.
 */
export function parseDockerfile(text: string): BuildSpec {
  const p: Parsed = { from: undefined, steps: [], entrypoint: undefined, cmd: undefined };
  for (const { line, keyword, rest } of instructions(text)) {
    if (keyword === 'FROM') {
      if (p.from !== undefined) throw invalid(line, 'multi-stage builds are not supported');
      p.from = rest.split(/\s+/)[0];
      continue;
    }
    if (p.from === undefined && keyword !== 'ARG') throw invalid(line, `${keyword} before FROM`);
    const handle = HANDLERS[keyword];
    if (handle === undefined) throw invalid(line, `unknown instruction ${keyword}`);
    handle(p, rest, line, keyword);
  }
  if (p.from === undefined || p.from === '') throw invalid(1, 'no FROM');
  const startCmd =
    p.entrypoint !== undefined
      ? [p.entrypoint, p.cmd].filter((c) => c !== undefined).join(' ')
      : p.cmd;
  return { from: { image: p.from }, steps: p.steps, startCmd };
}
