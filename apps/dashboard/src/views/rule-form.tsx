/**
 * Create or edit one rule: the fields its type has, each with the hub's reason next to it when
 * the hub refuses the rule (422 with `issues`).
 */
import {
  PATTERN_FIELDS,
  PATTERN_MATCHES,
  RATE_LIMIT_KEY_KINDS,
  RULE_TYPES,
} from '@rampart/rules-core/rules/fields';
import type { RuleType } from '@rampart/rules-core/rules/model';
import { useState } from 'preact/hooks';
import { type ApiError, attempt } from '../api/hub-api.ts';
import { FieldError } from '../components/field-error.tsx';
import {
  emptyDraft,
  NEW_PATTERN,
  type PatternDraft,
  type RuleDraft,
  ruleOf,
} from './rule-draft.ts';

const TYPE_LABELS: Record<RuleType, string> = {
  ip: 'Addresses and ranges',
  country: 'Countries',
  asn: 'Autonomous systems',
  reputation: 'Reputation lists',
  pattern: 'Request patterns',
  rate_limit: 'Rate limit',
};

/** Every field the form shows on its own (so the form's summary does not repeat their issues). */
const FIELDS = [
  'id',
  'type',
  'mode',
  'action',
  'note',
  'expiresAt',
  'ranges',
  'countries',
  'asns',
  'lists',
  'when',
  'methods',
  'key',
  'windowSeconds',
  'limit',
];

