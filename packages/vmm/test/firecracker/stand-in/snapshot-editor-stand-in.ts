/**
 * A STAND-IN for Firecracker's `snapshot-editor` (test code), its one
 * command the driver uses: `edit-memory rebase --memory-path <base>
 * --diff-path <diff>` copies the diff's pages over the base. The real tool
 * finds the diff's data with SEEK_DATA; node has no lseek, so this one
 * copies every 4 KiB block of the diff that is not all zeros (the
 * Firecracker stand-in never dirties a page to zeros).
 *
 * @module
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';

function main(): void {
  const [group, command, ...rest] = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = rest.indexOf(name);
    return i === -1 ? undefined : rest[i + 1];
  };
  const memory = opt('--memory-path');
  const diff = opt('--diff-path');
  if (
    group !== 'edit-memory' ||
    command !== 'rebase' ||
    memory === undefined ||
    diff === undefined
  ) {
    process.stderr.write(
      'usage: snapshot-editor edit-memory rebase --memory-path <base> --diff-path <diff>\n',
    );
    process.exit(2);
  }
  const from = openSync(diff, 'r');
  const to = openSync(memory, 'r+');
  const block = Buffer.alloc(4096);
  const size = fstatSync(from).size;
  for (let off = 0; off < size; off += block.length) {
    const n = readSync(from, block, 0, block.length, off);
    if (block.subarray(0, n).some((b) => b !== 0)) writeSync(to, block, 0, n, off);
  }
  closeSync(from);
  closeSync(to);
}

main();
