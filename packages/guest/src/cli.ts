#!/usr/bin/env node
/**
 * `aenv-guest-artifacts`: prepares the guest artifacts from the command
 * line (a developer tool; the daemon calls `prepareGuestArtifacts`).
 * Progress goes to stderr, the resulting {@link GuestArtifacts} as JSON to
 * stdout.
 *
 * ```
 * aenv-guest-artifacts --cache-dir DIR [--no-base-image]
 *                      [--envd-bundle DIR --envd-version VERSION]
 * ```
 *
 * @module
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareGuestArtifacts } from './prepare-guest-artifacts.js';
import { formatProgress } from './progress.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'cache-dir': { type: 'string' },
      'no-base-image': { type: 'boolean', default: false },
      'envd-bundle': { type: 'string' },
      'envd-version': { type: 'string', default: 'dev' },
    },
  });
  if (values['cache-dir'] === undefined) throw new Error('--cache-dir is required');
  let last = '';
  const result = await prepareGuestArtifacts({
    cacheDir: resolve(values['cache-dir']),
    ...(values['no-base-image'] ? { baseImage: false as const } : {}),
    ...(values['envd-bundle'] === undefined
      ? {}
      : { envd: { dir: resolve(values['envd-bundle']), version: values['envd-version'] } }),
    onProgress: (e) => {
      const line = formatProgress(e);
      // debootstrap is chatty: show a progress line only when its percent changes
      const key = `${e.stage}${e.status}${e.percent}`;
      if (e.status === 'progress' && key === last) return;
      last = key;
      process.stderr.write(`${line}\n`);
    },
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `aenv-guest-artifacts: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exitCode = 1;
});
