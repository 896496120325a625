/**
 * Serves the prebuilt dashboard (`ui-dist/`, produced by `npm run build`
 * with Vite) under `/ui/`. `index.html` is the app shell for every path
 * that is not a file (the app routes by `#` fragment, so that is only
 * `/ui` and `/ui/`); it holds no data, so it is served with or without a
 * session: the app asks `/ui/session` and shows the login page on 401.
 *
 * Hashed files under `assets/` are immutable and cached for a year; the
 * shell is never cached. Paths are resolved inside the assets directory
 * only (no `..`, no absolute paths, no dotfiles). Every answer carries a
 * strict Content-Security-Policy: scripts and connections to this origin
 * only.
 *
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AenvError } from '@aenv/shared';
import { SECURITY_HEADERS } from '../http/http-io.js';

/** Where `npm run build` puts the dashboard: `packages/ui/ui-dist`. */
export const UI_DIST_DIR = fileURLToPath(new URL('../../../ui-dist/', import.meta.url));

/** The policy of every dashboard page: nothing but this origin (xterm.js sets inline styles). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** The prebuilt dashboard files of one directory. */
export class StaticAssets {
  readonly dir: string;
  /** Immutable hashed files, kept once read (the whole app is a few hundred KiB). */
  readonly #cache = new Map<string, Buffer>();

  constructor(dir: string = UI_DIST_DIR) {
    this.dir = dir;
  }

  /**
   * Answers `GET`/`HEAD` of `rel` (the path below `/ui/`, without a leading
   * slash; `''` is the shell).
   * @throws {AenvError} `UI_NOT_BUILT` when the directory has no `index.html`;
   *   `API_ROUTE_NOT_FOUND` for a missing file under `assets/`.
   */
  async serve(req: IncomingMessage, res: ServerResponse, rel: string): Promise<void> {
    const file = this.#resolve(rel);
    const isAsset = file !== undefined && (await isFile(join(this.dir, file)));
    if (!isAsset && rel.startsWith('assets/')) {
      throw new AenvError('API_ROUTE_NOT_FOUND', `no dashboard file ${rel}`);
    }
    const name = isAsset ? file : 'index.html';
    const body = await this.#read(name, isAsset && name.startsWith('assets/'));
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
      'content-length': body.length,
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'cache-control': name.startsWith('assets/')
        ? 'public, max-age=31536000, immutable'
        : 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** Whether the dashboard was built into the directory. */
  async available(): Promise<boolean> {
    return isFile(join(this.dir, 'index.html'));
  }

  /** A safe relative file name inside the directory, or undefined. */
  #resolve(rel: string): string | undefined {
    if (rel === '' || rel.includes('\0')) return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      return undefined;
    }
    const clean = normalize(decoded).replace(/^(\.\.(\/|\\|$))+/, '');
    if (clean.startsWith(sep) || clean.split(sep).some((p) => p === '..' || p.startsWith('.'))) {
      return undefined;
    }
    return clean;
  }

  async #read(name: string, immutable: boolean): Promise<Buffer> {
    const hit = this.#cache.get(name);
    if (hit !== undefined) return hit;
    let body: Buffer;
    try {
      body = await readFile(join(this.dir, name));
    } catch (err) {
      throw new AenvError(
        'UI_NOT_BUILT',
        `the dashboard is not built (no ${name} in ${this.dir}); run npm run build`,
        { cause: err },
      );
    }
    if (immutable) this.#cache.set(name, body);
    return body;
  }
}

async function isFile(path: string): Promise<boolean> {
  const s = await stat(path).catch(() => undefined);
  return s?.isFile() ?? false;
}
