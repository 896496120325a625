/**
 * `aenv auth login|status|logout`: stores the node URL and API key the
 * other commands use (in the settings file, mode 0600), shows where the
 * current ones come from, and forgets them. `login` checks the pair
 * against the node before storing it.
 *
 * @module
 */
import { AenvClient } from '@aenv/sdk';
import { flag, stringOption } from '../args.js';
import type { CliContext } from '../cli-context.js';
import { CliError, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import {
  readSettings,
  removeSettings,
  resolveConnection,
  writeSettings,
} from '../settings/cli-settings.js';

/** `e2b_1234…cdef`: enough to recognise a key, not to use it. */
export function maskKey(key: string): string {
  return key.length <= 12 ? '****' : `${key.slice(0, 8)}…${key.slice(-4)}`;
}

async function readKeyFromStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve) => {
    ctx.stdin.on('data', (c: Buffer) => chunks.push(c));
    ctx.stdin.on('end', resolve);
    ctx.stdin.resume();
  });
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** `aenv auth login`. */
export const authLoginCommand: CommandSpec = {
  name: 'auth login',
  summary: 'Store the node URL and API key.',
  usage: 'auth login [options]',
  description:
    'Checks that the node at URL accepts KEY, then stores both for the other commands. Without ' +
    '--url the current URL is kept; without a key the current one (e.g. the local node key) is used.',
  remote: false,
  options: [
    { name: 'url', type: 'string', value: 'URL', help: 'the node (or gateway) URL' },
    { name: 'key', type: 'string', value: 'KEY', help: 'the API key' },
    { name: 'key-stdin', type: 'boolean', help: 'read the API key from stdin' },
    {
      name: 'sandbox-url',
      type: 'string',
      value: 'URL',
      help: 'where sandbox traffic goes (default: the URL)',
    },
    { name: 'no-verify', type: 'boolean', help: 'store without asking the node' },
  ],
  examples: [
    'aenv auth login --url http://10.0.0.5:8000 --key e2b_0123456789abcdef0123456789abcdef01234567',
    'ssh node cat /var/lib/aenv/api-key | aenv auth login --url http://node:8000 --key-stdin',
  ],
  async run(ctx, args) {
    const url = stringOption(args, 'url');
    let key = stringOption(args, 'key');
    if (flag(args, 'key-stdin')) {
      if (key !== undefined)
        throw new UsageError('give the key with --key or --key-stdin, not both');
      key = await readKeyFromStdin(ctx);
    }
    const conn = resolveConnection({ url, key }, ctx.env, readSettings(ctx.settingsPath));
    if (conn.key === undefined) throw new UsageError('no API key: pass --key KEY or --key-stdin');
    const sandboxUrl = stringOption(args, 'sandbox-url') ?? conn.url;
    if (!flag(args, 'no-verify')) {
      const client = new AenvClient({ apiUrl: conn.url, apiKey: conn.key, sandboxUrl, env: {} });
      await client.sandboxes.list({ requestTimeoutMs: 15_000 });
    }
    writeSettings(ctx.settingsPath, {
      url: conn.url,
      key: conn.key,
      ...(sandboxUrl === conn.url ? {} : { sandboxUrl }),
    });
    ctx.err(
      `aenv: logged in to ${conn.url} with key ${maskKey(conn.key)}; stored in ${ctx.settingsPath}`,
    );
    return 0;
  },
};

/** `aenv auth status`. */
export const authStatusCommand: CommandSpec = {
  name: 'auth status',
  summary: 'Show which node and key the commands use.',
  usage: 'auth status [options]',
  options: [],
  examples: ['aenv auth status'],
  async run(ctx) {
    const conn = ctx.connection();
    ctx.out(`node:     ${conn.url} (from ${conn.urlSource})`);
    if (conn.sandboxUrl !== conn.url) ctx.out(`sandboxes: ${conn.sandboxUrl}`);
    ctx.out(
      `key:      ${conn.key === undefined ? '(none)' : `${maskKey(conn.key)} (from ${conn.keySource})`}`,
    );
    ctx.out(`settings: ${ctx.settingsPath}`);
    const client = await ctx.client();
    const sandboxes = await client.sandboxes.list({ requestTimeoutMs: 15_000 });
    ctx.out(
      `status:   the node answers (${sandboxes.length} sandbox${sandboxes.length === 1 ? '' : 'es'})`,
    );
    return 0;
  },
};

/** `aenv auth logout`. */
export const authLogoutCommand: CommandSpec = {
  name: 'auth logout',
  summary: 'Forget the stored node URL and key.',
  usage: 'auth logout',
  remote: false,
  options: [],
  examples: ['aenv auth logout'],
  run(ctx) {
    if (!removeSettings(ctx.settingsPath)) {
      throw new CliError(`nothing stored in ${ctx.settingsPath}`);
    }
    ctx.err(`aenv: removed ${ctx.settingsPath}`);
    return Promise.resolve(0);
  },
};
