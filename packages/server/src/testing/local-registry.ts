/**
 * A REAL registry on loopback for image tests: Debian's `docker-registry`
 * (the CNCF Distribution registry) with its storage in a temporary
 * directory, optionally behind auth:
 *
 * - `basic`: an htpasswd file (bcrypt, made with `htpasswd -B`);
 * - `token`: the Docker token flow, with a small token service written here
 *   (it checks Basic credentials and signs RS256 JWTs with a key whose
 *   self-signed certificate is the registry's `rootcertbundle`; the
 *   certificate travels in the token's `x5c` header).
 *
 * Images are pushed with skopeo (`pushImage`). Everything it starts is
 * stopped by `close()`, and its directory removed.
 *
 * @module
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createSign, randomUUID, X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How the registry authenticates. */
export type RegistryAuthMode = 'none' | 'basic' | 'token';

/** A running registry. */
export interface LocalRegistry {
  /** `127.0.0.1:<port>` (the registry part of image references). */
  readonly host: string;
  readonly auth: RegistryAuthMode;
  readonly user: string;
  readonly password: string;
  /** Token requests the token service answered (token mode). */
  readonly tokenRequests: { user: string | undefined; scope: string | null }[];
  close(): Promise<void>;
}

const SERVICE = 'aenv-test-registry';
const ISSUER = 'aenv-test-issuer';

/** Why the registry cannot run here, or undefined. */
export function registryUnavailable(): string | undefined {
  for (const [tool, pkg] of [
    ['docker-registry', 'docker-registry'],
    ['skopeo', 'skopeo'],
    ['umoci', 'umoci'],
    ['htpasswd', 'apache2-utils'],
    ['openssl', 'openssl'],
  ]) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (Debian package ${pkg}; see scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

/** A free loopback port (bound and released: the registry needs a fixed address). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

interface TokenService {
  readonly server: Server;
  readonly url: string;
}

function startTokenService(
  dir: string,
  reg: { user: string; password: string; requests: LocalRegistry['tokenRequests'] },
): Promise<TokenService> {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=aenv-test-token',
      '-keyout',
      join(dir, 'token.key'),
      '-out',
      join(dir, 'token.crt'),
    ],
    { stdio: 'ignore' },
  );
  const key = readFileSync(join(dir, 'token.key'));
  const cert = new X509Certificate(readFileSync(join(dir, 'token.crt')));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://token');
    const auth = req.headers.authorization;
    let user: string | undefined;
    if (auth?.startsWith('Basic ') === true) {
      const [u, ...p] = Buffer.from(auth.slice(6), 'base64').toString().split(':');
      if (u !== reg.user || p.join(':') !== reg.password) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"details":"bad credentials"}');
        return;
      }
      user = u;
    }
    const scope = url.searchParams.get('scope');
    reg.requests.push({ user, scope });
    if (user === undefined) {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end('{"details":"login required"}');
      return;
    }
    const access = (scope ?? '')
      .split(' ')
      .filter((s) => s !== '')
      .map((s) => {
        const [type, name, actions] = s.split(':');
        return { type, name, actions: (actions ?? '').split(',') };
      });
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', x5c: [cert.raw.toString('base64')] };
    const claims = {
      iss: ISSUER,
      sub: user,
      aud: url.searchParams.get('service'),
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomUUID(),
      access,
    };
    const signing = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const signature = createSign('RSA-SHA256').update(signing).sign(key);
    const token = `${signing}.${b64url(signature)}`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token, access_token: token, expires_in: 300 }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token` }),
    ),
  );
}

function configYaml(
  dir: string,
  port: number,
  auth: RegistryAuthMode,
  realm: string | undefined,
): string {
  const lines = [
    'version: 0.1',
    'log:',
    '  level: error',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${join(dir, 'data')}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: 127.0.0.1:${port}`,
  ];
  if (auth === 'basic')
    lines.push(
      'auth:',
      '  htpasswd:',
      '    realm: aenv-test',
      `    path: ${join(dir, 'htpasswd')}`,
    );
  if (auth === 'token') {
    lines.push(
      'auth:',
      '  token:',
      `    realm: ${realm ?? ''}`,
      `    service: ${SERVICE}`,
      `    issuer: ${ISSUER}`,
      `    rootcertbundle: ${join(dir, 'token.crt')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function waitUp(host: string, proc: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`docker-registry exited: ${log()}`);
    const ok = await fetch(`http://${host}/v2/`).then(
      (r) => r.status === 200 || r.status === 401,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`docker-registry did not start: ${log()}`);
}

/** Starts a registry with the given auth on a free loopback port. */
export async function startLocalRegistry(auth: RegistryAuthMode = 'none'): Promise<LocalRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-registry-'));
  mkdirSync(join(dir, 'data'));
  const user = 'aenv';
  const password = `pw-${randomUUID().slice(0, 8)}`;
  const tokenRequests: LocalRegistry['tokenRequests'] = [];
  let token: TokenService | undefined;
  if (auth === 'basic') {
    writeFileSync(join(dir, 'htpasswd'), execFileSync('htpasswd', ['-Bbn', user, password]));
  }
  if (auth === 'token')
    token = await startTokenService(dir, { user, password, requests: tokenRequests });
  const port = await freePort();
  writeFileSync(join(dir, 'config.yml'), configYaml(dir, port, auth, token?.url));
  const proc = spawn('docker-registry', ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const host = `127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    if (proc.exitCode === null) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await gone;
    }
    if (token !== undefined) await new Promise((r) => token?.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUp(host, proc, () => stderr);
  } catch (err) {
    await close();
    throw err;
  }
  return { host, auth, user, password, tokenRequests, close };
}

/**
 * Pushes an OCI layout's image to the registry with skopeo (optionally as
 * Docker v2). Asynchronous: the token service answers from this process.
 */
export async function pushImage(
  reg: LocalRegistry,
  source: string,
  target: string,
  options: { format?: 'oci' | 'v2s2' } = {},
): Promise<void> {
  const args = ['copy', '--quiet', '--dest-tls-verify=false'];
  if (reg.auth !== 'none') args.push('--dest-creds', `${reg.user}:${reg.password}`);
  if (options.format === 'v2s2') args.push('--format', 'v2s2');
  await run('skopeo', [...args, source, `docker://${reg.host}/${target}`]);
}
