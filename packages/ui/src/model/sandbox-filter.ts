/**
 * The sandbox list's filter: by state, template, metadata (`key=value`
 * pairs, comma-separated; every pair must match) and a substring of the
 * id. Pure code, shared by the page and its tests.
 *
 * @module
 */
import type { UiSandbox } from './ui-types.js';

/** What the operator typed. */
export interface SandboxFilter {
  /** `all`, `running` or `paused`. */
  readonly state: string;
  /** A template id or alias; `''` = any. */
  readonly template: string;
  /** `k=v, k2=v2`; `''` = any. */
  readonly metadata: string;
  /** A piece of the sandbox id; `''` = any. */
  readonly text: string;
}

/** The filter that shows everything. */
export const NO_FILTER: SandboxFilter = { state: 'all', template: '', metadata: '', text: '' };

/** Parses `k=v, k2=v2` (a bare `k` matches any value of `k`). */
export function parseMetadataFilter(text: string): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const part of text.split(',')) {
    const p = part.trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    if (eq < 0) out.set(p, undefined);
    else out.set(p.slice(0, eq).trim(), p.slice(eq + 1).trim());
  }
  return out;
}

/** The sandboxes the filter lets through, in their order. */
export function filterSandboxes(list: readonly UiSandbox[], f: SandboxFilter): UiSandbox[] {
  const meta = parseMetadataFilter(f.metadata);
  const text = f.text.trim().toLowerCase();
  return list.filter((s) => {
    if (f.state !== 'all' && s.state !== f.state) return false;
    if (f.template !== '' && s.templateID !== f.template && s.alias !== f.template) return false;
    if (text !== '' && !s.sandboxID.toLowerCase().includes(text)) return false;
    for (const [k, v] of meta) {
      const have = s.metadata[k];
      if (have === undefined || (v !== undefined && have !== v)) return false;
    }
    return true;
  });
}
