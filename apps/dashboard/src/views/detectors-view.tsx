/**
 * The site's detector settings, one fieldset per detector, with the hub's reason next to a
 * refused field (`failedLoginsPerIp.threshold`). The form follows the settings the hub returns,
 * so a detector the hub gains shows up here without a change.
 */
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api, attempt, sitePath } from '../api/hub-api.ts';
import { FieldError } from '../components/field-error.tsx';

type Value = boolean | number | string | null | readonly string[];
type Settings = Record<string, Record<string, Value>>;

const CHOICES: Record<string, readonly string[]> = {
  mode: ['enforce', 'monitor'],
  action: ['block', 'rate_limit'],
};

/** `failedLoginsPerIp` -> `failed logins per ip`. */
const words = (name: string) => name.replace(/([A-Z])/g, ' $1').toLowerCase();

export function DetectorsView({ siteId }: { siteId: string }) {
  const [settings, setSettings] = useState<Settings>();
  const [draft, setDraft] = useState<Record<string, Record<string, string | boolean>>>({});
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    api<Settings>('GET', sitePath(siteId, '/detection')).then(loaded);
  }, [siteId]);

  function loaded(next: Settings) {
    setSettings(next);
    setDraft(
      Object.fromEntries(
        Object.entries(next).map(([detector, fields]) => [
          detector,
          Object.fromEntries(
            Object.entries(fields).map(([name, value]) => [
              name,
              typeof value === 'boolean'
                ? value
                : Array.isArray(value)
                  ? value.join('\n')
                  : value === null
                    ? ''
                    : String(value),
            ]),
          ),
        ]),
      ),
    );
  }

  /** The draft as JSON, each field in the type the hub's settings have it. */
  function body(): Settings {
    const out: Settings = {};
    for (const [detector, fields] of Object.entries(draft)) {
      out[detector] = {};
      for (const [name, value] of Object.entries(fields)) {
        const original = settings?.[detector]?.[name];
        const text = String(value).trim();
        (out[detector] as Record<string, Value>)[name] =
          typeof value === 'boolean'
            ? value
            : Array.isArray(original)
              ? text
                  .split('\n')
                  .map((l) => l.trim())
                  .filter((l) => l !== '')
              : (typeof original === 'number' || original === null) && text === ''
                ? null
                : (typeof original === 'number' || original === null) &&
                    /^-?\d+(\.\d+)?$/.test(text)
                  ? Number(text)
                  : text;
      }
    }
    return out;
  }

  async function save(event: Event) {
    event.preventDefault();
    setSaved(false);
    await attempt(async () => {
      loaded(await api<Settings>('PUT', sitePath(siteId, '/detection'), body()));
      setSaved(true);
    }, setError);
  }

  if (!settings) return <p class="loading">Loading…</p>;
  return (
    <form class="detectors" onSubmit={save} aria-label="Detector settings">
      {Object.entries(draft).map(([detector, fields]) => (
        <fieldset key={detector} data-detector={detector}>
          <legend>{words(detector)}</legend>
          {Object.entries(fields).map(([name, value]) => {
            const id = `${detector}-${name}`;
            const path = `${detector}.${name}`;
            const update = (v: string | boolean) =>
              setDraft({ ...draft, [detector]: { ...fields, [name]: v } });
            const original = settings[detector]?.[name];
            return (
              <div class="field" key={name}>
                {typeof value === 'boolean' ? (
                  <label>
                    <input
                      type="checkbox"
                      id={id}
                      checked={value}
                      onChange={(e) => update(e.currentTarget.checked)}
                    />{' '}
                    {words(name)}
                  </label>
                ) : (
                  <>
                    <label for={id}>{words(name)}</label>
                    {CHOICES[name] ? (
                      <select id={id} value={value} onChange={(e) => update(e.currentTarget.value)}>
                        {CHOICES[name].map((c) => (
                          <option key={c} value={c}>
                            {c}
                          </option>
                        ))}
                      </select>
                    ) : Array.isArray(original) ? (
                      <textarea
                        id={id}
                        rows={3}
                        value={value}
                        onInput={(e) => update(e.currentTarget.value)}
                      />
                    ) : (
                      <input
                        id={id}
                        inputMode="decimal"
                        value={value}
                        aria-invalid={error?.reasonFor(path) !== undefined}
                        onInput={(e) => update(e.currentTarget.value)}
                      />
                    )}
                  </>
                )}
                <FieldError error={error} field={path} />
              </div>
            );
          })}
        </fieldset>
      ))}
      <FieldError error={error} fields={Object.keys(draft)} />
      {saved && (
        <p class="notice" role="status">
          Saved: the detectors use these settings for the next reports.
        </p>
      )}
      <div class="actions">
        <button type="submit">Save settings</button>
      </div>
    </form>
  );
}