export function RuleForm({
  initial,
  editing,
  onSave,
  onCancel,
}: {
  initial?: RuleDraft;
  /** The id of the rule being edited (its id and type cannot change). */
  editing?: string;
  onSave: (rule: Record<string, unknown>) => Promise<void>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<RuleDraft>(initial ?? emptyDraft());
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<RuleDraft>) => setDraft({ ...draft, ...change });
  const id = (name: string) => `rule-${name}`;

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    await attempt(() => onSave(ruleOf(draft)), setError).finally(() => setBusy(false));
  }

  const text = (name: keyof RuleDraft, label: string, help?: string, multiline = false) => (
    <div class="field">
      <label for={id(name)}>{label}</label>
      {multiline ? (
        <textarea
          id={id(name)}
          rows={4}
          value={draft[name] as string}
          onInput={(e) => set({ [name]: e.currentTarget.value })}
          aria-invalid={error?.reasonFor(name) !== undefined}
        />
      ) : (
        <input
          id={id(name)}
          value={draft[name] as string}
          onInput={(e) => set({ [name]: e.currentTarget.value })}
          aria-invalid={error?.reasonFor(name) !== undefined}
        />
      )}
      {help && <p class="help">{help}</p>}
      <FieldError error={error} field={name} />
    </div>
  );

  const hasAction = draft.type !== 'rate_limit';
  const hasPatterns = draft.type === 'pattern' || draft.type === 'rate_limit';

  return (
    <form
      class="rule-form"
      onSubmit={submit}
      aria-label={editing ? `Edit rule ${editing}` : 'New rule'}
    >
      <div class="row">
        <div class="field">
          <label for={id('type')}>Type</label>
          <select
            id={id('type')}
            value={draft.type}
            disabled={editing !== undefined}
            onChange={(e) =>
              setDraft({
                ...emptyDraft(e.currentTarget.value as RuleType),
                id: draft.id,
                mode: draft.mode,
              })
            }
          >
            {RULE_TYPES.map((t) => (
              <option key={t} value={t}>
                {TYPE_LABELS[t]}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={id('id')}>Id</label>
          <input
            id={id('id')}
            value={draft.id}
            required
            disabled={editing !== undefined}
            placeholder="block-scanners"
            onInput={(e) => set({ id: e.currentTarget.value })}
            aria-invalid={error?.reasonFor('id') !== undefined}
          />
          <FieldError error={error} field="id" />
        </div>
        <div class="field">
          <label for={id('mode')}>Mode</label>
          <select
            id={id('mode')}
            value={draft.mode}
            onChange={(e) => set({ mode: e.currentTarget.value as RuleDraft['mode'] })}
          >
            <option value="enforce">enforce: acts</option>
            <option value="monitor">monitor: only reports</option>
          </select>
        </div>
        {hasAction && (
          <div class="field">
            <label for={id('action')}>Action</label>
            <select
              id={id('action')}
              value={draft.action}
              onChange={(e) => set({ action: e.currentTarget.value as RuleDraft['action'] })}
            >
              <option value="block">block</option>
              <option value="allow">allow</option>
            </select>
            <FieldError error={error} field="action" />
          </div>
        )}
      </div>
      {draft.type === 'ip' &&
        text(
          'ranges',
          'Addresses and ranges',
          'One per line: 203.0.113.7, 10.0.0.0/8, 2001:db8::/32 or 1.2.3.4-1.2.3.9.',
          true,
        )}
      {draft.type === 'country' &&
        text('countries', 'Countries', 'ISO 3166-1 alpha-2 codes, separated by commas: DE, FR.')}
      {draft.type === 'asn' && text('asns', 'AS numbers', 'Separated by commas: 64496, AS64497.')}
      {draft.type === 'reputation' &&
        text('lists', 'Lists', 'Names of uploaded reputation datasets, separated by commas.')}
      {hasPatterns && (
        <Patterns
          patterns={draft.when}
          error={error}
          onChange={(when) => set({ when })}
          optional={draft.type === 'rate_limit'}
        />
      )}
      {draft.type === 'rate_limit' && (
        <>
          <div class="row">
            {text('limit', 'Limit', 'Requests per window, fleet-wide (every instance together).')}
            {text('windowSeconds', 'Window (seconds)')}
            <div class="field">
              <label for={id('key')}>Counted per</label>
              <select
                id={id('key')}
                value={draft.keyKind}
                onChange={(e) => set({ keyKind: e.currentTarget.value as RuleDraft['keyKind'] })}
              >
                {RATE_LIMIT_KEY_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k === 'ip'
                      ? 'client address'
                      : k === 'ip_path'
                        ? 'address and path'
                        : 'header value'}
                  </option>
                ))}
              </select>
              <FieldError error={error} field="key" />
            </div>
            {draft.keyKind === 'header' && text('keyHeader', 'Header')}
          </div>
          {text(
            'methods',
            'Methods',
            'Only these count, separated by commas (POST, PUT); empty: all.',
          )}
          {text(
            'ranges',
            'Only from',
            'Addresses or ranges whose requests count, one per line; empty: all.',
            true,
          )}
        </>
      )}
      <div class="row">
        {text('note', 'Note')}
        <div class="field">
          <label for={id('expiresAt')}>Expires</label>
          <input
            id={id('expiresAt')}
            type="datetime-local"
            value={draft.expiresAt}
            onInput={(e) => set({ expiresAt: e.currentTarget.value })}
          />
          <FieldError error={error} field="expiresAt" />
        </div>
      </div>
      <FieldError error={error} fields={FIELDS} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {editing ? 'Save rule' : 'Create rule'}
        </button>
        <button type="button" class="quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Patterns({
  patterns,
  error,
  onChange,
  optional,
}: {
  patterns: PatternDraft[];
  error: ApiError | undefined;
  onChange: (patterns: PatternDraft[]) => void;
  optional: boolean;
}) {
  const update = (i: number, change: Partial<PatternDraft>) =>
    onChange(patterns.map((p, j) => (j === i ? { ...p, ...change } : p)));
  return (
    <fieldset>
      <legend>
        {optional
          ? 'Counts only requests where (all of these; none: every request)'
          : 'Matches requests where (all of these)'}
      </legend>
      {patterns.map((p, i) => (
        <div class="pattern" key={i}>
          <select
            aria-label={`condition ${i + 1} field`}
            value={p.field}
            onChange={(e) => update(i, { field: e.currentTarget.value as PatternDraft['field'] })}
          >
            {PATTERN_FIELDS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
          {(p.field === 'header' || p.field === 'query') && (
            <input
              aria-label={`condition ${i + 1} name`}
              placeholder="name"
              value={p.name}
              onInput={(e) => update(i, { name: e.currentTarget.value })}
            />
          )}
          <select
            aria-label={`condition ${i + 1} match`}
            value={p.match}
            onChange={(e) => update(i, { match: e.currentTarget.value as PatternDraft['match'] })}
          >
            {PATTERN_MATCHES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
          <input
            aria-label={`condition ${i + 1} value`}
            placeholder="value"
            value={p.value}
            onInput={(e) => update(i, { value: e.currentTarget.value })}
          />
          {p.match === 'regex' && (
            <input
              aria-label={`condition ${i + 1} flags`}
              class="flags"
              placeholder="flags"
              value={p.flags}
              onInput={(e) => update(i, { flags: e.currentTarget.value })}
            />
          )}
          <button
            type="button"
            class="quiet"
            aria-label={`remove condition ${i + 1}`}
            onClick={() => onChange(patterns.filter((_, j) => j !== i))}
          >
            ×
          </button>
          <FieldError error={error} field={`when[${i}]`} />
        </div>
      ))}
      <FieldError error={error} field="when" exact />
      <button
        type="button"
        class="quiet"
        onClick={() => onChange([...patterns, { ...NEW_PATTERN }])}
      >
        Add condition
      </button>
    </fieldset>
  );
}
