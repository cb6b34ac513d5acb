/**
 * A field where a property name is typed: suggests the project's names of its kind (a native `<datalist>`, no
 * widget code) and, once the names are known, flags a name none carries, with the closest known name as a one-click
 * fix and, where the page holds an analysis back for it, "Use anyway". The page says which names it holds for
 * (lib/property-definitions.ts `mustHold`); `PropertyScope` carries the project and the names confirmed.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useMemo, useState } from 'preact/hooks';
import { propertyWarning, refId, usePropertyDefinitions, usePropertyValues, type PropertyKind } from '../lib/property-definitions';

interface Scope {
  projectId: number;
  confirmed: ReadonlySet<string>;
  /** Present where an analysis waits for the names: accepts a name as typed. */
  confirm?(id: string): void;
}

const ScopeContext = createContext<Scope | null>(null);

export function PropertyScope(props: { projectId: number; confirmed?: ReadonlySet<string>; onConfirm?(id: string): void; children: ComponentChildren }) {
  const value = useMemo<Scope>(() => ({ projectId: props.projectId, confirmed: props.confirmed ?? new Set(), confirm: props.onConfirm }),
    [props.projectId, props.confirmed, props.onConfirm]);
  return <ScopeContext.Provider value={value}>{props.children}</ScopeContext.Provider>;
}

let lists = 0;
const useListId = (prefix: string) => useMemo(() => `${prefix}-${++lists}`, []);

export function PropertyInput(props: {
  kind: PropertyKind;
  value: string;
  onChange(value: string): void;
  label: string;
  placeholder?: string;
  /** Commit on every keystroke (filters) instead of on change (blur, Enter, a suggestion picked). */
  live?: boolean;
  /** Suggest numeric properties only (a math property); any known name is still accepted. */
  numeric?: boolean;
  /** The input's form name, where a form reads it. */
  name?: string;
}) {
  const scope = useContext(ScopeContext);
  const defs = usePropertyDefinitions(scope?.projectId ?? null, props.kind);
  const listId = useListId('property-names');
  // Live fields commit every keystroke; the others keep what is typed here until it is committed, since a
  // re-render of a controlled input would otherwise put the committed value back under the user's fingers.
  const [typing, setTyping] = useState(false);
  const [draft, setDraft] = useState<string | null>(null);
  const key = props.value.trim();
  const warning = scope ? propertyWarning({ key, kind: props.kind }, defs) : null;
  const id = refId({ key, kind: props.kind });
  const shown = warning && !typing && draft === null && !scope?.confirmed.has(id);
  const suggested = props.numeric ? defs.rows.filter((r) => r.property_type === 'Numeric' || r.property_type === null) : defs.rows;
  const commit = (v: string) => props.onChange(v.trim());
  return (
    <span class="property-input">
      <input list={listId} name={props.name} aria-label={props.label} placeholder={props.placeholder ?? 'property'} value={draft ?? props.value} autoComplete="off"
        aria-invalid={shown ? 'true' : undefined}
        onInput={(e) => {
          // Live: as typed (a trim here would eat the space being typed inside a name).
          if (props.live) {
            setTyping(true);
            props.onChange(e.currentTarget.value);
          } else setDraft(e.currentTarget.value);
        }}
        onChange={(e) => {
          if (props.live) return;
          commit(e.currentTarget.value);
          setDraft(null);
        }}
        onBlur={() => {
          // A suggestion picked from the list fires `input` only in some browsers: what is left typed counts.
          if (draft !== null && draft.trim() !== props.value) commit(draft);
          setTyping(false);
          setDraft(null);
        }} />
      {scope && <datalist id={listId}>{suggested.map((r) => <option key={r.name} value={r.name} />)}</datalist>}
      {shown && (
        <span class="property-warning" role="alert" data-testid="property-warning">
          {warning.text}
          {warning.closest !== null && (
            <> Did you mean <button type="button" class="link" data-testid="property-suggestion" onClick={() => commit(warning.closest!)}>{warning.closest}</button>?</>
          )}
          {scope?.confirm && <> <button type="button" class="link" data-testid="property-confirm" onClick={() => scope.confirm!(id)}>Use anyway</button></>}
        </span>
      )}
    </span>
  );
}

/** A property value field suggesting the values seen for its property (once the name is a known one). */
export function PropertyValueInput(props: { kind: PropertyKind; propertyKey: string; value: string; onInput(value: string): void; label: string }) {
  const scope = useContext(ScopeContext);
  const defs = usePropertyDefinitions(scope?.projectId ?? null, props.kind);
  const known = scope !== null && defs.names.has(props.propertyKey) ? props.propertyKey : null;
  const values = usePropertyValues(scope?.projectId ?? null, props.kind, known);
  const listId = useListId('property-values');
  return (
    <>
      <input list={listId} aria-label={props.label} placeholder="value" value={props.value} autoComplete="off" onInput={(e) => props.onInput(e.currentTarget.value)} />
      <datalist id={listId}>{values.map((v) => <option key={v} value={v} />)}</datalist>
    </>
  );
}
