/**
 * The Debian mirror this host's apt uses, read from `/etc/apt/sources.list`
 * and `/etc/apt/sources.list.d/*.list|*.sources` (one-line and deb822
 * formats), so the base image is bootstrapped from the same mirror.
 *
 * @module
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Used when no source names the suite. */
export const FALLBACK_MIRROR = 'http://deb.debian.org/debian';

/** One apt source entry. */
interface Source {
  readonly uris: readonly string[];
  readonly suites: readonly string[];
  readonly components: readonly string[];
  readonly enabled: boolean;
}

function parseOneLine(text: string): Source[] {
  const out: Source[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    // deb [options] uri suite component...
    const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$/.exec(line);
    if (m === null) continue;
    out.push({
      uris: [m[1] as string],
      suites: [m[2] as string],
      components: (m[3] as string).split(/\s+/),
      enabled: true,
    });
  }
  return out;
}

function parseDeb822(text: string): Source[] {
  return text.split(/\n\s*\n/).flatMap((stanza) => {
    const f: Record<string, string> = {};
    for (const line of stanza.split('\n')) {
      const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
      if (m !== null) f[(m[1] as string).toLowerCase()] = (m[2] as string).trim();
    }
    if (!(f.types ?? '').split(/\s+/).includes('deb') || f.uris === undefined) return [];
    const list = (k: string): string[] => (f[k] ?? '').split(/\s+/).filter((s) => s !== '');
    return [
      {
        uris: list('uris'),
        suites: list('suites'),
        components: list('components'),
        enabled: f.enabled !== 'no',
      },
    ];
  });
}

/** Picks the mirror serving `suite` with component `main` (pure). */
export function pickMirror(
  files: readonly { name: string; text: string }[],
  suite: string,
): string | undefined {
  for (const file of files) {
    const sources = file.name.endsWith('.sources')
      ? parseDeb822(file.text)
      : parseOneLine(file.text);
    const hit = sources.find(
      (s) => s.enabled && s.suites.includes(suite) && s.components.includes('main'),
    );
    if (hit?.uris[0] !== undefined) return hit.uris[0].replace(/\/+$/, '');
  }
  return undefined;
}

/** The host's mirror for `suite`, or {@link FALLBACK_MIRROR}. */
export async function hostMirror(suite: string, etcApt = '/etc/apt'): Promise<string> {
  const files: { name: string; text: string }[] = [];
  const main = await readFile(join(etcApt, 'sources.list'), 'utf8').catch(() => undefined);
  if (main !== undefined) files.push({ name: 'sources.list', text: main });
  const dir = join(etcApt, 'sources.list.d');
  for (const name of (await readdir(dir).catch(() => [] as string[])).sort()) {
    if (!name.endsWith('.list') && !name.endsWith('.sources')) continue;
    files.push({ name, text: await readFile(join(dir, name), 'utf8').catch(() => '') });
  }
  return pickMirror(files, suite) ?? FALLBACK_MIRROR;
}
