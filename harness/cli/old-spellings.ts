// kubectl's habits, kind to old command lines: a flag's old spelling (`--out`, `-o FILE`, `--json`) is
// rewritten to its new one before parsing, with one line on stderr naming the new spelling.
import type { Flag, Flags } from '../../lib/command.ts';
import { TermlabError } from '../../lib/errors.ts';

/** `-o`'s values in kubectl's sense: an output format, never a file's name. */
const FORMAT_WORDS = new Set(['json', 'yaml', 'wide', 'name', 'text']);
/** A value that is clearly a path, not a format: it has a `/` or a file's extension. */
const PATH_LIKE = /\/|\.(ya?ml|json|tar\.gz|tgz|csv|conf|config|kubeconfig|txt|md|html|xml)$/i;

export const isPathLike = (value: string) => PATH_LIKE.test(value);

interface Target {
  name: string;
  flag: Flag;
  /** A boolean's old spelling stands for this value of the new flag. */
  value?: string;
}

/** The command line with every old spelling in its new one; `warn` gets one line per old spelling used. */
export function newSpellings(flags: Flags, argv: string[], warn: (line: string) => void): string[] {
  const old = new Map<string, Target>();
  for (const [name, flag] of Object.entries(flags))
    for (const spelling of flag.deprecated ?? [])
      typeof spelling === 'string'
        ? old.set(spelling, { name, flag })
        : old.set(spelling.flag, { name, flag, value: spelling.value });
  const byShort = new Map<string, Flag>();
  for (const flag of Object.values(flags)) if (flag.short) byShort.set(`-${flag.short}`, flag);
  const warned = new Set<string>();
  const once = (spelling: string, line: string) => {
    if (!warned.has(spelling)) warn(line);
    warned.add(spelling);
  };
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const [long, inline] = token.startsWith('--') ? splitInline(token) : [null, undefined];
    if (long !== null) {
      const target = old.get(long);
      const flag = target?.flag ?? flags[long.slice(2)];
      if (target?.value !== undefined) {
        if (inline !== undefined) throw new TermlabError('USAGE', `${long} takes no value`);
        once(long, `${long} is deprecated: use -o ${target.value} (the old spelling still works in this release)`);
        out.push(`--${target.name}=${target.value}`);
        continue;
      }
      if (target)
        once(long, `${long} is deprecated: use --${target.name} (the old spelling still works in this release)`);
      out.push(target ? `--${target.name}${inline === undefined ? '' : `=${inline}`}` : token);
      // A string flag's value is taken as it is, even one that looks like a flag.
      if (flag?.type === 'string' && inline === undefined && i + 1 < argv.length) out.push(argv[++i]!);
      continue;
    }
    if (/^-[^-]/.test(token)) {
      const short = token.slice(0, 2);
      const target = old.get(short);
      const attached = token.length > 2 ? token.slice(2).replace(/^=/, '') : undefined;
      const value = attached ?? argv[i + 1];
      const current = byShort.get(short);
      // `-o` as the format it is now, unless its value is clearly the path it used to name.
      const oldMeaning = target && value !== undefined && (!current || isPathLike(value));
      if (target && value !== undefined && !current && FORMAT_WORDS.has(value) && !isPathLike(value))
        throw new TermlabError(
          'USAGE',
          `${short} ${value}: ${short} is an output format, as in kubectl, and this command has none; a file is --${target.name} FILE`,
        );
      if (oldMeaning) {
        once(
          short,
          `${short} ${target.flag.value ?? 'VALUE'} is deprecated: use --${target.name} ${target.flag.value ?? 'VALUE'} (${short} is an output format, as in kubectl; the old meaning still works in this release)`,
        );
        out.push(`--${target.name}`, value);
        if (attached === undefined) i++;
        continue;
      }
      if (target && value === undefined && !current) {
        out.push(`--${target.name}`);
        continue;
      }
      // kubectl's `-o=json`: parseArgs would take `=json` as the value.
      if (current?.type === 'string' && token[2] === '=') {
        out.push(short, token.slice(3));
        continue;
      }
      out.push(token);
      if (current?.type === 'string' && attached === undefined && i + 1 < argv.length) out.push(argv[++i]!);
      continue;
    }
    out.push(token);
  }
  return out;
}

function splitInline(token: string): [string, string | undefined] {
  const at = token.indexOf('=');
  return at === -1 ? [token, undefined] : [token.slice(0, at), token.slice(at + 1)];
}

/** A flag with choices given a value outside them: refused, naming them. */
export function checkChoices(flags: Flags, values: Record<string, unknown>): void {
  for (const [name, flag] of Object.entries(flags)) {
    const value = values[name];
    if (flag.choices && typeof value === 'string' && !flag.choices.includes(value))
      throw new TermlabError(
        'USAGE',
        `${flag.short ? `-${flag.short}/` : ''}--${name}: ${JSON.stringify(value)} is not one of ${flag.choices.join(', ')}`,
      );
  }
}
