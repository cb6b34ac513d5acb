/** Small building blocks shared by the pages. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { valueText } from '../lib/format';

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren; testId?: string }) {
  return (
    <section class="page" data-testid={props.testId}>
      <header class="page-head">
        <h1>{props.title}</h1>
        <div class="actions">{props.actions}</div>
      </header>
      {props.children}
    </section>
  );
}

export function ErrorNote({ error }: { error: Error | null | undefined }) {
  if (!error) return null;
  return <p class="error" role="alert">{error.message}</p>;
}

export function Loading({ when }: { when: boolean }) {
  return when ? <p class="muted">Loading…</p> : null;
}

export function Modal(props: { title: string; onClose(): void; children: ComponentChildren }) {
  // Escape closes the dialog, as everywhere else.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && props.onClose();
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [props.onClose]);
  return (
    <div class="modal-backdrop" onClick={(e) => e.target === e.currentTarget && props.onClose()}>
      <div class="modal" role="dialog" aria-label={props.title}>
        <header>
          <h2>{props.title}</h2>
          <button class="ghost" onClick={props.onClose} aria-label="Close">×</button>
        </header>
        <div class="modal-body">{props.children}</div>
      </div>
    </div>
  );
}

export function Tabs(props: { tabs: readonly string[]; value: string; onChange(tab: string): void }) {
  return (
    <nav class="tabs">
      {props.tabs.map((t) => (
        <button key={t} class={t === props.value ? 'tab active' : 'tab'} onClick={() => props.onChange(t)}>{t}</button>
      ))}
    </nav>
  );
}

/** Properties as a key/value table; optional edit and delete of one property. */
export function PropertyTable(props: { properties: Record<string, unknown>; onSave?(key: string, value: unknown): Promise<void>; onDelete?(key: string): Promise<void> }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const keys = Object.keys(props.properties).sort();
  if (keys.length === 0) return <p class="muted">No properties.</p>;
  return (
    <table class="props">
      <tbody>
        {keys.map((k) => (
          <tr key={k}>
            <th>{k}</th>
            <td>
              {editing === k ? (
                <form class="inline" onSubmit={async (e) => {
                  e.preventDefault();
                  let value: unknown = draft;
                  try {
                    value = JSON.parse(draft);
                  } catch {
                    /* plain text */
                  }
                  await props.onSave!(k, value);
                  setEditing(null);
                }}>
                  <input value={draft} onInput={(e) => setDraft(e.currentTarget.value)} aria-label={`value of ${k}`} />
                  <button type="submit">Save</button>
                  <button type="button" class="ghost" onClick={() => setEditing(null)}>Cancel</button>
                </form>
              ) : (
                <code>{valueText(props.properties[k])}</code>
              )}
            </td>
            {(props.onSave || props.onDelete) && (
              <td class="row-actions">
                {props.onSave && editing !== k && <button class="ghost" onClick={() => { setEditing(k); setDraft(valueText(props.properties[k])); }}>Edit</button>}
                {props.onDelete && <button class="ghost danger" onClick={() => confirm(`Delete property ${k}?`) && props.onDelete!(k)}>Delete</button>}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Pager(props: { next: string | null | undefined; previous?: string | null; onGo(url: string): void }) {
  if (!props.next && !props.previous) return null;
  return (
    <div class="pager">
      <button disabled={!props.previous} onClick={() => props.previous && props.onGo(props.previous)}>Previous</button>
      <button disabled={!props.next} onClick={() => props.next && props.onGo(props.next)}>Next</button>
    </div>
  );
}

export function Field(props: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
      {props.hint && <small class="muted">{props.hint}</small>}
    </label>
  );
}
