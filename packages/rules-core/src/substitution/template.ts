/**
 * Replacement templates (SUBSTITUTION-SPEC point 11), compiled once per rule.
 *
 * - `$&`, `${&}` and `$0`, `${0}`: the whole match.
 * - `$1`..`$N`, `${N}`: group N; digits are read greedily (`$12` is group 12). A group that did
 *   not participate or does not exist gives the empty string.
 * - `$$`: a literal `$`. A backslash is a literal backslash.
 * - A trailing lone `$`, nginx variables (`$name`, `${name}`) and any other `$x` are errors.
 *
 * The template text is encoded as UTF-8; the output is bytes.
 */

export class TemplateError extends Error {
  constructor(
    /** 0-based offset in the replacement text. */
    readonly position: number,
    readonly reason: string,
  ) {
    super(`replacement position ${position}: ${reason}`);
    this.name = 'TemplateError';
  }
}

/** A literal piece of output or a group reference (0 is the whole match). */
export type TemplatePart = Uint8Array | number;

export interface Template {
  readonly parts: readonly TemplatePart[];
  /** The whole output when the template has no references (the common, fast case). */
  readonly constant: Buffer | undefined;
  /** Whether a group other than 0 is referenced: only then are captures computed. */
  readonly usesGroups: boolean;
}

export function compileTemplate(text: string): Template {
  const parts: TemplatePart[] = [];
  let literal = '';
  const flush = () => {
    if (literal !== '') parts.push(Buffer.from(literal, 'utf8'));
    literal = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c !== '$') {
      literal += c;
      i++;
      continue;
    }
    const { ref, length } = reference(text, i);
    if (ref === '$') literal += '$';
    else {
      flush();
      parts.push(ref);
    }
    i += length;
  }
  flush();
  const usesGroups = parts.some((p) => typeof p === 'number' && p > 0);
  const constant = parts.every((p) => typeof p !== 'number')
    ? Buffer.concat(parts as Uint8Array[])
    : undefined;
  return { parts, constant, usesGroups };
}

/** The reference at `text[at] === '$'`: a group number, or '$' for `$$`. */
function reference(text: string, at: number): { ref: number | '$'; length: number } {
  const next = text[at + 1];
  if (next === undefined)
    throw new TemplateError(at, 'a trailing lone "$" (write "$$" for a dollar)');
  if (next === '$') return { ref: '$', length: 2 };
  if (next === '&') return { ref: 0, length: 2 };
  const digits = /^[0-9]+/.exec(text.slice(at + 1))?.[0];
  if (digits !== undefined) return { ref: groupNumber(digits, at), length: 1 + digits.length };
  if (next === '{') {
    const close = text.indexOf('}', at + 2);
    const inner = close === -1 ? undefined : text.slice(at + 2, close);
    if (inner === '&') return { ref: 0, length: 4 };
    if (inner !== undefined && /^[0-9]+$/.test(inner)) {
      return { ref: groupNumber(inner, at), length: inner.length + 3 };
    }
    if (inner !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(inner)) {
      throw new TemplateError(at, `nginx variables ("\${${inner}}") are not supported`);
    }
    throw new TemplateError(at, 'a "$" + "{" must enclose a group number or "&"');
  }
  if (/[A-Za-z_]/.test(next)) {
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(at + 1))?.[0] ?? next;
    throw new TemplateError(at, `nginx variables ("$${name}") are not supported`);
  }
  throw new TemplateError(
    at,
    `"$" must be followed by "$", "&", "{" or a group number, not "${next}"`,
  );
}

function groupNumber(digits: string, at: number): number {
  const n = Number(digits);
  // Any group past the pattern's count is empty; cap so absurd numbers stay plain integers.
  if (!Number.isSafeInteger(n)) throw new TemplateError(at, `group number ${digits} is too large`);
  return n;
}
