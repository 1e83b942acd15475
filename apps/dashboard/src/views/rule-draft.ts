/**
 * What a rule form edits: every field of every rule type as the inputs hold it (text), and the
 * conversions both ways. The hub validates; the draft only shapes the JSON it is sent, so the
 * hub's reasons (`ranges[1]`, `when[0].value`) land next to the inputs that hold those fields.
 */
import type {
  Pattern,
  PatternField,
  PatternMatch,
  RateLimitKey,
  Rule,
  RuleType,
} from '@rampart/rules-core/rules/model';

export interface PatternDraft {
  field: PatternField;
  name: string;
  match: PatternMatch;
  value: string;
  flags: string;
}

export interface RuleDraft {
  type: RuleType;
  id: string;
  mode: 'enforce' | 'monitor';
  action: 'allow' | 'block';
  note: string;
  /** `datetime-local` input value (local time), or empty. */
  expiresAt: string;
  /** One entry per line (ranges, lists) or separated by commas or spaces (countries, ASNs). */
  ranges: string;
  countries: string;
  asns: string;
  lists: string;
  when: PatternDraft[];
  methods: string;
  keyKind: RateLimitKey['kind'];
  keyHeader: string;
  windowSeconds: string;
  limit: string;
}

export const NEW_PATTERN: PatternDraft = {
  field: 'path',
  name: '',
  match: 'prefix',
  value: '',
  flags: '',
};

export function emptyDraft(type: RuleType = 'ip'): RuleDraft {
  return {
    type,
    id: '',
    mode: 'enforce',
    action: 'block',
    note: '',
    expiresAt: '',
    ranges: '',
    countries: '',
    asns: '',
    lists: '',
    when: type === 'pattern' ? [{ ...NEW_PATTERN }] : [],
    methods: '',
    keyKind: 'ip',
    keyHeader: '',
    windowSeconds: '60',
    limit: '100',
  };
}

const words = (text: string) => text.split(/[\s,]+/).filter((w) => w !== '');
const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
/** A number when the text is one; the text itself otherwise, so the hub names the field. */
const numeric = (text: string): number | string =>
  /^-?\d+$/.test(text.trim()) ? Number(text) : text;

function pattern(p: PatternDraft): Pattern {
  return {
    field: p.field,
    match: p.match,
    value: p.value,
    ...(p.name.trim() && (p.field === 'header' || p.field === 'query')
      ? { name: p.name.trim() }
      : {}),
    ...(p.match === 'regex' && p.flags ? { flags: p.flags } : {}),
  };
}

/** The JSON the hub is sent for `draft` (not validated here: the hub says what is wrong). */
export function ruleOf(draft: RuleDraft): Record<string, unknown> {
  const common: Record<string, unknown> = {
    id: draft.id.trim(),
    type: draft.type,
    mode: draft.mode,
    ...(draft.note.trim() ? { note: draft.note.trim() } : {}),
    ...(draft.expiresAt ? { expiresAt: new Date(draft.expiresAt).toISOString() } : {}),
  };
  switch (draft.type) {
    case 'ip':
      return { ...common, action: draft.action, ranges: lines(draft.ranges) };
    case 'country':
      return { ...common, action: draft.action, countries: words(draft.countries.toUpperCase()) };
    case 'asn':
      return {
        ...common,
        action: draft.action,
        asns: words(draft.asns.replace(/AS/gi, '')).map(numeric),
      };
    case 'reputation':
      return { ...common, action: draft.action, lists: words(draft.lists) };
    case 'pattern':
      return { ...common, action: draft.action, when: draft.when.map(pattern) };
    case 'rate_limit': {
      const key =
        draft.keyKind === 'header'
          ? { kind: 'header', name: draft.keyHeader.trim() }
          : { kind: draft.keyKind };
      const methods = words(draft.methods.toUpperCase());
      const ranges = lines(draft.ranges);
      return {
        ...common,
        when: draft.when.map(pattern),
        key,
        windowSeconds: numeric(draft.windowSeconds),
        limit: numeric(draft.limit),
        ...(methods.length > 0 ? { methods } : {}),
        ...(ranges.length > 0 ? { ranges } : {}),
      };
    }
  }
}

/** `2026-12-01T12:34:56Z` as a `datetime-local` value in the browser's zone. */
function localInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The draft that edits `rule`. */
export function draftOf(rule: Rule): RuleDraft {
  const draft: RuleDraft = {
    ...emptyDraft(rule.type),
    id: rule.id,
    mode: rule.mode,
    note: rule.note ?? '',
    expiresAt: localInput(rule.expiresAt),
  };
  const patterns = (when: readonly Pattern[]) =>
    when.map((p) => ({
      field: p.field,
      name: p.name ?? '',
      match: p.match,
      value: p.value,
      flags: p.flags ?? '',
    }));
  switch (rule.type) {
    case 'ip':
      return { ...draft, action: rule.action, ranges: rule.ranges.join('\n') };
    case 'country':
      return { ...draft, action: rule.action, countries: rule.countries.join(', ') };
    case 'asn':
      return { ...draft, action: rule.action, asns: rule.asns.join(', ') };
    case 'reputation':
      return { ...draft, action: rule.action, lists: rule.lists.join(', ') };
    case 'pattern':
      return { ...draft, action: rule.action, when: patterns(rule.when) };
    case 'rate_limit':
      return {
        ...draft,
        when: patterns(rule.when),
        methods: (rule.methods ?? []).join(', '),
        keyKind: rule.key.kind,
        keyHeader: rule.key.kind === 'header' ? rule.key.name : '',
        windowSeconds: String(rule.windowSeconds),
        limit: String(rule.limit),
        ranges: (rule.ranges ?? []).join('\n'),
      };
  }
}

/** What a rule matches, in a few words, for the rule list. */
export function summaryOf(rule: Rule): string {
  const few = (items: readonly (string | number)[]) =>
    items.length > 3
      ? `${items.slice(0, 3).join(', ')} and ${items.length - 3} more`
      : items.join(', ');
  const when = (patterns: readonly Pattern[]) =>
    patterns
      .map((p) => `${p.field}${p.name ? `[${p.name}]` : ''} ${p.match} "${p.value}"`)
      .join(' and ');
  switch (rule.type) {
    case 'ip':
      return few(rule.ranges);
    case 'country':
      return few(rule.countries);
    case 'asn':
      return few(rule.asns.map((a) => `AS${a}`));
    case 'reputation':
      return `listed in ${few(rule.lists)}`;
    case 'pattern':
      return when(rule.when);
    case 'rate_limit':
      return `${rule.limit} per ${rule.windowSeconds} s per ${rule.key.kind === 'header' ? `header ${rule.key.name}` : rule.key.kind}${rule.when.length ? ` where ${when(rule.when)}` : ''}`;
  }
}
