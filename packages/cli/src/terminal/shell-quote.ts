/**
 * Joins command words into one `bash -c` string that bash splits back into
 * the same words. A single word is passed as is, so it may use pipes,
 * variables and globs (`aenv exec ID -- 'ls $HOME | wc -l'`).
 *
 * @module
 */

/** Quotes one word for bash (single quotes; `'` as `'\''`). */
export function quoteWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The bash command line for `words`. */
export function commandLine(words: readonly string[]): string {
  if (words.length === 1) return words[0] ?? '';
  return words.map(quoteWord).join(' ');
}
