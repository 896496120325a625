/**
 * The account database envd runs processes and owns files as: `passwd` and
 * `group` files in their classic colon-separated formats.
 *
 * The files are re-read whenever their size or mtime changes, so accounts a
 * command adds (`useradd`) are visible to the next request. The paths are
 * options so host tests can use a temporary database instead of the host's.
 *
 * @module
 */
import { statSync, readFileSync } from 'node:fs';

/** One account, with everything needed to run a process as it. */
export interface UserInfo {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
  readonly shell: string;
  /** Supplementary group ids (the primary gid first, no duplicates). */
  readonly groups: readonly number[];
}

interface GroupEntry {
  readonly name: string;
  readonly gid: number;
  readonly members: readonly string[];
}

interface Snapshot {
  readonly stamp: string;
  readonly users: ReadonlyMap<string, Omit<UserInfo, 'groups'>>;
  readonly groups: readonly GroupEntry[];
}

function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n');
  } catch {
    return [];
  }
}

function parsePasswd(path: string): Map<string, Omit<UserInfo, 'groups'>> {
  const users = new Map<string, Omit<UserInfo, 'groups'>>();
  for (const line of readLines(path)) {
    if (line.startsWith('#')) continue;
    const f = line.split(':');
    if (f.length < 7) continue;
    const [name = '', , uid = '', gid = '', , home = '', shell = ''] = f;
    if (name === '' || !/^\d+$/.test(uid) || !/^\d+$/.test(gid) || users.has(name)) continue;
    users.set(name, { name, uid: Number(uid), gid: Number(gid), home: home || '/', shell });
  }
  return users;
}

function parseGroup(path: string): GroupEntry[] {
  const groups: GroupEntry[] = [];
  for (const line of readLines(path)) {
    if (line.startsWith('#')) continue;
    const [name = '', , gid = '', members = ''] = line.split(':');
    if (name === '' || !/^\d+$/.test(gid)) continue;
    groups.push({ name, gid: Number(gid), members: members.split(',').filter(Boolean) });
  }
  return groups;
}

/** Looks accounts up in a passwd/group file pair. */
export class UserDb {
  readonly #passwdPath: string;
  readonly #groupPath: string;
  #snapshot: Snapshot | undefined;

  constructor(passwdPath = '/etc/passwd', groupPath = '/etc/group') {
    this.#passwdPath = passwdPath;
    this.#groupPath = groupPath;
  }

  #load(): Snapshot {
    const stamp = `${fileStamp(this.#passwdPath)}|${fileStamp(this.#groupPath)}`;
    if (this.#snapshot?.stamp !== stamp) {
      this.#snapshot = {
        stamp,
        users: parsePasswd(this.#passwdPath),
        groups: parseGroup(this.#groupPath),
      };
    }
    return this.#snapshot;
  }

  /** The account named `name`, or undefined. */
  byName(name: string): UserInfo | undefined {
    const snap = this.#load();
    const user = snap.users.get(name);
    if (user === undefined) return undefined;
    const groups = [user.gid];
    for (const g of snap.groups) {
      if (g.members.includes(name) && !groups.includes(g.gid)) groups.push(g.gid);
    }
    return { ...user, groups };
  }

  /** The name of the account with this uid, or undefined. */
  userName(uid: number): string | undefined {
    for (const user of this.#load().users.values()) if (user.uid === uid) return user.name;
    return undefined;
  }

  /** The name of the group with this gid, or undefined. */
  groupName(gid: number): string | undefined {
    return this.#load().groups.find((g) => g.gid === gid)?.name;
  }
}
