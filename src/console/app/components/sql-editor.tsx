/**
 * A HogQL editor: CodeMirror 6 with SQL highlighting and completion of the project's tables, columns and property
 * names (lib/sql-insight.ts `completionSchema`). Mod-Enter runs the query. `errorAt` marks the position an error
 * message names. Loaded only with the SQL page's chunk.
 *
 * The editor owns its text: it reports every change (`onChange`) and takes a new text from the page only through
 * `replacement`, whose version changes each time (a history entry, a saved insight, a name from the schema). Pushing
 * the page's state back on every render raced the editor: a render with the text of a few keystrokes ago replaced
 * the newer text, which reported itself, and the two chased each other until the page hung.
 */
import { autocompletion, closeBrackets, completeFromList, ifNotIn } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { sql, StandardSQL } from '@codemirror/lang-sql';
import { Compartment, EditorState, StateEffect, StateField } from '@codemirror/state';
import { Decoration, EditorView, keymap, lineNumbers, type DecorationSet } from '@codemirror/view';
import { useEffect, useRef } from 'preact/hooks';
import { functionCompletions } from '../lib/sql-insight';

/** HogQL's function names, from the evaluator's own tables at build time (src/domain/hogql/function-names.ts). */
declare const __HOGQL_FUNCTIONS_JSON__: string;

/** Function names complete beside the tables, columns and keywords (not inside strings, quoted names or comments). */
const hogqlFunctions = StandardSQL.language.data.of({
  autocomplete: ifNotIn(['String', 'QuotedIdentifier', 'LineComment', 'BlockComment'], completeFromList(functionCompletions(JSON.parse(__HOGQL_FUNCTIONS_JSON__) as string[]).map((c) => ({
    ...c,
    apply: (view: EditorView, _c: unknown, from: number, to: number) => view.dispatch({
      changes: { from, to, insert: `${c.label}()` }, selection: { anchor: from + c.label.length + 1 },
    }),
  })))),
});

const setError = StateEffect.define<number | null>();
const errorMark = Decoration.mark({ class: 'cm-hogql-error' });
const errorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    for (const e of tr.effects) {
      if (!e.is(setError)) continue;
      if (e.value === null) return Decoration.none;
      const at = Math.min(Math.max(0, e.value), tr.state.doc.length);
      const to = Math.min(tr.state.doc.length, at + Math.max(1, tr.state.doc.lineAt(at).to - at));
      return to > at ? Decoration.set([errorMark.range(at, to)]) : Decoration.none;
    }
    return tr.docChanged ? Decoration.none : marks.map(tr.changes);
  },
  provide: (f) => EditorView.decorations.from(f),
});

export function SqlEditor(props: {
  initial: string;
  replacement: { text: string; version: number } | null;
  onChange(value: string): void;
  onRun(): void;
  schema: Record<string, unknown>;
  errorAt: number | null;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const language = useRef(new Compartment());
  const handlers = useRef(props);
  handlers.current = props;

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.initial,
        extensions: [
          lineNumbers(), history(), bracketMatching(), closeBrackets(), autocompletion(), hogqlFunctions,
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          language.current.of(sql({ dialect: StandardSQL, schema: props.schema as never, upperCaseKeywords: true })),
          keymap.of([{ key: 'Mod-Enter', run: () => (handlers.current.onRun(), true) }, ...defaultKeymap, ...historyKeymap]),
          errorField,
          EditorView.updateListener.of((u) => u.docChanged && handlers.current.onChange(u.state.doc.toString())),
          EditorView.contentAttributes.of({ 'aria-label': 'HogQL query' }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
  }, []);

  // The project's property names arrive after the editor: completion learns them without losing what is typed.
  // The page memoises the schema on the property names, so this runs when they arrive, not at each keystroke.
  useEffect(() => {
    view.current?.dispatch({ effects: language.current.reconfigure(sql({ dialect: StandardSQL, schema: props.schema as never, upperCaseKeywords: true })) });
  }, [props.schema]);

  // A query chosen from the history (or a saved insight, or a name from the schema) replaces the text, once.
  useEffect(() => {
    const v = view.current;
    const next = props.replacement;
    if (v && next && v.state.doc.toString() !== next.text) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: next.text } });
  }, [props.replacement?.version]);

  useEffect(() => {
    view.current?.dispatch({ effects: setError.of(props.errorAt) });
  }, [props.errorAt]);

  return <div class="sql-editor" ref={host} data-testid="sql-editor" />;
}
