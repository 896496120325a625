/**
 * The stand-in's "guest" and its snapshot files (test code).
 *
 * There is no real guest: the stand-in keeps a small guest state (a boot
 * id, how often it was resumed from a snapshot, its command line) as if it
 * lived in the first page of guest RAM, and a boot marker in the second
 * page, written once at boot. A snapshot's memory file is a sparse file of
 * the machine's memory size holding those pages, so a restore that maps
 * the wrong memory file, or none, is visible on the console. The stand-in
 * tracks which pages were written since the last snapshot or load: a
 * `Full` memory file has both pages, a `Diff` one only the dirty ones (the
 * rest are holes), so merging a diff onto its base is observable. The
 * state file is JSON naming the devices (with the drive paths the VMM
 * opened, as Firecracker's does). Memory files are only ever opened
 * read-only when loading, as Firecracker maps them `MAP_PRIVATE`.
 *
 * @module
 */
import {
  closeSync,
  ftruncateSync,
  openSync,
  readSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from 'node:fs';

/** Size of the state page at the start of a memory file. */
export const PAGE = 4096;

/** What the guest "keeps in RAM". */
export interface GuestState {
  readonly standIn: 'guest-memory';
  readonly bootId: string;
  readonly resumes: number;
  readonly cmdline: string;
}

/** The stand-in's microVM state file. */
export interface StandInVmState {
  readonly standIn: 'fc-vmstate';
  readonly vmmVersion: string;
  readonly memSizeMib: number;
  readonly vcpuCount: number;
  readonly drives: readonly { drive_id: string; path_on_host: string; is_read_only: boolean }[];
  readonly nets: readonly { iface_id: string; host_dev_name: string; guest_mac?: string }[];
  readonly vsock: { guest_cid: number; uds_path: string } | null;
  readonly balloon: Record<string, unknown> | null;
  readonly entropy: boolean;
}

/** Writes a memory file holding `pages` (page index → text), sized to the machine (sparse). */
export function writeMemoryFile(
  path: string,
  memSizeMib: number,
  pages: ReadonlyMap<number, string>,
): void {
  const fd = openSync(path, 'w');
  try {
    for (const [index, text] of pages) {
      const page = Buffer.alloc(PAGE);
      page.write(text);
      writeSync(fd, page, 0, PAGE, index * PAGE);
    }
    ftruncateSync(fd, memSizeMib * 1024 * 1024);
  } finally {
    closeSync(fd);
  }
}

/** Reads page `index` of a memory file (opened read-only) as text. */
export function readMemoryPage(path: string, index: number): string {
  const fd = openSync(path, 'r');
  try {
    const page = Buffer.alloc(PAGE);
    readSync(fd, page, 0, PAGE, index * PAGE);
    return page.toString('utf8').replace(/\0+$/, '');
  } finally {
    closeSync(fd);
  }
}

/** The guest state in page 0 of a memory file. */
export function readGuestState(path: string): GuestState {
  const state = JSON.parse(readMemoryPage(path, 0)) as GuestState;
  if (state.standIn !== 'guest-memory') throw new Error('not a guest memory file');
  return state;
}

/** Writes the state file. */
export function writeStateFile(path: string, state: StandInVmState): void {
  writeFileSync(path, `${JSON.stringify(state)}\n`);
}

/** Reads the state file. */
export function readStateFile(path: string): StandInVmState {
  const state = JSON.parse(readFileSync(path, 'utf8')) as StandInVmState;
  if (state.standIn !== 'fc-vmstate') throw new Error('not a microVM state file');
  return state;
}

/** A fresh boot id. */
export function newBootId(): string {
  return Math.random().toString(16).slice(2, 14);
}
