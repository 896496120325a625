/**
 * `aenv completion bash|zsh`: prints the shell completion script.
 *
 * @module
 */
import { expectOperands } from '../args.js';
import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { COMMANDS } from '../command-table.js';
import { bashCompletion, zshCompletion } from '../completion-script.js';

/** The command. */
export const completionCommand: CommandSpec = {
  name: 'completion',
  summary: 'Print the shell completion script (bash or zsh).',
  usage: 'completion SHELL',
  remote: false,
  options: [],
  examples: [
    '# for this shell',
    'source <(aenv completion bash)',
    '# for every new bash',
    'aenv completion bash > /etc/bash_completion.d/aenv',
    "echo 'source <(aenv completion zsh)' >> ~/.zshrc",
  ],
  run(ctx, args) {
    const [shell] = expectOperands(args, ['SHELL']);
    if (shell === 'bash') ctx.stdout.write(bashCompletion(COMMANDS));
    else if (shell === 'zsh') ctx.stdout.write(zshCompletion(COMMANDS));
    else throw new UsageError(`no completion for '${shell ?? ''}': choose bash or zsh`);
    return Promise.resolve(0);
  },
};
