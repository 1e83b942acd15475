/**
 * A site's rules in evaluation order: what each matches, its mode (switchable in place) and what
 * it did, or in monitor mode would have done, in the last hour; create, edit, delete, import and
 * export. Every change is one new rules revision, built into a snapshot at once.
 */
import type { Rule } from '@rampart/rules-core/rules/model';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, attempt, queryString, sitePath } from '../api/hub-api.ts';
import type { RuleList, TopEntry } from '../api/hub-types.ts';
import { FieldError } from '../components/field-error.tsx';
import { draftOf, summaryOf } from './rule-draft.ts';
import { RuleForm } from './rule-form.tsx';

type Editing = { kind: 'none' } | { kind: 'new' } | { kind: 'edit'; rule: Rule };

export function RulesView({ siteId }: { siteId: string }) {
  const [list, setList] = useState<RuleList>();
  const [hits, setHits] = useState<ReadonlyMap<string, number>>(new Map());
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  const [error, setError] = useState<ApiError>();
  const [status, setStatus] = useState<string>();

  async function load() {
    const to = new Date();
    const window = { from: new Date(to.getTime() - 3_600_000).toISOString(), to: to.toISOString() };
    const [rules, top] = await Promise.all([
      api<RuleList>('GET', sitePath(siteId, '/rules')),
      api<TopEntry[]>(
        'GET',
        sitePath(
          siteId,
          `/traffic/top${queryString({ ...window, dimension: 'rule', limit: 100 })}`,
        ),
      ),
    ]);
    setList(rules);
    setHits(new Map(top.map((t) => [t.value, t.count])));
  }
  useEffect(() => void load(), [siteId]);

  const run = (what: () => Promise<unknown>, done: string) =>
    attempt(async () => {
      await what();
      setStatus(done);
      await load();
    }, setError);

  const rulePath = (id: string) => sitePath(siteId, `/rules/${encodeURIComponent(id)}`);

  async function save(rule: Record<string, unknown>) {
    if (editing.kind === 'edit') await api('PUT', rulePath(editing.rule.id), rule);
    else await api('POST', sitePath(siteId, '/rules'), rule);
    setEditing({ kind: 'none' });
    setStatus(`Rule ${String(rule.id)} saved; the snapshot is being built.`);
    await load();
  }

  const switchMode = (rule: Rule) =>
    run(
      () =>
        api('PUT', rulePath(rule.id), {
          ...rule,
          mode: rule.mode === 'enforce' ? 'monitor' : 'enforce',
        }),
      `Rule ${rule.id} now ${rule.mode === 'enforce' ? 'monitors' : 'enforces'}.`,
    );

  const remove = (rule: Rule) => {
    if (!window.confirm(`Delete rule ${rule.id}?`)) return;
    void run(() => api('DELETE', rulePath(rule.id)), `Rule ${rule.id} deleted.`);
  };

  async function exportRules() {
    const set = await api<unknown>('GET', sitePath(siteId, '/rules/export'));
    const link = document.createElement('a');
    link.href = URL.createObjectURL(
      new Blob([`${JSON.stringify(set, null, 2)}\n`], { type: 'application/json' }),
    );
    link.download = `${siteId}-rules.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000); // after the download has begun
  }

  async function importRules(event: Event) {
    const input = event.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    const form = input.form;
    if (!file || !form) return;
    const mode = (form.elements.namedItem('import-mode') as HTMLSelectElement).value;
    let body: unknown;
    try {
      body = JSON.parse(await file.text());
    } catch {
      setError(new ApiError(400, `${file.name} is not JSON`));
      return;
    }
    await run(
      () => api('POST', sitePath(siteId, `/rules/import${queryString({ mode })}`), body),
      `Imported ${file.name} (${mode}).`,
    );
    input.value = '';
  }

  if (!list) return <p class="loading">Loading…</p>;
  return (
    <div>
      <div class="toolbar">
        <button type="button" onClick={() => setEditing({ kind: 'new' })}>
          New rule
        </button>
        <button type="button" class="quiet" onClick={exportRules}>
          Export
        </button>
        <form class="import">
          <label for="import-file">Import</label>
          <select name="import-mode" aria-label="import mode">
            <option value="append">append to these rules</option>
            <option value="replace">replace these rules</option>
          </select>
          <input
            id="import-file"
            type="file"
            accept="application/json,.json"
            onChange={importRules}
          />
        </form>
        <span class="revision">revision {list.revision}</span>
      </div>
      {status && (
        <p class="notice" role="status">
          {status}
        </p>
      )}
      <FieldError error={error} />
      {editing.kind !== 'none' && (
        <RuleForm
          key={editing.kind === 'edit' ? editing.rule.id : 'new'}
          {...(editing.kind === 'edit'
            ? { initial: draftOf(editing.rule), editing: editing.rule.id }
            : {})}
          onSave={save}
          onCancel={() => setEditing({ kind: 'none' })}
        />
      )}
      {list.rules.length === 0 ? (
        <p class="empty">
          No rules: every request passes. Create one, or import a rule set exported from another
          site or written for <code>rampart snapshot build</code>.
        </p>
      ) : (
        <table class="rules">
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Type</th>
              <th scope="col">Action</th>
              <th scope="col">Matches</th>
              <th scope="col">Last hour</th>
              <th scope="col">Mode</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.rules.map((rule) => {
              const count = hits.get(rule.id) ?? 0;
              return (
                <tr key={rule.id} data-rule={rule.id}>
                  <td>
                    {rule.id}
                    {rule.note && <p class="note">{rule.note}</p>}
                    {rule.expiresAt && (
                      <p class="note">expires {new Date(rule.expiresAt).toLocaleString()}</p>
                    )}
                  </td>
                  <td>{rule.type}</td>
                  <td>{'action' in rule ? rule.action : 'rate limit'}</td>
                  <td class="summary">{summaryOf(rule)}</td>
                  <td class="hits">
                    {count === 0
                      ? 'no matches'
                      : rule.mode === 'monitor'
                        ? `would have acted on ${count.toLocaleString()}`
                        : `${count.toLocaleString()} matched`}
                  </td>
                  <td>
                    <button
                      type="button"
                      class="mode"
                      data-mode={rule.mode}
                      aria-label={`${rule.id}: ${rule.mode}; switch to ${rule.mode === 'enforce' ? 'monitor' : 'enforce'}`}
                      onClick={() => switchMode(rule)}
                    >
                      {rule.mode}
                    </button>
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="quiet"
                      onClick={() => setEditing({ kind: 'edit', rule })}
                    >
                      Edit
                    </button>
                    <button type="button" class="quiet danger" onClick={() => remove(rule)}>
                      Delete
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
