/**
 * `aenv debug layer inspect <digest>`: prints a layer's header, a summary of
 * its index and its first extents, read from the blob store the node's
 * configuration names (`storage` section: a directory or an S3 bucket).
 * Only the header and index are fetched, never the data. `--json` prints
 * the inspection as one JSON object instead.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { loadNodeConfig } from '@aenv/server';
import {
  createBlobStore,
  formatLayerInspection,
  inspectLayer,
  isDigest,
  resolveStorageSettings,
} from '@aenv/storage';
import { UsageError } from '../cli-error.js';

const HELP = `Usage: aenv debug layer inspect <digest> [options]

Shows a layer of the node's blob store: header, data and zero extents, chunks.

Options:
  --json              print the inspection as JSON
  --max-extents N     list at most N extents (default: 32)
  --config FILE       JSON config file (default: $AENV_CONFIG, else $AENV_HOME/config.json if present)
  --home DIR          state directory (default: $AENV_HOME, else /var/lib/aenv)
  -h, --help          show this help

The blob store is the node's: storage.blobStore and its settings (AENV_STORAGE_*).
`;

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        'max-extents': { type: 'string' },
        config: { type: 'string' },
        home: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Runs `aenv debug layer inspect`; resolves with the exit status. */
export async function layerInspectCommand(
  argv: string[],
  write: (s: string) => void = (s) => void process.stdout.write(s),
): Promise<number> {
  const { values, positionals } = parse(argv);
  if (values.help === true) {
    write(HELP);
    return 0;
  }
  const [digest, ...extra] = positionals;
  if (digest === undefined || extra.length > 0) {
    throw new UsageError('expected exactly one layer digest');
  }
  if (!isDigest(digest))
    throw new UsageError(`${JSON.stringify(digest)} is not a digest (sha256:<64 hex>)`);
  const maxExtents = values['max-extents'] === undefined ? 32 : Number(values['max-extents']);
  if (!Number.isSafeInteger(maxExtents) || maxExtents < 0) {
    throw new UsageError(`--max-extents must be a non-negative integer`);
  }
  const env: Record<string, string | undefined> = { ...process.env };
  if (values.home !== undefined) env.AENV_HOME = values.home;
  const config = loadNodeConfig(values.config, env);
  const store = createBlobStore(resolveStorageSettings(config.storage, config.home).store);
  try {
    const inspection = await inspectLayer(store, digest, { maxExtents });
    write(
      values.json === true
        ? `${JSON.stringify(inspection, null, 2)}\n`
        : formatLayerInspection(inspection),
    );
    return 0;
  } finally {
    await store.close?.();
  }
}
