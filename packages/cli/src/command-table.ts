/**
 * Every command of `aenv`, in the order `aenv --help` lists them. Parsing,
 * help, completions and dispatch all read this table.
 *
 * @module
 */
import type { CommandSpec } from './command-spec.js';
import { keyCreateCommand, keyLsCommand, keyRevokeCommand } from './commands/admin-key.js';
import {
  tenantCreateCommand,
  tenantLsCommand,
  tenantRmCommand,
  tenantSetCommand,
  tenantShowCommand,
} from './commands/admin-tenant.js';
import { authLoginCommand, authLogoutCommand, authStatusCommand } from './commands/auth.js';
import { completionCommand } from './commands/completion.js';
import { connectCommand } from './commands/connect.js';
import { cpCommand } from './commands/cp.js';
import { execCommand } from './commands/exec.js';
import { inspectCommand, pauseCommand, resumeCommand, rmCommand } from './commands/lifecycle.js';
import { logsCommand } from './commands/logs.js';
import { lsCommand } from './commands/ls.js';
import { nodesCommand } from './commands/nodes.js';
import {
  debugSpec,
  devSpec,
  gatewaySpec,
  schedulerSpec,
  serverSpec,
} from './commands/raw-commands.js';
import {
  forkCommand,
  snapshotCreateCommand,
  snapshotLsCommand,
  snapshotRmCommand,
} from './commands/snapshot.js';
import { startCommand } from './commands/start.js';
import {
  buildCommand,
  pullCommand,
  templateLsCommand,
  templateRmCommand,
} from './commands/template.js';

/** The commands. */
export const COMMANDS: readonly CommandSpec[] = [
  startCommand,
  lsCommand,
  connectCommand,
  execCommand,
  cpCommand,
  logsCommand,
  inspectCommand,
  pauseCommand,
  resumeCommand,
  rmCommand,
  forkCommand,
  { ...snapshotCreateCommand, group: 'templates' },
  { ...snapshotLsCommand, group: 'templates' },
  { ...snapshotRmCommand, group: 'templates' },
  { ...pullCommand, group: 'templates' },
  { ...buildCommand, group: 'templates' },
  { ...templateLsCommand, group: 'templates' },
  { ...templateRmCommand, group: 'templates' },
  serverSpec,
  gatewaySpec,
  schedulerSpec,
  { ...nodesCommand, group: 'node' },
  { ...authLoginCommand, group: 'node' },
  { ...authStatusCommand, group: 'node' },
  { ...authLogoutCommand, group: 'node' },
  { ...tenantCreateCommand, group: 'node' },
  { ...tenantLsCommand, group: 'node' },
  { ...tenantShowCommand, group: 'node' },
  { ...tenantSetCommand, group: 'node' },
  { ...tenantRmCommand, group: 'node' },
  { ...keyCreateCommand, group: 'node' },
  { ...keyLsCommand, group: 'node' },
  { ...keyRevokeCommand, group: 'node' },
  { ...completionCommand, group: 'other' },
  devSpec,
  debugSpec,
];

/** What the first words of a command line name. */
export type Lookup =
  | { readonly kind: 'command'; readonly spec: CommandSpec; readonly rest: readonly string[] }
  | { readonly kind: 'group'; readonly word: string; readonly specs: readonly CommandSpec[] }
  | { readonly kind: 'unknown' };

/**
 * Finds the command named by the first one to three words (`admin tenant
 * ls`); else the family the first words start (`admin tenant`, `admin`).
 */
export function lookupCommand(argv: readonly string[]): Lookup {
  for (let n = Math.min(3, argv.length); n >= 1; n--) {
    const name = argv.slice(0, n).join(' ');
    const spec = COMMANDS.find((c) => c.name === name);
    if (spec !== undefined) return { kind: 'command', spec, rest: argv.slice(n) };
  }
  for (let n = Math.min(2, argv.length); n >= 1; n--) {
    const word = argv.slice(0, n).join(' ');
    const family = COMMANDS.filter((c) => c.name.startsWith(`${word} `));
    if (family.length > 0) return { kind: 'group', word, specs: family };
  }
  return { kind: 'unknown' };
}

/** The command names closest to a mistyped one (shared prefix or one edit away). */
export function suggestCommands(word: string): string[] {
  const names = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0] ?? ''))];
  return names.filter(
    (n) => (word.length >= 2 && n.startsWith(word.slice(0, 2))) || editDistance(n, word) <= 1,
  );
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}
