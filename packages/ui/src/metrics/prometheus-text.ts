/**
 * A reader of the Prometheus text exposition format (version 0.0.4), enough
 * for the dashboard's history: samples with their labels and values;
 * comments, `# HELP` and `# TYPE` lines are skipped, timestamps ignored.
 * Malformed lines are skipped rather than fatal (a scrape is advisory).
 *
 * @module
 */

/** One sample line. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

function parseValue(text: string): number | undefined {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const n = Number(text);
  return text === '' || Number.isNaN(n) ? undefined : n;
}

/** Reads `{a="x",b="y\"z"}` starting at `at` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  while (i < line.length && line[i] !== '}') {
    const eq = line.indexOf('=', i);
    if (eq < 0 || line[eq + 1] !== '"') throw new Error('bad label');
    const name = line.slice(i, eq).trim().replace(/^,/, '').trim();
    let value = '';
    let j = eq + 2;
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] === '\\') {
        const next = line[++j];
        value += next === 'n' ? '\n' : (next ?? '');
      } else {
        value += line[j];
      }
    }
    labels[name] = value;
    i = j + 1;
    while (line[i] === ',' || line[i] === ' ') i++;
  }
  if (line[i] !== '}') throw new Error('unclosed labels');
  return { labels, end: i + 1 };
}

/** Parses one sample line, or undefined when it is a comment, blank or malformed. */
export function parseSampleLine(raw: string): PromSample | undefined {
  const line = raw.trim();
  if (line === '' || line.startsWith('#')) return undefined;
  try {
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    if (brace >= 0 && (space < 0 || brace < space)) {
      const { labels, end } = parseLabels(line, brace);
      const value = parseValue(line.slice(end).trim().split(/\s+/)[0] ?? '');
      return value === undefined ? undefined : { name: line.slice(0, brace), labels, value };
    }
    const [name = '', valueText = ''] = line.split(/\s+/);
    const value = parseValue(valueText);
    return value === undefined ? undefined : { name, labels: {}, value };
  } catch {
    return undefined;
  }
}

/** Every sample of a text exposition. */
export function parsePrometheusText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const line of text.split('\n')) {
    const s = parseSampleLine(line);
    if (s !== undefined) out.push(s);
  }
  return out;
}
