/**
 * The methods the HTML snippet's stub queues (src/domain/html-snippet.ts), read from the posthog-js Quill serves:
 * as PostHog's app does, every function on the PostHog prototype but the constructor, `toString`, `push` and the
 * private `_…` ones. Read from the package's unminified CommonJS build (`lib/`), where private methods still carry
 * their `_` (in the minified bundles they are renamed and would be listed). Node only: the console build passes
 * the list into the bundle, and a test compares the README's snippet with it.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function snippetMethods(): string[] {
  const core = require('posthog-js/lib/src/posthog-core.js') as { PostHog?: { prototype: Record<string, unknown> } };
  const proto = core.PostHog?.prototype;
  if (!proto) throw new Error('posthog-js/lib/src/posthog-core.js exports no PostHog class: the snippet cannot list its methods');
  const methods = Object.getOwnPropertyNames(proto).filter(
    (key) => typeof proto[key] === 'function' && !key.startsWith('_') && !['constructor', 'toString', 'push'].includes(key),
  );
  for (const needed of ['init', 'capture', 'identify']) {
    if (!methods.includes(needed)) throw new Error(`posthog-js's PostHog prototype has no ${needed}(): the snippet's method list would be wrong`);
  }
  return methods;
}
