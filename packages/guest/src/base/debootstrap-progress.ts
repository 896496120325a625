/**
 * Turns debootstrap's `I: <Phase> <package>...` lines into a rising
 * percentage. debootstrap does not announce how many packages it will
 * fetch, so the retrieval phase estimates (about 140 for a minbase with the
 * base image's extras, measured); later phases know the count from the
 * packages retrieved.
 *
 * @module
 */

/** Progress ranges per phase, in percent of the base-image stage. */
const PHASES: readonly { readonly word: string; readonly from: number; readonly to: number }[] = [
  { word: 'Retrieving', from: 2, to: 30 },
  { word: 'Validating', from: 2, to: 32 },
  { word: 'Extracting', from: 32, to: 42 },
  { word: 'Unpacking', from: 42, to: 66 },
  { word: 'Configuring', from: 66, to: 88 },
];
const ESTIMATED_PACKAGES = 140;

/** See the module comment. */
export class DebootstrapProgress {
  #retrieved = 0;
  #counts = new Map<string, number>();
  #percent = 0;

  /** Feeds one output line; returns an update when the line is a progress line. */
  line(line: string): { percent: number; message: string } | undefined {
    const m = /^I: (\w+) (.*)$/.exec(line);
    if (m === null) return undefined;
    const [, word, rest] = m as unknown as [string, string, string];
    const phase = PHASES.find((p) => p.word === word);
    if (phase !== undefined) {
      const n = (this.#counts.get(word) ?? 0) + 1;
      this.#counts.set(word, n);
      if (word === 'Retrieving') this.#retrieved = n;
      const total =
        word === 'Retrieving' || word === 'Validating'
          ? Math.max(ESTIMATED_PACKAGES, this.#retrieved)
          : this.#retrieved;
      const share = Math.min(1, n / Math.max(1, total));
      this.#percent = Math.max(this.#percent, phase.from + (phase.to - phase.from) * share);
    }
    return { percent: Math.floor(this.#percent), message: `debootstrap: ${word} ${rest}` };
  }
}
