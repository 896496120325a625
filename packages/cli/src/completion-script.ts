/**
 * Shell completion scripts generated from the command table: bash
 * (`complete -F`), and zsh through zsh's `bashcompinit`. They complete
 * command names, options, option choices, sandbox ids (`aenv ls -q`),
 * template and snapshot ids, and files.
 *
 * @module
 */
import { optionsOf, type CommandSpec } from './command-spec.js';

function words(list: readonly string[]): string {
  return [...new Set(list)].join(' ');
}

function caseArm(pattern: string, body: string): string {
  return `    ${pattern}) ${body} ;;\n`;
}

const OPERAND_WORDS: Readonly<Record<string, string>> = {
  sandbox: '$(aenv ls -q 2>/dev/null)',
  template: '$(aenv template ls -q 2>/dev/null)',
  snapshot: '$(aenv snapshot ls -q 2>/dev/null)',
};

function operandArm(spec: CommandSpec): string | undefined {
  const kind = spec.operands?.[0];
  if (kind === undefined) return undefined;
  if (kind === 'file') return caseArm(`'${spec.name}'`, 'COMPREPLY=( $(compgen -f -- "$cur") )');
  return caseArm(
    `'${spec.name}'`,
    `COMPREPLY=( $(compgen -W "${OPERAND_WORDS[kind] ?? ''}" -- "$cur") )`,
  );
}

/** The words that follow a family's name (`admin` → `tenant key`). */
function nextWords(specs: readonly CommandSpec[], family: string): string[] {
  return specs
    .filter((s) => s.name.startsWith(`${family} `))
    .map((s) => s.name.slice(family.length + 1).split(' ')[0] ?? '');
}

/** The bash completion script. */
export function bashCompletion(specs: readonly CommandSpec[]): string {
  const first = words(specs.map((s) => s.name.split(' ')[0] ?? ''));
  const families = [
    ...new Set(specs.filter((s) => s.name.includes(' ')).map((s) => s.name.split(' ')[0] ?? '')),
  ];
  let familyArms = '';
  for (const f of families) {
    const subs = words(nextWords(specs, f));
    familyArms += caseArm(
      f,
      `if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=( $(compgen -W "${subs}" -- "$cur") ); return; fi; key="$1 $2"`,
    );
  }
  // Three-word commands (`admin tenant ls`): their middle word is a family too.
  let subfamilyArms = '';
  const subfamilies = new Set(
    specs.filter((s) => s.name.split(' ').length === 3).map((s) => s.name.split(' ', 2).join(' ')),
  );
  for (const f of subfamilies) {
    subfamilyArms += caseArm(
      `'${f}'`,
      `if [ "$COMP_CWORD" -eq 3 ]; then COMPREPLY=( $(compgen -W "${words(nextWords(specs, f))}" -- "$cur") ); return; fi; key="$1 $2 $3"`,
    );
  }
  let choiceArms = '';
  let optionArms = '';
  let operandArms = '';
  for (const spec of specs) {
    const options = optionsOf(spec);
    for (const o of options) {
      if (o.choices !== undefined) {
        choiceArms += caseArm(
          `'${spec.name}:--${o.name}'`,
          `COMPREPLY=( $(compgen -W "${words(o.choices)}" -- "$cur") ); return`,
        );
      }
    }
    const names = options.flatMap((o) => [
      `--${o.name}`,
      ...(o.short === undefined ? [] : [`-${o.short}`]),
    ]);
    optionArms += caseArm(`'${spec.name}'`, `opts="${words(names)}"`);
    operandArms += operandArm(spec) ?? '';
  }
  return `# bash completion for aenv. Load it with:  source <(aenv completion bash)
_aenv() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" key opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${first}" -- "$cur") ); return
  fi
  set -- "\${COMP_WORDS[@]:1}"
  key="$1"
  case "$1" in
${familyArms}  esac
  case "$key" in
${subfamilyArms}  esac
  case "$key:$prev" in
${choiceArms}  esac
  if [[ "$cur" == -* ]]; then
    case "$key" in
${optionArms}    esac
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") ); return
  fi
  case "$key" in
${operandArms}  esac
}
complete -F _aenv aenv
`;
}

/** The zsh completion script (bash's, through bashcompinit). */
export function zshCompletion(specs: readonly CommandSpec[]): string {
  return `# zsh completion for aenv. Load it with:  source <(aenv completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(specs).replace(/^# bash completion.*\n/, '')}`;
}
