/**
 * How a `rampart` command describes itself, and the help text made from that description.
 *
 * Each command declares one `CommandSpec` next to its code. Its `options` are the table that
 * `parseArgs` gets (see `parse-options.ts`) and the table `--help` prints, so the usage cannot
 * list an option the command does not accept, or miss one it does.
 */
import { EXIT, EXIT_MEANINGS } from './cli-error.js';

/** One option: what `parseArgs` needs, plus what the help says about it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  readonly default?: string;
  /** How the help names a string option's value: FILE, N, name=value. */
  readonly value?: string;
  /** Absent or empty is a usage error ("--rules is required"). */
  readonly required?: boolean;
  /** One line: what the option does. */
  readonly description: string;
}

export type OptionTable = { readonly [name: string]: OptionSpec };

/** A positional argument; every declared one is required, in order. */
export interface ArgumentSpec {
  readonly name: string;
  readonly description: string;
}

export interface CommandSpec {
  /** The words after `rampart`: "snapshot build". */
  readonly name: string;
  /** What the command does, one sentence: the first line of its help and its line in lists. */
  readonly summary: string;
  readonly arguments?: readonly ArgumentSpec[];
  readonly options: OptionTable;
  /** What follows the options in the synopsis, such as redirections: "< BODY > RESULT". */
  readonly tail?: string;
  /** Paragraphs after the options: input formats, where output and errors go. */
  readonly notes?: readonly string[];
  /** Command lines a user can copy and adapt. */
  readonly examples: readonly string[];
}

/** The option every command accepts; `parseOptions` handles it, the help lists it. */
export const HELP_OPTION = {
  help: { type: 'boolean', short: 'h', description: 'print this help and exit' },
} as const satisfies OptionTable;

/** A command's options including `--help`: the table parsed and the table printed. */
export function optionTable<T extends OptionTable>(spec: { readonly options: T }) {
  return { ...spec.options, ...HELP_OPTION };
}

/** Help lines are wrapped to this many columns. */
export const USAGE_WIDTH = 100;

/**
 * The text `rampart COMMAND --help` prints: the summary, the synopsis, every option (from
 * `optionTable`) with its description, the arguments, the notes and the examples.
 */
export function formatCommandUsage(spec: CommandSpec): string {
  const options = Object.entries(optionTable(spec)).map(([name, option]) => ({
    term: optionTerm(name, option),
    text: `${option.description}${optionRemarks(option)}`,
  }));
  const args = (spec.arguments ?? []).map((a) => ({ term: a.name, text: a.description }));
  const sections = [
    wrap(`rampart ${spec.name}: ${spec.summary}`, USAGE_WIDTH),
    formatSynopsis(spec),
    ...(args.length > 0 ? [`arguments:\n${formatTerms(args)}`] : []),
    `options:\n${formatTerms(options)}`,
    ...(spec.notes ?? []).map((note) => wrap(note, USAGE_WIDTH)),
    `${spec.examples.length > 1 ? 'examples' : 'example'}:\n${spec.examples.map((e) => `  ${e}`).join('\n')}`,
  ];
  return `${sections.join('\n\n')}\n`;
}

/**
 * The "usage:" line of a command, wrapped with continuation lines under its first option:
 * required options bare, optional ones in brackets, repeatable ones followed by "...".
 */
export function formatSynopsis(spec: CommandSpec): string {
  const words = Object.entries(spec.options).map(([name, option]) => synopsisWord(name, option));
  for (const argument of spec.arguments ?? []) words.push(argument.name);
  if (spec.tail !== undefined) words.push(spec.tail);
  const lead = `usage: rampart ${spec.name} `;
  return fill(words, lead, ' '.repeat(lead.length), USAGE_WIDTH);
}

/**
 * The help of a command that only groups others (`rampart`, `rampart snapshot`): its summary
 * and one line per command it leads to, then `after` (more sections, already formatted).
 */
export function formatGroupUsage(
  group: { readonly name: string; readonly summary: string },
  commands: readonly CommandSpec[],
  after: readonly string[] = [],
): string {
  const prefix = group.name === '' ? 'rampart' : `rampart ${group.name}`;
  const list = commands.map((c) => ({ term: c.name, text: c.summary }));
  const sections = [
    wrap(`${prefix}: ${group.summary}`, USAGE_WIDTH),
    `usage: ${prefix} COMMAND [OPTION]...`,
    `commands:\n${formatTerms(list)}`,
    `Run "rampart COMMAND --help" for a command's options and an example.`,
    ...after,
  ];
  return `${sections.join('\n\n')}\n`;
}

/** The exit code table of `rampart --help`, from `EXIT` and `EXIT_MEANINGS`. */
export function formatExitCodes(): string {
  const rows = (Object.keys(EXIT) as (keyof typeof EXIT)[]).map((key) => ({
    term: String(EXIT[key]),
    text: EXIT_MEANINGS[key],
  }));
  return `exit codes:\n${formatTerms(rows)}`;
}

function optionTerm(name: string, option: OptionSpec): string {
  const flag = option.short === undefined ? `    --${name}` : `-${option.short}, --${name}`;
  return option.type === 'string' ? `${flag} ${option.value ?? 'VALUE'}` : flag;
}

function optionRemarks(option: OptionSpec): string {
  const remarks = [
    ...(option.required ? ['required'] : []),
    ...(option.default !== undefined ? [`default: ${option.default}`] : []),
    ...(option.multiple ? ['repeatable'] : []),
  ];
  return remarks.length === 0 ? '' : ` (${remarks.join('; ')})`;
}

function synopsisWord(name: string, option: OptionSpec): string {
  const word = option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`;
  const shown = option.required ? word : `[${word}]`;
  return option.multiple ? `${shown}...` : shown;
}

/** Two columns, the second wrapped under itself. */
function formatTerms(rows: readonly { term: string; text: string }[]): string {
  const width = Math.max(...rows.map((r) => r.term.length)) + 4;
  return rows
    .map((r) => {
      const lead = `  ${r.term}`.padEnd(width);
      return fill(r.text.split(' '), lead, ' '.repeat(width), USAGE_WIDTH);
    })
    .join('\n');
}

function wrap(text: string, width: number): string {
  return fill(text.split(' '), '', '', width);
}

/**
 * Words joined by spaces into lines of at most `width` columns (a longer word gets a line of
 * its own), the first line after `lead`, the others after `indent`.
 */
function fill(words: readonly string[], lead: string, indent: string, width: number): string {
  const lines: string[] = [];
  let line = lead;
  let empty = true;
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.join('\n');
}
