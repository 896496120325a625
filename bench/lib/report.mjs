/**
 * What one benchmark measured, in the shape every results file uses:
 * rows (a name, a unit and the summary of its samples; a single figure is
 * a row of one sample), ratios between rows of the same run, notes, and
 * what could not run with the reason (never left out silently).
 *
 * A row keeps its samples (rounded) so a results file can be re-summarized
 * later; a ratio keeps the two figures it divides.
 *
 * @module
 */
import { ratio, round, summarize } from './stats.mjs';

/**
 * @typedef {object} Row
 * @property {string} section
 * @property {string} name
 * @property {string} unit
 * @property {number} n
 * @property {number} p50
 * @property {number} p90
 * @property {number} p99
 * @property {number} min
 * @property {number} max
 * @property {number} mean
 * @property {number[]} samples
 * @property {Record<string, unknown>} [extra]
 */

/** Rows, ratios, notes and skips of one benchmark run. */
export class BenchReport {
  /** @type {Row[]} */
  rows = [];
  /** @type {{ name: string, value: number, a: number, b: number, note?: string }[]} */
  ratios = [];
  /** @type {string[]} */
  notes = [];
  /** @type {{ what: string, why: string }[]} */
  skipped = [];
  #section = '';

  /**
   * @param {{ name: string, title: string, params: Record<string, unknown>, quick: boolean }} o
   */
  constructor(o) {
    this.name = o.name;
    this.title = o.title;
    this.params = o.params;
    this.quick = o.quick;
  }

  /** Rows added from now on belong to `name` (a heading in the table). */
  section(name) {
    this.#section = name;
  }

  /**
   * Adds a row summarizing `samples` (in `unit`).
   * @param {string} name
   * @param {readonly number[]} samples
   * @param {string} [unit]
   * @param {Record<string, unknown>} [extra] anything worth keeping beside the figures
   * @returns {Row}
   */
  samples(name, samples, unit = 'ms', extra) {
    const s = summarize(samples);
    /** @type {Row} */
    const row = {
      section: this.#section,
      name,
      unit,
      n: s.n,
      p50: round(s.p50),
      p90: round(s.p90),
      p99: round(s.p99),
      min: round(s.min),
      max: round(s.max),
      mean: round(s.mean),
      samples: samples.filter((x) => Number.isFinite(x)).map(round),
      ...(extra === undefined ? {} : { extra }),
    };
    this.rows.push(row);
    return row;
  }

  /** Adds a row of one figure. */
  value(name, value, unit, extra) {
    return this.samples(name, [value], unit, extra);
  }

  /**
   * Adds `a / b` as a ratio (NaN, printed as "-", when either is missing).
   * @param {string} name e.g. "create / bare restore (p50)"
   * @param {number} a
   * @param {number} b
   * @param {string} [note]
   */
  ratio(name, a, b, note) {
    this.ratios.push({
      name,
      value: round(ratio(a, b)),
      a: round(a),
      b: round(b),
      ...(note === undefined ? {} : { note }),
    });
  }

  /** A sentence the table prints under the figures. */
  note(text) {
    this.notes.push(text);
  }

  /** Records that `what` did not run, and why (printed and kept in the results). */
  skip(what, why) {
    this.skipped.push({ what, why });
  }

  /** The row named `name` (in any section), or undefined. */
  find(name) {
    return this.rows.find((r) => r.name === name);
  }

  /** The results-file form. */
  toJSON() {
    return {
      name: this.name,
      title: this.title,
      quick: this.quick,
      params: this.params,
      rows: this.rows,
      ratios: this.ratios,
      notes: this.notes,
      skipped: this.skipped,
    };
  }
}
