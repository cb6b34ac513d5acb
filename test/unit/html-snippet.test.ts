// PostHog's HTML snippet (src/domain/html-snippet.ts): the README shows the one the console generates, and the stub
// queues every public method of the posthog-js Quill serves, and nothing it would not replay.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { htmlSnippet } from '../../src/domain/html-snippet.js';
import { snippetMethods } from '../../src/console/snippet-methods.js';
import { ROOT } from '../helpers/quill.js';

t.test("the README's snippet is the generated one (the posthog-js methods Quill ships)", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /```html\n([\s\S]*?)\n```/.exec(readme);
  t.ok(block, 'an html block in the README');
  t.equal(block![1], htmlSnippet({ apiHost: 'http://127.0.0.1:8000', token: 'phc_…', methods: snippetMethods() }),
    'regenerate it with htmlSnippet() when posthog-js is upgraded');
  t.match(readme, /opt_out_useragent_filter: true/, 'the headless-browser note');
});

t.test('the stub queues calls, inserts <api_host>/static/array.js and records the init', async (t) => {
  const methods = snippetMethods();
  t.ok(methods.includes('capture') && methods.includes('identify') && methods.includes('getFeatureFlag'));
  t.notOk(methods.some((m) => m.startsWith('_') || m === 'constructor'), 'no private methods');
  const snippet = htmlSnippet({ apiHost: "https://quill.example'", token: 'phc_abc', methods });
  const script = snippet.replace(/^<script>\n/, '').replace(/\n<\/script>$/, '');
  const inserted: { src: string; crossOrigin: string }[] = [];
  const first = { parentNode: { insertBefore: (el: { src: string; crossOrigin: string }) => inserted.push(el) } };
  // A page's global object: `window.posthog = …` makes the global `posthog` the snippet's init call uses.
  const window: Record<string, unknown> = { document: { createElement: () => ({}), getElementsByTagName: () => [first] } };
  window.window = window;
  runInNewContext(`${script}\nposthog.capture('queued', {a: 1})`, window);
  const stub = window.posthog as unknown[] & { _i: unknown[][]; __SV: number };
  t.same(inserted.map((s) => [s.src, s.crossOrigin]), [["https://quill.example'/static/array.js", 'anonymous']], 'array.js from the api_host (quotes escaped)');
  t.same(stub._i, [['phc_abc', { api_host: "https://quill.example'", person_profiles: 'identified_only' }, 'posthog']]);
  t.same([...stub], [['capture', 'queued', { a: 1 }]], 'calls made before array.js arrives are queued');
  t.equal(stub.__SV, 1);
});
