// Help text, "did you mean" and bash completion, all rendered from the one
// table in help-table.ts. Colour (bold headings) only on a TTY and never when
// NO_COLOR is set (https://no-color.org).
import { COMMANDS, COMMON_OPTIONS, BY_NAME, CommandHelp, OptionHelp, topLevel } from './help-table';

export function colourOn(stream: NodeJS.WriteStream): boolean {
  const nc = process.env.NO_COLOR;
  return stream.isTTY === true && (nc === undefined || nc === '');
}

const bold = (s: string, on: boolean): string => (on ? `\x1b[1m${s}\x1b[22m` : s);

/** Levenshtein distance, for suggestions */
function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0];
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const t = d[j];
      d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = t;
    }
  }
  return d[b.length];
}

/** the closest of candidates to word, when close enough to be a slip of the keyboard */
export function closest(word: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const dd = c.startsWith(word) && word.length >= 3 ? 0.5 : distance(word, c);
    if (dd < bestD) {
      bestD = dd;
      best = c;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

function optionLabel(o: OptionHelp): string {
  return `${o.short ? `-${o.short}, ` : ''}--${o.name}${o.arg ? ` ${o.arg}` : ''}`;
}

function optionLines(opts: OptionHelp[]): string[] {
  const w = Math.min(34, Math.max(...opts.map((o) => optionLabel(o).length)));
  return opts.map((o) => {
    const label = optionLabel(o);
    const extra = [o.required ? 'required' : '', o.multiple ? 'repeatable' : '', o.default !== undefined ? `default: ${o.default}` : ''].filter(Boolean).join('; ');
    const text = extra ? `${o.help} (${extra})` : o.help;
    return label.length > w ? `  ${label}\n  ${''.padEnd(w)}  ${text}` : `  ${label.padEnd(w)}  ${text}`;
  });
}

/** the full help of one command ("run", "lease add") */
export function commandHelp(c: CommandHelp, colour = false): string {
  const h = (s: string) => bold(s, colour);
  const lines = [`${h('gensee ' + c.name)} - ${c.summary}`, '', h('Usage:'), `  gensee ${c.name} ${c.synopsis}`];
  if (c.about) lines.push('', ...wrap(c.about, 78).map((l) => l));
  lines.push('', h('Options:'), ...optionLines([...c.options, ...COMMON_OPTIONS]));
  lines.push('', h('Examples:'), ...c.examples.map((e) => `  ${e}`));
  const cw = Math.max(...c.exit.map((e) => e.code.length));
  lines.push('', h('Exit status:'), ...c.exit.map((e) => `  ${e.code.padEnd(cw)}  ${e.meaning}`));
  return lines.join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const w of text.split(/\s+/)) {
    if (line && line.length + 1 + w.length > width) {
      out.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) out.push(line);
  return out;
}

/** a command with subcommands ("lease"): its subcommands, one line each */
export function groupHelp(top: string, colour = false): string {
  const subs = COMMANDS.filter((c) => c.name === top || c.name.startsWith(top + ' '));
  const lines = [`${bold('Usage:', colour)}`, ...subs.map((c) => `  gensee ${c.name} ${c.synopsis}`), '', ...subs.map((c) => `  ${c.name.padEnd(18)}  ${c.summary}`)];
  lines.push('', `Run "gensee help ${top} SUBCOMMAND" or "gensee ${top} SUBCOMMAND --help" for its options.`);
  return lines.join('\n');
}

export function mainHelp(version: string, colour = false): string {
  const tops = topLevel();
  const lines = [`gensee ${version} - a boundary for a workload's outgoing network operations`, '', bold('Usage:', colour), '  gensee COMMAND [options]', '', bold('Commands:', colour)];
  for (const [top, subs] of tops) {
    const c = BY_NAME.get(top) ?? BY_NAME.get(`${top} ${subs[0]}`)!;
    const label = subs.length === 1 && subs[0] === '' ? top : `${top} ${subs.filter(Boolean).join('|')}`;
    lines.push(`  ${label.padEnd(24)}  ${subs.length === 1 || BY_NAME.has(top) ? c.summary : subs.map((s) => BY_NAME.get(`${top} ${s}`)!.summary.split(/[,:(]/)[0]).join('; ')}`);
  }
  lines.push('', bold('Global options:', colour), ...optionLines([...COMMON_OPTIONS, { name: 'version', short: 'V', help: 'print the version and exit 0' }]));
  lines.push('', 'Run "gensee help COMMAND" or "gensee COMMAND --help" for its options, defaults, examples and exit codes.');
  return lines.join('\n');
}

/**
 * Help for the words after "help" (or before --help): the command, its
 * subcommand when one is named. null: no such command.
 */
export function helpFor(words: string[], colour = false): string | null {
  const [top, sub] = words;
  if (sub !== undefined && BY_NAME.has(`${top} ${sub}`)) return commandHelp(BY_NAME.get(`${top} ${sub}`)!, colour);
  const subs = topLevel().get(top);
  if (!subs) return null;
  const own = BY_NAME.get(top);
  if (!own) return groupHelp(top, colour);
  const others = subs.filter(Boolean).map((s) => `"gensee help ${top} ${s}"`);
  return commandHelp(own, colour) + (others.length ? `\n\nSee also: ${others.join(', ')}.` : '');
}

/** " (did you mean X?)" or "" */
export function suggest(word: string, candidates: Iterable<string>, prefix = ''): string {
  const c = closest(word, candidates);
  return c ? `; did you mean "${prefix}${c}"?` : '';
}

export function commandNames(): string[] {
  return [...topLevel().keys()];
}

/** a bash completion script: commands, subcommands, and each one's options, from the table */
export function bashCompletion(): string {
  const tops = topLevel();
  const cases: string[] = [];
  for (const c of COMMANDS) {
    const opts = [...c.options, ...COMMON_OPTIONS].map((o) => `--${o.name}`).join(' ');
    cases.push(`    "${c.name}") opts="${opts}" ;;`);
  }
  const subCases = [...tops]
    .filter(([, subs]) => subs.some(Boolean))
    .map(([top, subs]) => `    ${top}) subs="${subs.filter(Boolean).join(' ')}" own=${subs.includes('') ? 1 : 0} ;;`);
  return `# bash completion for gensee (generated by "gensee completion bash" from its option table)
_gensee() {
  local cur prev words cword
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local top="\${COMP_WORDS[1]}" sub="" subs="" own=1 opts="" s
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${[...tops.keys()].join(' ')} --help --version" -- "$cur") )
    return
  fi
  case "$top" in
${subCases.join('\n')}
  esac
  if [ -n "$subs" ]; then
    if [ "$COMP_CWORD" -eq 2 ] && [ "$own" = 0 ]; then
      COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
      return
    fi
    for s in $subs; do
      if [ "$COMP_CWORD" -gt 2 ] && [ "\${COMP_WORDS[2]}" = "$s" ]; then sub=" $s"; fi
    done
  fi
  case "$top$sub" in
${cases.join('\n')}
  esac
  if [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then opts="$subs $opts"; fi
  case "$prev" in
    --policy|--json-out|--fault|--agent-events|--tools) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
    --state-dir|--policy-dir) COMPREPLY=( $(compgen -d -- "$cur") ); return ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -o default -F _gensee gensee
`;
}
